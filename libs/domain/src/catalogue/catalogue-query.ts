import { modelApis } from './model-apis';

/**
 * Query semantics of the public catalogue: `GET /v1/models` (alias `/models`), `GET /v1/models/{id}`
 * (alias `/models/{id}`, OpenAI's retrieve) and `GET /model/{id}`.
 *
 * Pure functions, no I/O. The HTTP layer hands over the query object as Express parsed it and
 * serialises what comes back; everything about which entries match and which fields show is here.
 *
 * Rules (each one is pinned by `catalogue-query.spec.ts`):
 *
 * Query values
 * - A value arrives as Express parses it: `string`, `string[]` (repeated parameter or `p[]=`),
 *   `undefined`, or a nested object (`p[x]=1`). Strings and the string elements of an array are
 *   read; nested objects, nested arrays and any other type are ignored as if absent.
 * - Each string is split on commas, each piece trimmed, empty pieces dropped, lower-cased
 *   (`toLowerCase`, locale-independent), duplicates dropped (first occurrence keeps its place).
 *   So `p=a,b`, `p=a&p=b` and `p=a,b&p=b` all mean the same two values.
 * - Parameter NAMES are case-sensitive (`?TAGS=x` is an unknown parameter and ignored); only
 *   values are case-insensitive. Unknown parameters are ignored.
 *
 * OpenAI's model fields
 * - Every projection also carries OpenAI's `object: "model"`, `created` and `owned_by`, right after
 *   `id` (where OpenAI puts them), so OpenAI clients (`models.list()`, `models.retrieve()`) read
 *   the spec's entries as their own.
 * - `created`: Unix seconds of `info.releasedAt` (a date, read as midnight UTC); 0 when the entry
 *   has no readable release date.
 * - `owned_by`: the id's namespace, the part before its first slash (`openai/gpt-4o` -> `openai`),
 *   which is the lower-case organisation name OpenAI's clients expect; an id without a slash falls
 *   back to `info.developer`, then to `unknown`.
 *
 * Sections (`include`, `details`)
 * - Without them an entry shows identity only: id, object, created, owned_by, aliases, type, info, tags, apis.
 * - `apis`: the APIs the entry can be called through (see model-apis.ts), derived from its type
 *   and, for decisions, its capabilities and tags.
 * - `include` names sections: `modalities`, `capabilities`, `pricing`; `all` means all three.
 *   Unknown values (e.g. the typo `pricng`) are ignored, giving a valid response without that section.
 * - `details` adds all three sections when any of its values is `true` or `1` (case-insensitive).
 *   Any other value (`false`, `0`, `yes`, a bare `?details`) adds nothing; in particular
 *   `details=false` does NOT remove sections named by `include` (the two are unioned).
 * - A projection holds exactly: id, object, created, owned_by, aliases, type, info, tags, apis, then
 *   modalities, capabilities, pricing (in this key order) for the included sections. Nothing else from the entry ever
 *   shows (internal fields such as `routing` or `resolvesTo` never leak; `modalities` is rebuilt
 *   as `{input, output}`).
 * - An included section the entry lacks: `modalities` shows as `{input: [], output: []}`,
 *   `capabilities` as `[]`, and `pricing` is omitted (an entry without prices has no pricing section).
 *
 * Filters (list endpoint only; the one-model endpoints read `include`/`details` and nothing else)
 * - Several values in one parameter are OR'ed, several parameters AND'ed.
 * - An omitted parameter filters nothing, and so does one present with only empty values
 *   (`?tags=`, `?tags=,,`, `?tags= `): it is treated exactly as omitted.
 * - Every comparison is whole-string equality after lower-casing both sides, never a substring
 *   or prefix match.
 * - `id`: the value equals the entry's id or one of its aliases.
 * - `tags`: the entry carries a tag equal to the value.
 * - `capabilities`: the entry declares a capability equal to the value.
 * - `input_modalities` / `output_modalities`: the entry's `modalities.input` / `.output` holds the value.
 * - `modalities`: input or output holds the value.
 * - `type`: the value equals the full endpoint type (`openai/chat-completions`) or its endpoint
 *   kind, the part after the LAST slash (`chat-completions`); the family alone (`openai`) does
 *   not match. A type without a slash is its own kind.
 * - An entry lacking a section (no capabilities, no modalities) matches no value of a filter on it.
 * - Filters work independently of `include`: filtering on capabilities needs no include=capabilities.
 * - Results keep the catalogue's order.
 * - `available`: `true` or `1` keeps only the entries that can answer here (a source whose
 *   provider is configured); the caller says which those are. Any other value, or none, keeps
 *   every entry: by default the list is the whole catalogue.
 *
 * Performance: per entry, the lower-cased look-up sets and the projections (one per combination of
 * sections, at most 8) are computed on first use and cached in a WeakMap keyed by the entry object.
 * Entries must therefore be treated as immutable once queried: a changed entry has to be a new
 * object (the gateway replaces its catalogue snapshot as a whole, so old entries are collected).
 * Cached projections are shared between requests and frozen (shallowly, plus `modalities`);
 * arrays inside them are the entry's own arrays, typed readonly.
 */

/** The entry fields the query reads; catalogue entries of every shape satisfy it. */
export interface QueryableModel {
  id: string;
  aliases: readonly string[];
  type: string;
  info: object;
  tags: readonly string[];
  modalities?: { input: readonly string[]; output: readonly string[] };
  capabilities?: readonly string[];
  pricing?: object;
}

/**
 * One query parameter as Express hands it over: `string | string[] | undefined`, or a nested
 * object from the extended (qs) parser. Anything but strings and arrays of strings is ignored.
 */
export type QueryValue = unknown;

/** The optional sections, in the order they appear in a projection. */
export const CATALOGUE_SECTIONS = ['modalities', 'capabilities', 'pricing'] as const;
export type CatalogueSection = (typeof CATALOGUE_SECTIONS)[number];

/** Normalised filter values: lower-cased, trimmed, non-empty, de-duplicated. A key is absent when its parameter filters nothing. */
export interface CatalogueFilters {
  readonly id?: readonly string[];
  readonly tags?: readonly string[];
  readonly capabilities?: readonly string[];
  readonly inputModalities?: readonly string[];
  readonly outputModalities?: readonly string[];
  readonly modalities?: readonly string[];
  readonly type?: readonly string[];
}

/** Query parameter name of each filter. */
export const CATALOGUE_FILTER_PARAMETERS: { readonly [K in keyof Required<CatalogueFilters>]: string } = {
  id: 'id',
  tags: 'tags',
  capabilities: 'capabilities',
  inputModalities: 'input_modalities',
  outputModalities: 'output_modalities',
  modalities: 'modalities',
  type: 'type',
};

export interface CatalogueQuery {
  readonly include: ReadonlySet<CatalogueSection>;
  readonly filters: CatalogueFilters;
  /** `available=true`: only entries that can answer here. */
  readonly availableOnly: boolean;
}

/**
 * The public projection of an entry. Key order: id, object, created, owned_by, aliases, type, info,
 * tags, apis, modalities, capabilities, pricing.
 */
export interface PublicModel<M extends QueryableModel = QueryableModel> {
  readonly id: string;
  /** OpenAI's object type of a model. */
  readonly object: 'model';
  /** OpenAI's creation time: Unix seconds of `info.releasedAt`, 0 when unknown. */
  readonly created: number;
  /** OpenAI's owner: the id's namespace (`openai/gpt-4o` -> `openai`), else `info.developer`. */
  readonly owned_by: string;
  readonly aliases: readonly string[];
  readonly type: string;
  readonly info: M['info'];
  readonly tags: readonly string[];
  /** The APIs the entry can be called through (`chat.completions`, `responses`, `messages`, `embeddings`, ...). */
  readonly apis: readonly string[];
  readonly modalities?: { readonly input: readonly string[]; readonly output: readonly string[] };
  readonly capabilities?: readonly string[];
  readonly pricing?: NonNullable<M['pricing']>;
}

/** Resolves a name (id or alias, case-insensitive) to an entry; `CatalogueIndex` satisfies it. */
export interface ModelResolver<M> {
  resolve(name: string): M | undefined;
}

/**
 * The normalised values of one parameter: strings (or the string elements of an array) split on
 * commas, trimmed, empties dropped, lower-cased, de-duplicated. Anything else gives `[]`.
 */
export function normalizeQueryValues(value: QueryValue): string[] {
  const out: string[] = [];
  if (typeof value === 'string') {
    addPieces(value, out);
  } else if (Array.isArray(value)) {
    for (const element of value as readonly unknown[]) {
      if (typeof element === 'string') addPieces(element, out);
    }
  }
  return out;
}

function addPieces(raw: string, out: string[]): void {
  for (const piece of raw.split(',')) {
    const value = piece.trim().toLowerCase();
    if (value !== '' && !out.includes(value)) out.push(value);
  }
}

const ALL_SECTIONS: ReadonlySet<CatalogueSection> = new Set(CATALOGUE_SECTIONS);
const DETAILS_ON = new Set(['true', '1']);

function isOn(value: QueryValue): boolean {
  return normalizeQueryValues(value).some((piece) => DETAILS_ON.has(piece));
}

/** Parses `include`, `details`, `available` and the filters. Never throws; what it does not understand it ignores. */
export function parseCatalogueQuery(query: Readonly<Record<string, unknown>>): CatalogueQuery {
  return { include: parseInclude(query), filters: parseFilters(query), availableOnly: isOn(query['available']) };
}

/** The sections `include` and `details` ask for (the only parameters `GET /model/{id}` reads). */
export function parseInclude(query: Readonly<Record<string, unknown>>): ReadonlySet<CatalogueSection> {
  if (isOn(query['details'])) return ALL_SECTIONS;
  const include = new Set<CatalogueSection>();
  for (const value of normalizeQueryValues(query['include'])) {
    if (value === 'all') return ALL_SECTIONS;
    if ((ALL_SECTIONS as ReadonlySet<string>).has(value)) include.add(value as CatalogueSection);
  }
  return include;
}

function parseFilters(query: Readonly<Record<string, unknown>>): CatalogueFilters {
  const filters: { -readonly [K in keyof CatalogueFilters]: CatalogueFilters[K] } = {};
  for (const key of Object.keys(CATALOGUE_FILTER_PARAMETERS) as Array<keyof CatalogueFilters>) {
    const values = normalizeQueryValues(query[CATALOGUE_FILTER_PARAMETERS[key]]);
    if (values.length > 0) filters[key] = values;
  }
  return filters;
}

/** Lower-cased look-ups and cached projections of one entry. */
interface Derived {
  readonly names: ReadonlySet<string>;
  readonly tags: ReadonlySet<string>;
  readonly capabilities: ReadonlySet<string>;
  readonly input: ReadonlySet<string>;
  readonly output: ReadonlySet<string>;
  readonly type: string;
  readonly kind: string;
  /** Indexed by section mask (see `sectionMask`). */
  readonly projections: Array<PublicModel | undefined>;
}

const derivedCache = new WeakMap<QueryableModel, Derived>();
const NO_STRINGS: readonly string[] = Object.freeze([]);

function lowerSet(values: readonly string[] | undefined): ReadonlySet<string> {
  const set = new Set<string>();
  for (const value of values ?? NO_STRINGS) set.add(value.toLowerCase());
  return set;
}

function derive(model: QueryableModel): Derived {
  let derived = derivedCache.get(model);
  if (!derived) {
    const type = model.type.toLowerCase();
    derived = {
      names: lowerSet([model.id, ...model.aliases]),
      tags: lowerSet(model.tags),
      capabilities: lowerSet(model.capabilities),
      input: lowerSet(model.modalities?.input),
      output: lowerSet(model.modalities?.output),
      type,
      kind: type.slice(type.lastIndexOf('/') + 1),
      projections: [],
    };
    derivedCache.set(model, derived);
  }
  return derived;
}

function anyIn(values: readonly string[] | undefined, set: ReadonlySet<string>): boolean {
  if (!values || values.length === 0) return true; // omitted or empty: filters nothing
  for (const value of values) if (set.has(value)) return true;
  return false;
}

/**
 * Whether an entry passes every filter. Filter values must already be normalised (lower-case,
 * trimmed) as `parseCatalogueQuery` returns them; an absent or empty list filters nothing.
 */
export function matchesCatalogueFilters<M extends QueryableModel>(model: M, filters: CatalogueFilters): boolean {
  const d = derive(model);
  if (!anyIn(filters.id, d.names)) return false;
  if (!anyIn(filters.tags, d.tags)) return false;
  if (!anyIn(filters.capabilities, d.capabilities)) return false;
  if (!anyIn(filters.inputModalities, d.input)) return false;
  if (!anyIn(filters.outputModalities, d.output)) return false;
  if (filters.modalities && filters.modalities.length > 0 && !filters.modalities.some((value) => d.input.has(value) || d.output.has(value))) {
    return false;
  }
  if (filters.type && filters.type.length > 0 && !filters.type.some((value) => value === d.type || value === d.kind)) return false;
  return true;
}

const MODALITIES = 1;
const CAPABILITIES = 2;
const PRICING = 4;

function sectionMask(include: ReadonlySet<CatalogueSection>): number {
  return (include.has('modalities') ? MODALITIES : 0) | (include.has('capabilities') ? CAPABILITIES : 0) | (include.has('pricing') ? PRICING : 0);
}

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/** Unix seconds of `info.releasedAt`; a bare date means midnight UTC (not local time). 0 when absent or unreadable. */
export function modelCreatedSeconds(model: QueryableModel): number {
  const releasedAt = (model.info as { releasedAt?: unknown }).releasedAt;
  if (typeof releasedAt !== 'string') return 0;
  const milliseconds = Date.parse(DATE_ONLY.test(releasedAt) ? `${releasedAt}T00:00:00Z` : releasedAt);
  return Number.isFinite(milliseconds) ? Math.max(0, Math.floor(milliseconds / 1000)) : 0;
}

/** The id's namespace (before the first slash); an id without one falls back to `info.developer`, then `unknown`. */
export function modelOwner(model: QueryableModel): string {
  const slash = model.id.indexOf('/');
  if (slash > 0) return model.id.slice(0, slash);
  const developer = (model.info as { developer?: unknown }).developer;
  return typeof developer === 'string' && developer.trim() !== '' ? developer.trim() : 'unknown';
}

function buildProjection(model: QueryableModel, mask: number): PublicModel {
  const out: { -readonly [K in keyof PublicModel]: PublicModel[K] } = {
    id: model.id,
    object: 'model',
    created: modelCreatedSeconds(model),
    owned_by: modelOwner(model),
    aliases: model.aliases,
    type: model.type,
    info: model.info,
    tags: model.tags,
    apis: modelApis(model),
  };
  if ((mask & MODALITIES) !== 0) {
    out.modalities = Object.freeze({ input: model.modalities?.input ?? NO_STRINGS, output: model.modalities?.output ?? NO_STRINGS });
  }
  if ((mask & CAPABILITIES) !== 0) out.capabilities = model.capabilities ?? NO_STRINGS;
  if ((mask & PRICING) !== 0 && model.pricing) out.pricing = model.pricing;
  return Object.freeze(out);
}

function projectWithMask<M extends QueryableModel>(model: M, mask: number): PublicModel<M> {
  const d = derive(model);
  let projection = d.projections[mask];
  if (!projection) {
    projection = buildProjection(model, mask);
    d.projections[mask] = projection;
  }
  // Built from this very `model`, so `info` and `pricing` are M's own.
  return projection as PublicModel<M>;
}

/** The public projection of an entry with the given sections (cached per entry and section set; frozen). */
export function projectModel<M extends QueryableModel>(model: M, include: ReadonlySet<CatalogueSection>): PublicModel<M> {
  return projectWithMask(model, sectionMask(include));
}

/** The identity projection (id, object, created, owned_by, aliases, type, info, tags, apis), computed once per entry. */
export function identityProjection<M extends QueryableModel>(model: M): PublicModel<M> {
  return projectWithMask(model, 0);
}

/** Whether an entry can answer here; without one, `available=true` keeps every entry. */
export type ModelAvailability<M> = (model: M) => boolean;

/** Filters then projects, keeping catalogue order: the `data` of `GET /v1/models`. */
export function applyCatalogueQuery<M extends QueryableModel>(models: readonly M[], query: CatalogueQuery, isAvailable?: ModelAvailability<M>): Array<PublicModel<M>> {
  const mask = sectionMask(query.include);
  const availableOnly = query.availableOnly && isAvailable ? isAvailable : undefined;
  const out: Array<PublicModel<M>> = [];
  for (const model of models) {
    if (matchesCatalogueFilters(model, query.filters) && (!availableOnly || availableOnly(model))) out.push(projectWithMask(model, mask));
  }
  return out;
}

/** `GET /v1/models`: parses the Express query, filters and projects. */
export function queryCatalogue<M extends QueryableModel>(
  models: readonly M[],
  query: Readonly<Record<string, unknown>>,
  isAvailable?: ModelAvailability<M>,
): Array<PublicModel<M>> {
  return applyCatalogueQuery(models, parseCatalogueQuery(query), isAvailable);
}

/**
 * `GET /v1/models/{id}` and `GET /model/{id}`: the entry whose id or alias matches `name`
 * (case-insensitively, via the resolver), projected with the sections `include`/`details` ask
 * for; filters in the query are ignored. `undefined` means 404. `/v1/models/{id}` answers it as
 * is (OpenAI's retrieve shape); `/model/{id}` wraps it as `{object: 'model', data}` (the spec's).
 */
export function lookupCatalogueModel<M extends QueryableModel>(
  resolver: ModelResolver<M>,
  name: string,
  query: Readonly<Record<string, unknown>>,
): PublicModel<M> | undefined {
  const model = resolver.resolve(name);
  return model ? projectModel(model, parseInclude(query)) : undefined;
}
