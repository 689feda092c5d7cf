import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationArguments, type ValidationError } from 'class-validator';
import { IsListField, MayBeOmitted, NestedList, oneOfIssues, wordUnknownFields, type ListRule } from '../validation/catalogue-validators';
import { Checked, composeDecorators, IsNumberField, IsOneOf, isRecord, IsStringField, NestedObject, numberIssues, stringIssues, type DtoClass, type StringRule } from '../validation/field-validators';
import { describeWrongType, describeWrongValue, quoteList, relativeIssueLine, validationIssues, type ValidationIssue } from '../validation/validation-issues';
import { CHAT_PRICE_DIMENSION, STANDARD_SERVICE_TIERS, type ModelInfo, type ModelModalities, type ModelPricing, type ModelRouting, type PriceUnit, type UpstreamSource } from './catalogue-model';

/**
 * The catalogue file and the admin API's catalogue entry, as DTOs: one class per object shape,
 * each rule that spans fields on the class that holds them all. Unknown fields are refused,
 * not dropped: in a hand-written file they are typos.
 */

/** What a `type` may end with: `<family>/<endpoint-kind>`. */
export const ENDPOINT_KINDS = ['chat-completions', 'embeddings', 'image-generations', 'speech-to-text', 'text-to-speech', 'decisions'] as const;
/** Endpoint kinds without a token window: their entries carry neither `contextLength` nor `outputMax`. */
const WITHOUT_TOKEN_WINDOW: ReadonlySet<string> = new Set(['image-generations', 'speech-to-text', 'text-to-speech']);
/** Endpoint kinds that take tokens in but produce no text: `contextLength` only. */
const WITHOUT_OUTPUT_LIMIT: ReadonlySet<string> = new Set(['embeddings']);
export const MODALITIES = ['text', 'image', 'audio', 'video', 'embeddings'] as const;
export const MESSAGE_ROLES = ['system', 'user', 'assistant', 'tool', 'developer'] as const;

const TYPE_PATTERN = new RegExp(`^[^/\\s]+/(${ENDPOINT_KINDS.join('|')})$`);

/** An identifier-like string (ids, aliases, tags, units, provider keys). */
const NAME: StringRule = { nonEmpty: true, pattern: /^\S+$/, patternText: 'a name without whitespace' };
const TEXT: StringRule = { nonEmpty: true, pattern: /\S/, patternText: 'a non-empty string' };
const TOKENS = { integer: true, min: 1 };
const nameIssues = (value: unknown) => stringIssues(value, NAME);

/**
 * The dearest price a unit may list for its `per` units. Real prices are far below it (a
 * million output tokens or one image cost tens of dollars at most); a typo of a few orders of
 * magnitude would otherwise price one request past what a balance or a ledger row can hold.
 */
const MAX_PRICE_USD = 1_000;
/** A day: longer than any answer a model streams, short enough that a stuck stream ends. */
const MAX_STREAM_SECONDS = 86_400;
/** An hour: longer than the slowest reasoning model thinks, short enough that a hung call ends while its client may still wait. */
const MAX_TIMEOUT_SECONDS = 3_600;

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

function perIssues(per: unknown, unit: unknown): string[] {
  const issues = numberIssues(per, { integer: true, min: 1 });
  if (issues.length > 0 || nameIssues(unit).length > 0) return issues;
  const allowed = allowedPerFor(unit as string);
  return allowed.values.includes(per as number) ? [] : [`Expected ${allowed.values.join(' or ')} for ${unit as string}, ${allowed.reason}. Received ${per as number}`];
}

export class PriceUnitDto {
  @IsStringField(NAME)
  unit!: string;

  @IsNumberField({ min: 0, max: MAX_PRICE_USD })
  price!: number;

  @Checked('pricePer', (value, args) => perIssues(value, (args.object as Partial<PriceUnit>).unit))
  per!: number;

  @MayBeOmitted()
  @IsNumberField({ integer: true, min: 1 })
  promptTokensAbove?: number;
}

function isPriceUnit(value: unknown): value is PriceUnit {
  return (
    isRecord(value) &&
    typeof value.unit === 'string' &&
    typeof value.price === 'number' &&
    typeof value.per === 'number' &&
    value.per > 0 &&
    (value.promptTokensAbove === undefined || typeof value.promptTokensAbove === 'number')
  );
}

/**
 * A unit is priced once, plus once per prompt-size threshold. Each threshold needs the unit's
 * base price below it, and a longer prompt never costs less per unit: a hold, priced at the
 * longest prompt a request can send, is then never below its bill.
 */
function promptSizePriceIssues(units: unknown): string[] {
  if (!Array.isArray(units)) return [];
  const issues: string[] = [];
  const byUnit = new Map<string, Array<{ entry: PriceUnit; index: number }>>();
  units.forEach((entry: unknown, index) => {
    if (!isPriceUnit(entry)) return;
    const entries = byUnit.get(entry.unit) ?? [];
    const above = entry.promptTokensAbove;
    if (entries.some((other) => other.entry.promptTokensAbove === above)) {
      const threshold = above === undefined ? '' : ` above ${above} prompt tokens`;
      issues.push(relativeIssueLine(`[${index}].unit`, `Expected one price per unit and prompt size. Received a second price of ${describeWrongValue(entry.unit)}${threshold}`));
      return;
    }
    byUnit.set(entry.unit, [...entries, { entry, index }]);
  });
  for (const [unit, entries] of byUnit) {
    const sorted = [...entries].sort((a, b) => (a.entry.promptTokensAbove ?? 0) - (b.entry.promptTokensAbove ?? 0));
    const lowest = sorted[0];
    if (lowest.entry.promptTokensAbove !== undefined) {
      issues.push(
        relativeIssueLine(
          `[${lowest.index}].promptTokensAbove`,
          `Expected beside an entry of ${describeWrongValue(unit)} without promptTokensAbove (its price for shorter prompts). Received ${lowest.entry.promptTokensAbove} with no such entry`,
        ),
      );
    }
    for (let index = 1; index < sorted.length; index++) {
      const [shorter, longer] = [sorted[index - 1].entry, sorted[index].entry];
      if (longer.price / longer.per < shorter.price / shorter.per) {
        issues.push(
          relativeIssueLine(
            `[${sorted[index].index}].price`,
            `Expected at least the price of ${describeWrongValue(unit)} for shorter prompts (a longer prompt never costs less per unit). Received ${longer.price}`,
          ),
        );
      }
    }
  }
  return issues;
}

/** A non-empty list of prices, each unit priced once per prompt size. */
function PriceList(): PropertyDecorator {
  return composeDecorators(
    NestedList(() => PriceUnitDto, { items: 'price units', nonEmpty: true, ofObjects: 'a price unit object {unit, price, per}' }),
    Checked('promptSizePrices', (value) => promptSizePriceIssues(value)),
  );
}

function variantDimensionIssues(value: unknown): string[] {
  if (!isRecord(value) || Object.keys(value).length === 0) {
    return [`Expected an object mapping dimension names to values. Received ${isRecord(value) ? 'an empty object' : describeWrongType(value)}`];
  }
  return Object.entries(value).flatMap(([name, dimensionValue]) => stringIssues(dimensionValue, TEXT).map((message) => relativeIssueLine(`.${name}`, message)));
}

export class PriceVariantDto {
  @Checked('variantDimensions', (value) => variantDimensionIssues(value))
  dimensions!: Record<string, string>;

  @PriceList()
  units!: PriceUnit[];
}

/** Variants say which of the declared dimensions they price. */
function variantsOnDimensionsIssues(variants: unknown, dimensions: unknown): string[] {
  if (!Array.isArray(variants)) return [];
  if (dimensions === undefined) return ['Expected variants only beside pricing.dimensions, which say what they vary by. Received no pricing.dimensions'];
  // Dimensions that are no list of names have their own message.
  if (!Array.isArray(dimensions) || !dimensions.every((name) => typeof name === 'string')) return [];
  return variants.flatMap((variant: unknown, index) =>
    isRecord(variant) && isRecord(variant.dimensions)
      ? Object.keys(variant.dimensions)
          .filter((name) => !dimensions.includes(name))
          .map((name) => relativeIssueLine(`[${index}].dimensions.${name}`, `Expected a dimension of pricing.dimensions (${quoteList(dimensions)}). Received ${describeWrongValue(name)}`))
      : [],
  );
}

export class ModelPricingDto {
  @IsOneOf(['fixed'])
  kind!: 'fixed';

  @IsOneOf(['USD'])
  currency!: 'USD';

  @PriceList()
  units!: PriceUnit[];

  @MayBeOmitted()
  @IsListField({ items: 'dimension names', nonEmpty: true, unique: true, item: nameIssues })
  dimensions?: string[];

  @MayBeOmitted()
  @NestedList(() => PriceVariantDto, { items: 'price variants', ofObjects: 'a price variant object {dimensions, units}' })
  @Checked('variantsOnDimensions', (value, args) => variantsOnDimensionsIssues(value, (args.object as Partial<ModelPricing>).dimensions))
  variants?: Array<{ dimensions: Record<string, string>; units: PriceUnit[] }>;
}

/** A chat model's prices vary by the request's service tier only, each tier pricing every unit. */
function chatPricingIssues(pricing: unknown, kind: string | undefined): string[] {
  if (kind !== 'chat-completions' || !isRecord(pricing)) return [];
  const issues: string[] = [];
  const { dimensions, units, variants } = pricing;
  if (Array.isArray(dimensions) && (dimensions.length !== 1 || dimensions[0] !== CHAT_PRICE_DIMENSION)) {
    issues.push(
      relativeIssueLine(
        '.dimensions',
        `Expected ['${CHAT_PRICE_DIMENSION}'] for a chat model, whose prices vary by the request's service tier only. Received [${dimensions.map(describeWrongValue).join(', ')}]`,
      ),
    );
  }
  if (!Array.isArray(variants)) return issues;
  variants.forEach((variant: unknown, index) => {
    if (!isRecord(variant)) return;
    const tier = isRecord(variant.dimensions) ? variant.dimensions[CHAT_PRICE_DIMENSION] : undefined;
    if (typeof tier === 'string' && STANDARD_SERVICE_TIERS.includes(tier)) {
      issues.push(
        relativeIssueLine(
          `.variants[${index}].dimensions.${CHAT_PRICE_DIMENSION}`,
          `Expected a tier other than ${quoteList(STANDARD_SERVICE_TIERS)} (the top-level units price those). Received ${describeWrongValue(tier)}`,
        ),
      );
    }
    // A tier's list replaces the standard one: a unit it left out would be free at that tier.
    if (!Array.isArray(units) || !Array.isArray(variant.units)) return;
    const priced = variant.units.filter(isPriceUnit).map((unit) => unit.unit);
    const missing = units.filter(isPriceUnit).find((unit) => !priced.includes(unit.unit));
    if (missing) {
      issues.push(
        relativeIssueLine(`.variants[${index}].units`, `Expected a price for every unit the top-level units price. Received none for ${describeWrongValue(missing.unit)}`),
      );
    }
  });
  return issues;
}

const MODALITY_LIST: ListRule = { items: 'modalities', nonEmpty: true, unique: true, item: (value) => oneOfIssues(MODALITIES, value) };

export class ModelModalitiesDto {
  @IsListField(MODALITY_LIST)
  input!: string[];

  @IsListField(MODALITY_LIST)
  output!: string[];
}

export class UpstreamSourceDto {
  @IsStringField(NAME)
  provider!: string;

  @IsStringField(NAME)
  model!: string;
}

export class ModelRoutingDto {
  @NestedList(() => UpstreamSourceDto, { items: 'upstream sources', nonEmpty: true, ofObjects: 'an upstream source object {provider, model}' })
  sources!: UpstreamSource[];

  @MayBeOmitted()
  @IsListField({ items: 'roles', unique: true, item: (value) => oneOfIssues(MESSAGE_ROLES, value) })
  refusedRoles?: string[];

  @MayBeOmitted()
  @IsNumberField({ integer: true, min: 1, max: MAX_STREAM_SECONDS })
  maxStreamSeconds?: number;

  @MayBeOmitted()
  @IsNumberField({ integer: true, min: 1, max: MAX_TIMEOUT_SECONDS })
  timeoutSeconds?: number;
}

/** A calendar date written YYYY-MM-DD (quote it in YAML). */
function calendarDateIssues(value: unknown): string[] {
  const match = typeof value === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(value) : null;
  if (!match) return [`Expected a date written YYYY-MM-DD. Received ${describeWrongType(value)}`];
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  if (date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day) return [];
  return [`Expected a calendar date. Received ${describeWrongValue(value)}`];
}

function httpUrlIssues(value: unknown): string[] {
  const url = typeof value === 'string' && URL.canParse(value) ? new URL(value) : undefined;
  return url && (url.protocol === 'https:' || url.protocol === 'http:') ? [] : [`Expected an http(s) URL. Received ${describeWrongType(value)}`];
}

const CalendarDate = () => Checked('calendarDate', calendarDateIssues);
const HttpUrl = () => Checked('httpUrl', httpUrlIssues);

export class ModelInfoDto {
  @IsStringField(TEXT)
  name!: string;

  @IsStringField(TEXT)
  developer!: string;

  @IsStringField(TEXT)
  description!: string;

  @MayBeOmitted()
  @CalendarDate()
  releasedAt?: string;

  @MayBeOmitted()
  @IsNumberField(TOKENS)
  contextLength?: number;

  @MayBeOmitted()
  @IsNumberField(TOKENS)
  @Checked('outputWithinContext', (value, args) => {
    const context = (args.object as Partial<ModelInfo>).contextLength;
    if (typeof value !== 'number' || typeof context !== 'number' || value <= context) return [];
    return [`Expected at most info.contextLength (${context}). Received ${value}`];
  })
  outputMax?: number;

  @MayBeOmitted()
  @CalendarDate()
  cutoffAt?: string;

  @MayBeOmitted()
  @HttpUrl()
  url?: string;

  @MayBeOmitted()
  @HttpUrl()
  docsUrl?: string;

  @MayBeOmitted()
  @HttpUrl()
  docsJson?: string;
}

/** The endpoint kind of an entry whose type is valid. */
function kindOf(entry: object): string | undefined {
  const type = (entry as { type?: unknown }).type;
  return typeof type === 'string' && TYPE_PATTERN.test(type) ? type.slice(type.indexOf('/') + 1) : undefined;
}

/** Which token limits an entry's info may state depends on its endpoint kind. */
function tokenWindowIssues(info: unknown, kind: string | undefined): string[] {
  if (!isRecord(info) || kind === undefined) return [];
  return (['contextLength', 'outputMax'] as const).flatMap((field) => {
    const value = info[field];
    if (value === undefined) return [];
    if (WITHOUT_TOKEN_WINDOW.has(kind)) return [relativeIssueLine(`.${field}`, `Expected no ${field} for ${kind} models, which have no token window. Received ${describeWrongValue(value)}`)];
    if (field === 'outputMax' && WITHOUT_OUTPUT_LIMIT.has(kind)) {
      return [relativeIssueLine(`.${field}`, `Expected no ${field} for ${kind} models, which produce no text. Received ${describeWrongValue(value)}`)];
    }
    return [];
  });
}

export class CatalogueEntryDto {
  @IsStringField(NAME)
  id!: string;

  @IsListField({ items: 'aliases', item: nameIssues })
  aliases!: string[];

  @IsStringField({ nonEmpty: true, pattern: TYPE_PATTERN, patternText: `<family>/<endpoint-kind>, the endpoint kind one of ${ENDPOINT_KINDS.join(', ')}` })
  type!: string;

  @NestedObject(() => ModelInfoDto, 'an object with at least name, developer and description')
  @Checked('tokenWindowOfKind', (value, args: ValidationArguments) => tokenWindowIssues(value, kindOf(args.object)))
  info!: ModelInfo;

  @IsListField({ items: 'tags', item: nameIssues })
  tags!: string[];

  @MayBeOmitted()
  @NestedObject(() => ModelModalitiesDto, 'an object with input and output lists')
  modalities?: ModelModalities;

  @MayBeOmitted()
  @IsListField({ items: 'capabilities', item: nameIssues })
  capabilities?: string[];

  @MayBeOmitted()
  @NestedObject(() => ModelPricingDto, 'a price list {kind: fixed, currency: USD, units: [...]}')
  @Checked('chatPricing', (value, args: ValidationArguments) => chatPricingIssues(value, kindOf(args.object)))
  pricing?: ModelPricing;

  @NestedObject(() => ModelRoutingDto, 'an object with at least one upstream source')
  routing!: ModelRouting;

  /** For a floating id: the pinned release it currently means (checked against the file's other entries). */
  @MayBeOmitted()
  @IsStringField(NAME)
  resolvesTo?: string;
}

type EntryLike = Partial<Record<'id' | 'type' | 'resolvesTo', unknown>> & { aliases?: unknown };

function entriesOf(models: unknown): Array<EntryLike | undefined> {
  return Array.isArray(models) ? models.map((model: unknown) => (isRecord(model) ? model : undefined)) : [];
}

/** Ids and aliases share one namespace, compared case-insensitively. */
function repeatedNameIssues(models: unknown): string[] {
  const owners = new Map<string, string>();
  return entriesOf(models).flatMap((model, index) => {
    if (typeof model?.id !== 'string') return [];
    const owner = model.id;
    const names: Array<[string, unknown]> = [['id', owner], ...(Array.isArray(model.aliases) ? model.aliases.map((alias: unknown, at): [string, unknown] => [`aliases[${at}]`, alias]) : [])];
    return names.flatMap(([field, name]) => {
      if (typeof name !== 'string') return [];
      const first = owners.get(name.toLowerCase());
      if (first === undefined) {
        owners.set(name.toLowerCase(), owner);
        return [];
      }
      return [relativeIssueLine(`[${index}].${field}`, `Expected a name used once in the file (ids and aliases, in any case). Received ${describeWrongValue(name)}, already a name of ${first}`)];
    });
  });
}

/** A floating id names a pinned release of the same type; floating ids do not chain. */
function floatingIdIssues(models: unknown): string[] {
  const entries = entriesOf(models);
  const byId = new Map(entries.flatMap((model) => (typeof model?.id === 'string' ? [[model.id, model] as const] : [])));
  return entries.flatMap((model, index) => {
    const target = model?.resolvesTo;
    if (model === undefined || typeof target !== 'string') return [];
    const pinned = byId.get(target);
    const problem =
      target === model.id
        ? `Expected the id of another entry (a pinned release). Received ${describeWrongValue(target)}, this entry's own id`
        : !pinned
          ? `Expected the id of an entry in this file. Received ${describeWrongValue(target)}`
          : pinned.resolvesTo !== undefined
            ? `Expected the id of a pinned release (floating ids do not chain). Received ${describeWrongValue(target)}, which itself resolves to ${describeWrongValue(pinned.resolvesTo)}`
            : pinned.type !== model.type
              ? `Expected an entry of this entry's type (${String(model.type)}). Received ${describeWrongValue(target)}, of type ${String(pinned.type)}`
              : undefined;
    return problem ? [relativeIssueLine(`[${index}].resolvesTo`, problem)] : [];
  });
}

export class CatalogueFileDto {
  @NestedList(() => CatalogueEntryDto, { items: 'model entries', ofObjects: 'a model entry object' })
  @Checked('uniqueNames', (value) => repeatedNameIssues(value))
  @Checked('floatingIds', (value) => floatingIdIssues(value))
  models!: CatalogueEntryDto[];
}

const VALIDATION = { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false, validationError: { target: true, value: true } };

function errorsOf(type: DtoClass, plain: unknown, expected: string): ValidationError[] {
  if (!isRecord(plain)) return [{ property: '', children: [], constraints: { isObject: `Expected ${expected}. Received ${describeWrongType(plain)}` } }];
  const errors = validateSync(plainToInstance(type, plain), VALIDATION);
  wordUnknownFields(errors);
  return errors;
}

/** What is wrong with a catalogue entry (the admin API's body), as class-validator's tree; empty when it is valid. */
export function catalogueEntryErrors(entry: unknown): ValidationError[] {
  return errorsOf(CatalogueEntryDto, entry, 'a catalogue entry object');
}

/**
 * Every issue of a parsed catalogue file (`{models: [...]}`), by path (`models[3].pricing.units[0].per`);
 * empty when it is valid. Only `models` is read: the file's other top-level keys are free, e.g.
 * `x-pricing: &pricing` holding a YAML anchor that entries share.
 */
export function catalogueFileIssues(document: unknown): ValidationIssue[] {
  const models = isRecord(document) ? { models: document.models } : document;
  return validationIssues(errorsOf(CatalogueFileDto, models, 'an object with a "models" list'));
}
