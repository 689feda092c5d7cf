import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { CHAT_PRICE_DIMENSION, STANDARD_SERVICE_TIERS, type CatalogueModel, type ModelInfo, type ModelModalities, type ModelPricing, type ModelRouting, type PriceUnit } from '@igw/contracts';
import { parse } from 'yaml';

/** The catalogue shipped with the project; CATALOGUE_FILE points elsewhere. */
export const DEFAULT_CATALOGUE_FILE = path.resolve(__dirname, '../../data/catalogue.yaml');

/** What a `type` may end with: `<family>/<endpoint-kind>`. */
export const ENDPOINT_KINDS = ['chat-completions', 'embeddings', 'image-generations', 'speech-to-text', 'text-to-speech', 'decisions'] as const;
/** Endpoint kinds without a token window: their entries carry neither `contextLength` nor `outputMax`. */
const WITHOUT_TOKEN_WINDOW: ReadonlySet<string> = new Set(['image-generations', 'speech-to-text', 'text-to-speech']);
/** Endpoint kinds that take tokens in but produce no text: `contextLength` only. */
const WITHOUT_OUTPUT_LIMIT: ReadonlySet<string> = new Set(['embeddings']);
export const MODALITIES = ['text', 'image', 'audio', 'video', 'embeddings'] as const;
export const MESSAGE_ROLES = ['system', 'user', 'assistant', 'tool', 'developer'] as const;

const ENTRY_FIELDS = ['id', 'aliases', 'type', 'info', 'tags', 'modalities', 'capabilities', 'pricing', 'routing', 'resolvesTo'];
const INFO_FIELDS = ['name', 'developer', 'description', 'releasedAt', 'contextLength', 'outputMax', 'cutoffAt', 'url', 'docsUrl', 'docsJson'];
const PRICING_FIELDS = ['kind', 'currency', 'units', 'dimensions', 'variants'];

/**
 * One checked entry. `resolvesTo` is spelled out here as well as in the contract so that
 * the loader keeps compiling whichever way the contract moves.
 */
export type CatalogueFileEntry = CatalogueModel & { resolvesTo?: string };

export class CatalogueFileError extends Error {}

type Fail = (field: string, problem: string) => never;

/** Reads and checks the catalogue definition; a bad entry stops start-up with its id and field. */
export async function readCatalogueFile(file: string): Promise<CatalogueFileEntry[]> {
  const text = await readFile(file, 'utf8');
  let document: unknown;
  try {
    document = parse(text);
  } catch (error) {
    throw new CatalogueFileError(`${file}: not valid YAML: ${error instanceof Error ? error.message : String(error)}`);
  }
  if (!isRecord(document) || !Array.isArray(document.models)) throw new CatalogueFileError(`${file}: expected a top-level "models" list`);
  const models = document.models.map((entry, index) => checkCatalogueEntry(entry, `${file}: models[${index}]`));
  checkNamesAreUnique(models, file);
  checkFloatingIds(models, file);
  return models;
}

/** Ids and aliases share one namespace, compared case-insensitively. */
function checkNamesAreUnique(models: CatalogueFileEntry[], file: string): void {
  const seen = new Map<string, string>();
  for (const model of models) {
    for (const name of [model.id, ...model.aliases]) {
      const key = name.toLowerCase();
      const owner = seen.get(key);
      if (owner) throw new CatalogueFileError(`${file}: name "${name}" of ${model.id} is already used by ${owner}`);
      seen.set(key, model.id);
    }
  }
}

/** A floating id names a pinned release of the same type; floating ids do not chain. */
function checkFloatingIds(models: CatalogueFileEntry[], file: string): void {
  const byId = new Map(models.map((model) => [model.id, model]));
  models.forEach((model, index) => {
    const target = model.resolvesTo;
    if (target === undefined) return;
    const fail = (problem: string): never => {
      throw new CatalogueFileError(`${file}: models[${index}] (${model.id}): field "resolvesTo" ${problem}`);
    };
    if (target === model.id) fail('must name another entry, not the entry itself');
    const pinned = byId.get(target);
    if (!pinned) return fail(`names "${target}", which is not the id of an entry in this file`);
    if (pinned.resolvesTo !== undefined) fail(`names "${target}", which itself resolves to "${pinned.resolvesTo}"; name a pinned release`);
    if (pinned.type !== model.type) fail(`names "${target}" of type ${pinned.type}, but this entry is of type ${model.type}`);
  });
}

/**
 * Checks one entry on its own (the file adds the checks across entries: unique names,
 * floating ids). `where` starts every message, e.g. `catalogue.yaml: models[3]`.
 */
export function checkCatalogueEntry(entry: unknown, where: string): CatalogueFileEntry {
  const label = isRecord(entry) && typeof entry.id === 'string' && entry.id ? ` (${entry.id})` : '';
  const fail: Fail = (field, problem) => {
    throw new CatalogueFileError(`${where}${label}: field "${field}" ${problem}`);
  };
  if (!isRecord(entry)) return fail('(entry)', 'must be an object');
  onlyKnownFields(entry, ENTRY_FIELDS, '', fail);

  const id = checkName(entry.id, 'id', fail);
  const aliases = checkList(entry.aliases, 'aliases', fail, (alias, field) => checkName(alias, field, fail));
  const type = checkType(entry.type, fail);
  const kind = type.slice(type.indexOf('/') + 1);
  const info = checkInfo(entry.info, kind, fail);
  const tags = checkList(entry.tags, 'tags', fail, (tag, field) => checkName(tag, field, fail));
  const modalities = entry.modalities === undefined ? undefined : checkModalities(entry.modalities, fail);
  const capabilities =
    entry.capabilities === undefined
      ? undefined
      : checkList(entry.capabilities, 'capabilities', fail, (capability, field) => checkName(capability, field, fail));
  const pricing = entry.pricing === undefined ? undefined : checkPricing(entry.pricing, kind, fail);
  const routing = checkRouting(entry.routing, fail);
  const resolvesTo = entry.resolvesTo === undefined ? undefined : checkName(entry.resolvesTo, 'resolvesTo', fail);
  return {
    id,
    aliases,
    type,
    info,
    tags,
    ...(modalities && { modalities }),
    ...(capabilities && { capabilities }),
    ...(pricing && { pricing }),
    routing,
    ...(resolvesTo !== undefined && { resolvesTo }),
  };
}

function checkType(value: unknown, fail: Fail): string {
  const expected = `must look like <family>/<endpoint-kind>, the endpoint kind one of ${ENDPOINT_KINDS.join(', ')}`;
  if (typeof value !== 'string') return fail('type', expected);
  const match = /^([^/\s]+)\/([^/\s]+)$/.exec(value);
  if (!match || !(ENDPOINT_KINDS as readonly string[]).includes(match[2])) return fail('type', `${expected} (got "${value}")`);
  return value;
}

function checkInfo(value: unknown, kind: string, fail: Fail): ModelInfo {
  if (!isRecord(value)) return fail('info', 'must be an object with at least name, developer and description');
  onlyKnownFields(value, INFO_FIELDS, 'info.', fail);
  const info: ModelInfo = {
    name: checkText(value.name, 'info.name', fail),
    developer: checkText(value.developer, 'info.developer', fail),
    description: checkText(value.description, 'info.description', fail),
  };
  if (value.releasedAt !== undefined) info.releasedAt = checkDate(value.releasedAt, 'info.releasedAt', fail);
  if (value.contextLength !== undefined) {
    if (WITHOUT_TOKEN_WINDOW.has(kind)) fail('info.contextLength', `must be absent for ${kind} models, which have no token window`);
    info.contextLength = checkPositiveInteger(value.contextLength, 'info.contextLength', fail);
  }
  if (value.outputMax !== undefined) {
    if (WITHOUT_TOKEN_WINDOW.has(kind)) fail('info.outputMax', `must be absent for ${kind} models, which have no token window`);
    if (WITHOUT_OUTPUT_LIMIT.has(kind)) fail('info.outputMax', `must be absent for ${kind} models, which produce no text`);
    info.outputMax = checkPositiveInteger(value.outputMax, 'info.outputMax', fail);
    if (info.contextLength !== undefined && info.outputMax > info.contextLength) {
      fail('info.outputMax', `must not exceed info.contextLength (${info.outputMax} > ${info.contextLength})`);
    }
  }
  if (value.cutoffAt !== undefined) info.cutoffAt = checkDate(value.cutoffAt, 'info.cutoffAt', fail);
  for (const field of ['url', 'docsUrl', 'docsJson'] as const) {
    if (value[field] !== undefined) info[field] = checkLink(value[field], `info.${field}`, fail);
  }
  return info;
}

function checkModalities(value: unknown, fail: Fail): ModelModalities {
  if (!isRecord(value)) return fail('modalities', 'must be an object with input and output lists');
  onlyKnownFields(value, ['input', 'output'], 'modalities.', fail);
  const modality = (name: unknown, field: string): string => {
    if (typeof name !== 'string' || !(MODALITIES as readonly string[]).includes(name)) {
      return fail(field, `must be one of ${MODALITIES.join(', ')} (got ${JSON.stringify(name)})`);
    }
    return name;
  };
  return {
    input: checkList(value.input, 'modalities.input', fail, modality, { nonEmpty: true, unique: true }),
    output: checkList(value.output, 'modalities.output', fail, modality, { nonEmpty: true, unique: true }),
  };
}

function checkPricing(value: unknown, kind: string, fail: Fail): ModelPricing {
  if (!isRecord(value)) return fail('pricing', 'must be {kind: fixed, currency: USD, units: [...]}');
  onlyKnownFields(value, PRICING_FIELDS, 'pricing.', fail);
  if (value.kind !== 'fixed') fail('pricing.kind', `must be "fixed" (got ${JSON.stringify(value.kind)})`);
  if (value.currency !== 'USD') fail('pricing.currency', `must be "USD" (got ${JSON.stringify(value.currency)})`);
  const pricing: ModelPricing = { kind: 'fixed', currency: 'USD', units: checkUnits(value.units, 'pricing.units', fail) };
  if (value.dimensions !== undefined) {
    pricing.dimensions = checkList(value.dimensions, 'pricing.dimensions', fail, (name, field) => checkName(name, field, fail), {
      nonEmpty: true,
      unique: true,
    });
  }
  if (value.variants !== undefined) {
    const dimensions = pricing.dimensions;
    if (!dimensions) return fail('pricing.variants', 'need pricing.dimensions to say what they vary by');
    pricing.variants = checkList(value.variants, 'pricing.variants', fail, (variant, field) => {
      if (!isRecord(variant)) return fail(field, 'must be {dimensions: {...}, units: [...]}');
      onlyKnownFields(variant, ['dimensions', 'units'], `${field}.`, fail);
      if (!isRecord(variant.dimensions) || Object.keys(variant.dimensions).length === 0) {
        return fail(`${field}.dimensions`, 'must be an object mapping dimension names to values');
      }
      const values: Record<string, string> = {};
      for (const [name, dimensionValue] of Object.entries(variant.dimensions)) {
        if (!dimensions.includes(name)) fail(`${field}.dimensions.${name}`, `is not one of pricing.dimensions (${dimensions.join(', ')})`);
        values[name] = checkText(dimensionValue, `${field}.dimensions.${name}`, fail);
      }
      if (kind === 'chat-completions' && STANDARD_SERVICE_TIERS.includes(values[CHAT_PRICE_DIMENSION])) {
        fail(`${field}.dimensions.${CHAT_PRICE_DIMENSION}`, `must not be ${STANDARD_SERVICE_TIERS.join(' or ')}: the top-level units price those tiers`);
      }
      return { dimensions: values, units: checkUnits(variant.units, `${field}.units`, fail) };
    });
  }
  if (kind === 'chat-completions' && pricing.dimensions && (pricing.dimensions.length !== 1 || pricing.dimensions[0] !== CHAT_PRICE_DIMENSION)) {
    fail('pricing.dimensions', `must be [${CHAT_PRICE_DIMENSION}] for a chat model, whose prices vary by the request's service tier only`);
  }
  if (kind === 'chat-completions') {
    // A tier's list replaces the standard one: a unit it left out would be free at that tier.
    pricing.variants?.forEach((variant, index) => {
      const missing = pricing.units.find((unit) => !variant.units.some((priced) => priced.unit === unit.unit));
      if (missing) fail(`pricing.variants[${index}].units`, `must price every unit the top-level units price (no "${missing.unit}")`);
    });
  }
  return pricing;
}

/**
 * The dearest price a unit may list for its `per` units. Real prices are far below it (a
 * million output tokens or one image cost tens of dollars at most); a typo of a few orders of
 * magnitude would otherwise price one request past what a balance or a ledger row can hold.
 */
const MAX_PRICE_USD = 1_000;

function checkUnits(value: unknown, field: string, fail: Fail): PriceUnit[] {
  const units = checkList(
    value,
    field,
    fail,
    (unit, unitField): PriceUnit => {
      if (!isRecord(unit)) return fail(unitField, 'must be {unit, price, per}');
      onlyKnownFields(unit, ['unit', 'price', 'per', 'promptTokensAbove'], `${unitField}.`, fail);
      const name = checkName(unit.unit, `${unitField}.unit`, fail);
      if (typeof unit.price !== 'number' || !Number.isFinite(unit.price) || unit.price < 0 || unit.price > MAX_PRICE_USD) {
        fail(`${unitField}.price`, `must be a number of USD from 0 to ${MAX_PRICE_USD} (got ${JSON.stringify(unit.price)})`);
      }
      if (typeof unit.per !== 'number' || !Number.isInteger(unit.per) || unit.per <= 0) {
        fail(`${unitField}.per`, `must be a positive integer (got ${JSON.stringify(unit.per)})`);
      }
      const allowed = allowedPerFor(name);
      if (!allowed.values.includes(unit.per as number)) {
        fail(`${unitField}.per`, `must be ${allowed.values.join(' or ')} for ${name}, ${allowed.reason} (got ${unit.per as number})`);
      }
      const price: PriceUnit = { unit: name, price: unit.price as number, per: unit.per as number };
      if (unit.promptTokensAbove !== undefined) {
        const above = unit.promptTokensAbove;
        if (typeof above !== 'number' || !Number.isSafeInteger(above) || above < 1) {
          fail(`${unitField}.promptTokensAbove`, `must be a whole number of prompt tokens, 1 or more (got ${JSON.stringify(above)})`);
        }
        price.promptTokensAbove = above as number;
      }
      return price;
    },
    { nonEmpty: true },
  );
  checkPromptSizePrices(units, field, fail);
  return units;
}

/**
 * A unit is priced once, plus once per prompt-size threshold. Each threshold needs the unit's
 * base price below it, and a longer prompt never costs less per unit: a hold, priced at the
 * longest prompt a request can send, is then never below its bill.
 */
function checkPromptSizePrices(units: PriceUnit[], field: string, fail: Fail): void {
  const byUnit = new Map<string, Array<{ entry: PriceUnit; index: number }>>();
  units.forEach((entry, index) => {
    const entries = byUnit.get(entry.unit) ?? [];
    const above = entry.promptTokensAbove;
    if (entries.some((other) => other.entry.promptTokensAbove === above)) {
      fail(`${field}[${index}].unit`, `prices "${entry.unit}" a second time${above === undefined ? '' : ` above ${above} prompt tokens`}`);
    }
    byUnit.set(entry.unit, [...entries, { entry, index }]);
  });
  for (const [unit, entries] of byUnit) {
    const sorted = [...entries].sort((a, b) => (a.entry.promptTokensAbove ?? 0) - (b.entry.promptTokensAbove ?? 0));
    if (sorted[0].entry.promptTokensAbove !== undefined) {
      fail(`${field}[${sorted[0].index}].promptTokensAbove`, `needs an entry of "${unit}" without promptTokensAbove: its price for shorter prompts`);
    }
    for (let index = 1; index < sorted.length; index++) {
      const [shorter, longer] = [sorted[index - 1].entry, sorted[index].entry];
      if (longer.price / longer.per < shorter.price / shorter.per) {
        fail(`${field}[${sorted[index].index}].price`, `must not be below the price of "${unit}" for shorter prompts (a longer prompt never costs less per unit)`);
      }
    }
  }
}

/**
 * The spec's price reading rule: a price is the charge for `per` units, `per` being 1000000
 * or 1000 for token rates and 1 for per-second and per-megapixel rates. Characters (text to
 * speech) count as token-like, since providers publish them per million like tokens; call
 * counts (`*_calls`, e.g. web searches) are published per call or per 1000 calls. Every other
 * unit (seconds, images, megapixels, steps) is priced per single unit, so a price can never be
 * misread by a factor of 60 or 1000.
 */
export function allowedPerFor(unit: string): { values: readonly number[]; reason: string } {
  if (unit.endsWith('_tokens') || unit === 'characters') return { values: [1_000_000, 1_000], reason: 'a token-like rate (price per million or per thousand)' };
  if (unit.endsWith('_calls')) return { values: [1, 1_000], reason: 'a per-call rate (price per call or per thousand calls)' };
  return { values: [1], reason: 'which is priced per single unit (per second, image, megapixel or step)' };
}

function checkRouting(value: unknown, fail: Fail): ModelRouting {
  if (!isRecord(value)) return fail('routing.sources', 'must list at least one upstream source');
  onlyKnownFields(value, ['sources', 'refusedRoles', 'maxStreamSeconds', 'timeoutSeconds'], 'routing.', fail);
  if (!Array.isArray(value.sources) || value.sources.length === 0) return fail('routing.sources', 'must list at least one upstream source');
  const routing: ModelRouting = {
    sources: checkList(value.sources, 'routing.sources', fail, (source, field) => {
      if (!isRecord(source)) return fail(field, 'needs provider and model');
      onlyKnownFields(source, ['provider', 'model'], `${field}.`, fail);
      return { provider: checkName(source.provider, `${field}.provider`, fail), model: checkName(source.model, `${field}.model`, fail) };
    }),
  };
  if (value.refusedRoles !== undefined) {
    routing.refusedRoles = checkList(
      value.refusedRoles,
      'routing.refusedRoles',
      fail,
      (role, field) => {
        if (typeof role !== 'string' || !(MESSAGE_ROLES as readonly string[]).includes(role)) {
          return fail(field, `must be one of ${MESSAGE_ROLES.join(', ')} (got ${JSON.stringify(role)})`);
        }
        return role;
      },
      { unique: true },
    );
  }
  if (value.maxStreamSeconds !== undefined) {
    const seconds = value.maxStreamSeconds;
    if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 1 || seconds > MAX_STREAM_SECONDS) {
      return fail('routing.maxStreamSeconds', `must be a whole number of seconds from 1 to ${MAX_STREAM_SECONDS} (got ${JSON.stringify(seconds)})`);
    }
    routing.maxStreamSeconds = seconds;
  }
  if (value.timeoutSeconds !== undefined) {
    const seconds = value.timeoutSeconds;
    if (typeof seconds !== 'number' || !Number.isInteger(seconds) || seconds < 1 || seconds > MAX_TIMEOUT_SECONDS) {
      return fail('routing.timeoutSeconds', `must be a whole number of seconds from 1 to ${MAX_TIMEOUT_SECONDS} (got ${JSON.stringify(seconds)})`);
    }
    routing.timeoutSeconds = seconds;
  }
  return routing;
}

/** A day: longer than any answer a model streams, short enough that a stuck stream ends. */
const MAX_STREAM_SECONDS = 86_400;
/** An hour: longer than the slowest reasoning model thinks, short enough that a hung call ends while its client may still wait. */
const MAX_TIMEOUT_SECONDS = 3_600;

/** A list whose items each pass `item`; `field[index]` names a bad item. */
function checkList<T>(
  value: unknown,
  field: string,
  fail: Fail,
  item: (value: unknown, field: string) => T,
  options: { nonEmpty?: boolean; unique?: boolean } = {},
): T[] {
  if (!Array.isArray(value)) return fail(field, 'must be a list');
  if (options.nonEmpty && value.length === 0) fail(field, 'must not be empty');
  const items = value.map((entry, index) => item(entry, `${field}[${index}]`));
  if (options.unique) {
    const duplicate = items.find((entry, index) => items.indexOf(entry) !== index);
    if (duplicate !== undefined) fail(field, `lists ${JSON.stringify(duplicate)} twice`);
  }
  return items;
}

/** An identifier-like string: non-empty, no whitespace (ids, aliases, units, provider keys). */
function checkName(value: unknown, field: string, fail: Fail): string {
  if (typeof value !== 'string' || !value.trim()) return fail(field, 'must be a non-empty string');
  if (/\s/.test(value)) return fail(field, `must not contain whitespace (got "${value}")`);
  return value;
}

function checkText(value: unknown, field: string, fail: Fail): string {
  if (typeof value !== 'string' || !value.trim()) return fail(field, 'must be a non-empty string');
  return value;
}

function checkPositiveInteger(value: unknown, field: string, fail: Fail): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 1) {
    return fail(field, `must be a whole number of tokens, 1 or more (got ${JSON.stringify(value)})`);
  }
  return value;
}

/** A calendar date written YYYY-MM-DD (quote it in YAML). */
function checkDate(value: unknown, field: string, fail: Fail): string {
  const match = typeof value === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(value) : null;
  if (!match) return fail(field, `must be a date written YYYY-MM-DD (got ${JSON.stringify(value)})`);
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() !== year || date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) {
    return fail(field, `is not a calendar date (got "${value as string}")`);
  }
  return value as string;
}

function checkLink(value: unknown, field: string, fail: Fail): string {
  if (typeof value === 'string') {
    try {
      const url = new URL(value);
      if (url.protocol === 'https:' || url.protocol === 'http:') return value;
    } catch {
      // reported below
    }
  }
  return fail(field, `must be an http(s) URL (got ${JSON.stringify(value)})`);
}

function onlyKnownFields(value: Record<string, unknown>, known: readonly string[], prefix: string, fail: Fail): void {
  for (const key of Object.keys(value)) {
    if (!known.includes(key)) fail(`${prefix}${key}`, `is not a known field (known: ${known.join(', ')})`);
  }
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
