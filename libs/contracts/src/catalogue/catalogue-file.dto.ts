import { plainToInstance } from 'class-transformer';
import { validateSync, type ValidationArguments, type ValidationError } from 'class-validator';
import { IsListField, MayBeOmitted, NestedList, oneOfIssues, untransformableErrors, wordUnknownFields, type ListRule, Checked, composeDecorators, IsNumberField, IsOneOf, isRecord, IsStringField, NestedObject, numberIssues, stringIssues, type DtoClass, type StringRule, IsBooleanField, describeWrongType, describeWrongValue as shown, quoteList, relativeIssueLine as at, validationIssues, type ValidationIssue } from '@igw/validation';
import { CHAT_PRICE_DIMENSION, NATIVE_SOURCE_APIS, ROUTING_STRATEGIES, STANDARD_SERVICE_TIERS, type NativeSourceApi, type RoutingStrategy, type ModelInfo, type ModelModalities, type ModelPricing, type ModelResponseCache, type ModelRouting, type PriceUnit, type UpstreamSource } from './catalogue-model';

/**
 * The catalogue file and the admin API's catalogue entry, as DTOs: one class per object shape,
 * each rule that spans fields on the class that holds them all. Unknown fields are refused,
 * not dropped: in a hand-written file they are typos.
 */

/** What a `type` may end with: `<family>/<endpoint-kind>`. */
export const ENDPOINT_KINDS = ['chat-completions', 'embeddings', 'image-generations', 'speech-to-text', 'text-to-speech', 'decisions', 'moderations', 'completions'] as const;
/** Endpoint kinds without a token window: their entries carry neither `contextLength` nor `outputMax`. */
const WITHOUT_TOKEN_WINDOW: ReadonlySet<string> = new Set(['image-generations', 'speech-to-text', 'text-to-speech']);
/** Endpoint kinds that take tokens in but produce no text: `contextLength` only. */
const WITHOUT_OUTPUT_LIMIT: ReadonlySet<string> = new Set(['embeddings', 'moderations']);
export const MODALITIES = ['text', 'image', 'audio', 'video', 'embeddings'] as const;
export const MESSAGE_ROLES = ['system', 'user', 'assistant', 'tool', 'developer'] as const;
const TYPE_PATTERN = new RegExp(`^[^/\\s]+/(${ENDPOINT_KINDS.join('|')})$`);

/** An identifier-like string (ids, aliases, tags, units, provider keys). */
const NAME: StringRule = { nonEmpty: true, pattern: /^\S+$/, patternText: 'a name without whitespace' };
const TEXT: StringRule = { nonEmpty: true, pattern: /\S/, patternText: 'a non-empty string' };
const nameIssues = (value: unknown) => stringIssues(value, NAME);
const NAMES = (items: string, rule: Partial<ListRule> = {}): ListRule => ({ items, item: nameIssues, ...rule });

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
  @IsStringField(NAME) unit!: string;
  @IsNumberField({ min: 0, max: MAX_PRICE_USD }) price!: number;
  @Checked('pricePer', (value, args) => perIssues(value, (args.object as Partial<PriceUnit>).unit)) per!: number;
  @MayBeOmitted() @IsNumberField({ integer: true, min: 1 }) promptTokensAbove?: number;
}

function isPriceUnit(value: unknown): value is PriceUnit {
  const { unit, price, per, promptTokensAbove: above } = isRecord(value) ? value : {};
  return typeof unit === 'string' && typeof price === 'number' && typeof per === 'number' && per > 0 && (above === undefined || typeof above === 'number');
}

/**
 * A unit is priced once, plus once per prompt-size threshold. Each threshold needs the unit's
 * base price below it, and a longer prompt never costs less per unit: a hold, priced at the
 * longest prompt a request can send, is then never below its bill. Checked once every price is well formed.
 */
function promptSizePriceIssues(units: unknown): string[] {
  if (!Array.isArray(units) || !units.every(isPriceUnit)) return [];
  const byPromptSize = units.map((entry, index) => ({ entry, index })).sort((a, b) => (a.entry.promptTokensAbove ?? 0) - (b.entry.promptTokensAbove ?? 0));
  const shorterPrompts = new Map<string, PriceUnit>();
  return byPromptSize.flatMap(({ entry, index }) => {
    const { unit, promptTokensAbove: above } = entry;
    const shorter = shorterPrompts.get(unit);
    shorterPrompts.set(unit, entry);
    if (!shorter && above === undefined) return [];
    if (!shorter) return [at(`[${index}].promptTokensAbove`, `Expected beside an entry of ${shown(unit)} without promptTokensAbove (its price for shorter prompts). Received ${above} with no such entry`)];
    if (shorter.promptTokensAbove === above) {
      return [at(`[${index}].unit`, `Expected one price per unit and prompt size. Received a second price of ${shown(unit)}${above === undefined ? '' : ` above ${above} prompt tokens`}`)];
    }
    if (entry.price / entry.per >= shorter.price / shorter.per) return [];
    return [at(`[${index}].price`, `Expected at least the price of ${shown(unit)} for shorter prompts (a longer prompt never costs less per unit). Received ${entry.price}`)];
  });
}

/** A non-empty list of prices, each unit priced once per prompt size. */
const PriceList = () =>
  composeDecorators(
    NestedList(PriceUnitDto, { items: 'price units', nonEmpty: true, ofObjects: 'a price unit object {unit, price, per}' }),
    Checked('promptSizePrices', promptSizePriceIssues),
  );

function variantDimensionIssues(value: unknown): string[] {
  if (!isRecord(value) || Object.keys(value).length === 0) {
    return [`Expected an object mapping dimension names to values. Received ${isRecord(value) ? 'an empty object' : describeWrongType(value)}`];
  }
  return Object.entries(value).flatMap(([name, text]) => stringIssues(text, TEXT).map((message) => at(`.${name}`, message)));
}

export class PriceVariantDto {
  @Checked('variantDimensions', variantDimensionIssues) dimensions!: Record<string, string>;
  @PriceList() units!: PriceUnit[];
}

/** Variants say which of the declared dimensions they price (once the dimensions are a list of names). */
function variantsOnDimensionsIssues(variants: unknown, dimensions: unknown): string[] {
  if (!Array.isArray(variants)) return [];
  if (dimensions === undefined) return ['Expected variants only beside pricing.dimensions, which say what they vary by. Received no pricing.dimensions'];
  if (!Array.isArray(dimensions) || !dimensions.every((name) => typeof name === 'string')) return [];
  return variants.flatMap((variant: unknown, index) =>
    Object.keys(isRecord(variant) && isRecord(variant.dimensions) ? variant.dimensions : {})
      .filter((name) => !dimensions.includes(name))
      .map((name) => at(`[${index}].dimensions.${name}`, `Expected a dimension of pricing.dimensions (${quoteList(dimensions)}). Received ${shown(name)}`)),
  );
}

export class ModelPricingDto {
  @IsOneOf(['fixed']) kind!: 'fixed';
  @IsOneOf(['USD']) currency!: 'USD';
  @PriceList() units!: PriceUnit[];
  @MayBeOmitted() @IsListField(NAMES('dimension names', { nonEmpty: true, unique: true })) dimensions?: string[];

  @MayBeOmitted()
  @NestedList(PriceVariantDto, { items: 'price variants', ofObjects: 'a price variant object {dimensions, units}' })
  @Checked('variantsOnDimensions', (value, args) => variantsOnDimensionsIssues(value, (args.object as Partial<ModelPricing>).dimensions))
  variants?: Array<{ dimensions: Record<string, string>; units: PriceUnit[] }>;
}

/** A chat model's prices vary by the request's service tier only, each tier pricing every unit. */
function chatPricingIssues(pricing: unknown, kind: string | undefined): string[] {
  if (kind !== 'chat-completions' || !isRecord(pricing)) return [];
  const { dimensions, units, variants } = pricing;
  const issues: string[] = [];
  if (Array.isArray(dimensions) && (dimensions.length !== 1 || dimensions[0] !== CHAT_PRICE_DIMENSION)) {
    const received = `[${dimensions.map(shown).join(', ')}]`;
    issues.push(at('.dimensions', `Expected ['${CHAT_PRICE_DIMENSION}'] for a chat model, whose prices vary by the request's service tier only. Received ${received}`));
  }
  (Array.isArray(variants) ? variants : []).forEach((variant: unknown, index) => {
    const tier = isRecord(variant) && isRecord(variant.dimensions) ? variant.dimensions[CHAT_PRICE_DIMENSION] : undefined;
    if (typeof tier === 'string' && STANDARD_SERVICE_TIERS.includes(tier)) {
      const problem = `Expected a tier other than ${quoteList(STANDARD_SERVICE_TIERS)} (the top-level units price those). Received ${shown(tier)}`;
      issues.push(at(`.variants[${index}].dimensions.${CHAT_PRICE_DIMENSION}`, problem));
    }
    // A tier's list replaces the standard one: a unit it left out would be free at that tier.
    if (!Array.isArray(units) || !isRecord(variant) || !Array.isArray(variant.units)) return;
    const priced = new Set(variant.units.filter(isPriceUnit).map((unit) => unit.unit));
    const missing = units.filter(isPriceUnit).find((unit) => !priced.has(unit.unit));
    if (missing) issues.push(at(`.variants[${index}].units`, `Expected a price for every unit the top-level units price. Received none for ${shown(missing.unit)}`));
  });
  return issues;
}

const MODALITY_LIST: ListRule = { items: 'modalities', nonEmpty: true, unique: true, item: (value) => oneOfIssues(MODALITIES, value) };

export class ModelModalitiesDto {
  @IsListField(MODALITY_LIST) input!: string[];
  @IsListField(MODALITY_LIST) output!: string[];
}

export class UpstreamSourceDto {
  @IsStringField(NAME) provider!: string;
  @IsStringField(NAME) model!: string;
  @MayBeOmitted() @IsListField({ items: 'native APIs', unique: true, item: (value) => oneOfIssues(NATIVE_SOURCE_APIS, value) }) native?: NativeSourceApi[];
  /** The name called at the connection when not `model` (an Azure deployment). */
  @MayBeOmitted() @IsStringField(NAME) deployment?: string;
  @MayBeOmitted() @IsNumberField({ integer: true, min: 1, max: 1_000_000 }) weight?: number;
  @MayBeOmitted() @IsNumberField({ integer: true, min: 0, max: 100 }) tier?: number;
}

export class ModelRoutingDto {
  @NestedList(UpstreamSourceDto, { items: 'upstream sources', nonEmpty: true, ofObjects: 'an upstream source object {provider, model}' })
  sources!: UpstreamSource[];

  @MayBeOmitted() @IsOneOf(ROUTING_STRATEGIES) strategy?: RoutingStrategy;
  @MayBeOmitted() @IsListField({ items: 'roles', unique: true, item: (value) => oneOfIssues(MESSAGE_ROLES, value) }) refusedRoles?: string[];
  @MayBeOmitted() @IsNumberField({ integer: true, min: 1, max: MAX_STREAM_SECONDS }) maxStreamSeconds?: number;
  @MayBeOmitted() @IsNumberField({ integer: true, min: 1, max: MAX_TIMEOUT_SECONDS }) timeoutSeconds?: number;
}

/** Whether the response cache may keep a model's answers, and what share of its prices a hit is charged (a micro-share at the finest). */
export class ModelResponseCacheDto {
  @MayBeOmitted() @IsBooleanField() allowed?: boolean;
  @MayBeOmitted() @IsNumberField({ min: 0, max: 1, maxDecimals: 6 }) hitPriceShare?: number;
}

/** A calendar date written YYYY-MM-DD (quote it in YAML). */
const CalendarDate = () =>
  Checked('calendarDate', (value) => {
    const [year, month, day] = (typeof value === 'string' ? /^(\d{4})-(\d{2})-(\d{2})$/.exec(value)?.slice(1).map(Number) : undefined) ?? [];
    if (year === undefined) return [`Expected a date written YYYY-MM-DD. Received ${describeWrongType(value)}`];
    const date = new Date(Date.UTC(year, month - 1, day));
    return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day ? [] : [`Expected a calendar date. Received ${shown(value)}`];
  });

const HttpUrl = () =>
  Checked('httpUrl', (value) => {
    const protocol = typeof value === 'string' && URL.canParse(value) ? new URL(value).protocol : undefined;
    return protocol === 'https:' || protocol === 'http:' ? [] : [`Expected an http(s) URL. Received ${describeWrongType(value)}`];
  });

export class ModelInfoDto {
  @IsStringField(TEXT) name!: string;
  @IsStringField(TEXT) developer!: string;
  @IsStringField(TEXT) description!: string;
  @MayBeOmitted() @CalendarDate() releasedAt?: string;
  @MayBeOmitted() @IsNumberField({ integer: true, min: 1 }) contextLength?: number;

  @MayBeOmitted()
  @IsNumberField({ integer: true, min: 1 })
  @Checked('outputWithinContext', (value, args) => {
    const context = (args.object as Partial<ModelInfo>).contextLength;
    return typeof value === 'number' && typeof context === 'number' && value > context ? [`Expected at most info.contextLength (${context}). Received ${value}`] : [];
  })
  outputMax?: number;

  @MayBeOmitted() @CalendarDate() cutoffAt?: string;
  @MayBeOmitted() @HttpUrl() url?: string;
  @MayBeOmitted() @HttpUrl() docsUrl?: string;
  @MayBeOmitted() @HttpUrl() docsJson?: string;
}

/** The endpoint kind of an entry whose type is valid. */
function kindOf(args: ValidationArguments): string | undefined {
  const type = (args.object as { type?: unknown }).type;
  return typeof type === 'string' && TYPE_PATTERN.test(type) ? type.slice(type.indexOf('/') + 1) : undefined;
}

/** Which token limits an entry's info may state depends on its endpoint kind. */
function tokenWindowIssues(info: unknown, kind: string | undefined): string[] {
  if (!isRecord(info) || kind === undefined) return [];
  return (['contextLength', 'outputMax'] as const).flatMap((field) => {
    const why = WITHOUT_TOKEN_WINDOW.has(kind) ? 'have no token window' : field === 'outputMax' && WITHOUT_OUTPUT_LIMIT.has(kind) ? 'produce no text' : undefined;
    return info[field] === undefined || !why ? [] : [at(`.${field}`, `Expected no ${field} for ${kind} models, which ${why}. Received ${shown(info[field])}`)];
  });
}

export class CatalogueEntryDto {
  @IsStringField(NAME) id!: string;
  @IsListField(NAMES('aliases')) aliases!: string[];
  @IsStringField({ nonEmpty: true, pattern: TYPE_PATTERN, patternText: `<family>/<endpoint-kind>, the endpoint kind one of ${ENDPOINT_KINDS.join(', ')}` })
  type!: string;

  @NestedObject(() => ModelInfoDto, 'an object with at least name, developer and description')
  @Checked('tokenWindowOfKind', (value, args) => tokenWindowIssues(value, kindOf(args)))
  info!: ModelInfo;

  @IsListField(NAMES('tags')) tags!: string[];
  @MayBeOmitted() @NestedObject(() => ModelModalitiesDto, 'an object with input and output lists') modalities?: ModelModalities;
  @MayBeOmitted() @IsListField(NAMES('capabilities')) capabilities?: string[];

  @MayBeOmitted()
  @NestedObject(() => ModelPricingDto, 'a price list {kind: fixed, currency: USD, units: [...]}')
  @Checked('chatPricing', (value, args) => chatPricingIssues(value, kindOf(args)))
  pricing?: ModelPricing;

  @NestedObject(() => ModelRoutingDto, 'an object with at least one upstream source') routing!: ModelRouting;
  @MayBeOmitted() @NestedObject(() => ModelResponseCacheDto, 'an object {allowed, hitPriceShare}') responseCache?: ModelResponseCache;
  /** For a floating id: the pinned release it currently means (checked against the file's other entries). */
  @MayBeOmitted() @IsStringField(NAME) resolvesTo?: string;
}

type EntryLike = Partial<Record<'id' | 'aliases' | 'type' | 'resolvesTo', unknown>>;
const entriesOf = (models: unknown): Array<EntryLike | undefined> => (Array.isArray(models) ? models.map((model: unknown) => (isRecord(model) ? model : undefined)) : []);

/** Ids and aliases share one namespace, compared case-insensitively. */
function repeatedNameIssues(models: unknown): string[] {
  const owners = new Map<string, string>();
  return entriesOf(models).flatMap((model, index) => {
    const id = model?.id;
    if (typeof id !== 'string') return [];
    const aliases: unknown[] = Array.isArray(model?.aliases) ? model.aliases : [];
    const names = [['id', id], ...aliases.map((alias, position): [string, unknown] => [`aliases[${position}]`, alias])] as const;
    return names.flatMap(([field, name]) => {
      if (typeof name !== 'string') return [];
      const owner = owners.get(name.toLowerCase());
      if (owner === undefined) owners.set(name.toLowerCase(), id);
      return owner === undefined ? [] : [at(`[${index}].${field}`, `Expected a name used once in the file (ids and aliases, in any case). Received ${shown(name)}, already a name of ${owner}`)];
    });
  });
}

/** A floating id names a pinned release of the same type; floating ids do not chain. */
function floatingIdIssues(models: unknown): string[] {
  const entries = entriesOf(models);
  const byId = new Map(entries.map((model) => [model?.id, model]));
  return entries.flatMap((model, index) => {
    const target = model?.resolvesTo;
    if (typeof target !== 'string') return [];
    const pinned = byId.get(target);
    const problem =
      target === model?.id
        ? `Expected the id of another entry (a pinned release). Received ${shown(target)}, this entry's own id`
        : !pinned
          ? `Expected the id of an entry in this file. Received ${shown(target)}`
          : pinned.resolvesTo !== undefined
            ? `Expected the id of a pinned release (floating ids do not chain). Received ${shown(target)}, which itself resolves to ${shown(pinned.resolvesTo)}`
            : pinned.type !== model?.type
              ? `Expected an entry of this entry's type (${String(model?.type)}). Received ${shown(target)}, of type ${String(pinned.type)}`
              : undefined;
    return problem ? [at(`[${index}].resolvesTo`, problem)] : [];
  });
}

export class CatalogueFileDto {
  @NestedList(CatalogueEntryDto, { items: 'model entries', ofObjects: 'a model entry object' })
  @Checked('uniqueNames', repeatedNameIssues)
  @Checked('floatingIds', floatingIdIssues)
  models!: CatalogueEntryDto[];
}

const VALIDATION = { whitelist: true, forbidNonWhitelisted: true, forbidUnknownValues: false, validationError: { target: true, value: true } };
/** Deeper than a catalogue file nests (`models[0].pricing.variants[0].units[0].unit` is seven levels). */
const MAX_NESTING = 16;

function errorsOf(type: DtoClass, plain: unknown, expected: string): ValidationError[] {
  if (!isRecord(plain)) return [{ property: '', children: [], constraints: { isObject: `Expected ${expected}. Received ${describeWrongType(plain)}` } }];
  const untransformable = untransformableErrors(plain, MAX_NESTING);
  if (untransformable.length > 0) return untransformable;
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
  return validationIssues(errorsOf(CatalogueFileDto, isRecord(document) ? { models: document.models } : document, 'an object with a "models" list'));
}
