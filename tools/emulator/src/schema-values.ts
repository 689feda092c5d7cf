// Values that satisfy a JSON Schema, so the emulator answers a structured-output request
// (a `json_schema` response format, Anthropic's `output_config.format`, Gemini's
// `responseSchema`/`responseJsonSchema`) and a tool call (the tool's parameters) as a model
// would: with JSON its client's parser accepts.
//
// No schema-faker library is installed, so this is a small generator of its own, bounded:
// nesting deeper than MAX_DEPTH (recursive `$ref`s) keeps only what the schema requires, and
// at most MAX_NODES values are made. What it honours: `type` (a list: the first non-null one;
// Gemini's upper-case names), `const`, `enum`, objects (`properties`, all of them written,
// `required` names not among them, `additionalProperties`, `minProperties`/`maxProperties`),
// arrays (`items`, `prefixItems`, `minItems`/`maxItems`, `uniqueItems`), numbers and integers
// (`minimum`/`maximum`, exclusive bounds in both drafts' forms, `multipleOf`), strings
// (`minLength`/`maxLength`, `format`: date-time, date, time, email, uri/url, uuid, ipv4, ipv6,
// hostname, duration), `anyOf`/`oneOf` (one branch, merged with its siblings), `allOf`
// (merged), `$ref` into the document (`#`, `#/$defs/...`, `#/definitions/...`), `nullable`
// (a value, not null). `pattern` is not solved: a string under one gets the usual text.
//
// However hostile the schema (minItems of thousands at every level), a value holds at most
// HARD_MAX_NODES values and HARD_MAX_CHARACTERS characters of strings: past them it is cut
// short (null), where no model would answer anyway.
//
// Every value is deterministic: the seed (the request's text, see `answerSeed`) decides the
// choices. Strings are words joined by single spaces, so JSON of them goes through the
// emulator's word-based streaming and token counting unchanged.
import { seededRandom } from './seeded-random';
import { hashText, isRecord } from './util';

const MAX_DEPTH = 8;
const MAX_NODES = 2000;
/** Past these, the value is cut short: what keeps the answer bounded whatever the schema. */
const HARD_MAX_NODES = 20_000;
const HARD_MAX_CHARACTERS = 1_000_000;
/** Items of an array without `minItems`: one to this many. */
const DEFAULT_MAX_ITEMS = 3;
/** The most items or properties made for a `minItems`/`minProperties` however large. */
const HARD_MAX_ITEMS = 256;
const HARD_MAX_LENGTH = 10_000;
/** Where a number without bounds falls. */
const DEFAULT_RANGE = { low: 0, high: 100 };
const LEXICON = ['amber', 'river', 'quiet', 'north', 'garden', 'silver', 'maple', 'harbor', 'meadow', 'lantern', 'cedar', 'violet'];
/** Properties a model given a location fills with one (the emulator's long-standing weather call). */
const PLACE_KEYS = new Set(['location', 'city', 'place']);
/** What a tool without a parameters schema is called with (the emulator's weather call). */
export const DEFAULT_TOOL_ARGUMENTS: Readonly<Record<string, unknown>> = Object.freeze({ location: 'Paris' });

type Schema = Record<string, unknown>;

interface Generation {
  root: unknown;
  random: () => number;
  nodes: number;
  characters: number;
}

/** The seed of an answer: the schema and the prompt it answers, so one request always gets one answer. */
export function answerSeed(...parts: unknown[]): number {
  return hashText(parts.map((part) => (typeof part === 'string' ? part : JSON.stringify(part) ?? '')).join('\u0000'));
}

/** A value satisfying `schema` (the document its `$ref`s point into), chosen by `seed`. */
export function valueForSchema(schema: unknown, seed: number): unknown {
  const generation: Generation = { root: schema, random: seededRandom(seed), nodes: 0, characters: 0 };
  return generate(schema, generation, 0, undefined);
}

/** A JSON object for `json_object` answers (no schema to follow). */
export function anyJsonObject(seed: number): Record<string, unknown> {
  const random = seededRandom(seed);
  return { answer: pick(LEXICON, random), confidence: Math.round(random() * 100) / 100 };
}

/**
 * A tool call's arguments: an object satisfying its parameters schema; a tool declaring none
 * (or a schema whose value is not an object) gets the weather call's `{"location": "Paris"}`.
 */
export function toolArguments(parameters: unknown, seed: number): Record<string, unknown> {
  if (!isRecord(parameters) || Object.keys(parameters).length === 0) return { ...DEFAULT_TOOL_ARGUMENTS };
  const value = valueForSchema(parameters, seed);
  return isRecord(value) ? value : { ...DEFAULT_TOOL_ARGUMENTS };
}

function generate(schema: unknown, generation: Generation, depth: number, key: string | undefined): unknown {
  generation.nodes++;
  if (generation.nodes > HARD_MAX_NODES || generation.characters > HARD_MAX_CHARACTERS) return null;
  if (schema === true || schema === undefined || schema === null) return textFor(key, {}, generation);
  if (schema === false || !isRecord(schema)) return null;
  const resolved = resolve(schema, generation.root, depth);
  if (resolved === undefined) return null;
  const minimal = depth >= MAX_DEPTH || generation.nodes >= MAX_NODES;

  if ('const' in resolved) return structuredClone(resolved.const);
  if (Array.isArray(resolved.enum) && resolved.enum.length > 0) {
    const choices = resolved.enum.filter((value) => value !== null);
    return structuredClone(pick(choices.length > 0 ? choices : resolved.enum, generation.random));
  }
  const branches = Array.isArray(resolved.anyOf) ? resolved.anyOf : Array.isArray(resolved.oneOf) ? resolved.oneOf : undefined;
  if (branches !== undefined && branches.length > 0) {
    const { anyOf: _anyOf, oneOf: _oneOf, ...siblings } = resolved;
    const branch = chooseBranch(branches, generation, minimal);
    return generate(merged(siblings, resolve(isRecord(branch) ? branch : {}, generation.root, depth) ?? {}), generation, depth + 1, key);
  }

  switch (typeOf(resolved)) {
    case 'null':
      return null;
    case 'boolean':
      return generation.random() < 0.5;
    case 'integer':
      return numberIn(resolved, true, generation.random);
    case 'number':
      return numberIn(resolved, false, generation.random);
    case 'array':
      return arrayOf(resolved, generation, depth, minimal);
    case 'object':
      return objectOf(resolved, generation, depth, minimal);
    default:
      return stringFor(resolved, key, generation);
  }
}

/** The schema with its `$ref` and `allOf` folded in; undefined for a `$ref` that points nowhere. */
function resolve(schema: Schema, root: unknown, depth: number): Schema | undefined {
  let current = schema;
  for (let hops = 0; typeof current.$ref === 'string' && hops < MAX_DEPTH; hops++) {
    const { $ref: ref, ...rest } = current;
    const target = pointer(root, ref as string);
    if (!isRecord(target)) return Object.keys(rest).length > 0 ? rest : undefined;
    current = merged(rest, target);
  }
  if (Array.isArray(current.allOf)) {
    const { allOf, ...rest } = current;
    current = (allOf as unknown[]).reduce<Schema>((into, part) => merged(into, isRecord(part) ? (resolve(part, root, depth + 1) ?? {}) : {}), rest);
  }
  return current;
}

/** The value at a `$ref` of this document (`#`, `#/$defs/Name`, any JSON pointer into it). */
function pointer(root: unknown, ref: string): unknown {
  if (ref === '#') return root;
  if (!ref.startsWith('#/')) return undefined;
  let at: unknown = root;
  for (const raw of ref.slice(2).split('/')) {
    const part = decodeURIComponent(raw).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isRecord(at) && !Array.isArray(at)) return undefined;
    at = (at as Record<string, unknown>)[part];
  }
  return at;
}

/** Two schemas as one: properties joined, `required` united, the rest taken from `over`. */
function merged(base: Schema, over: Schema): Schema {
  const result: Schema = { ...base, ...over };
  if (isRecord(base.properties) && isRecord(over.properties)) result.properties = { ...base.properties, ...over.properties };
  if (Array.isArray(base.required) && Array.isArray(over.required)) result.required = [...new Set([...base.required, ...over.required])];
  return result;
}

/** A branch of anyOf/oneOf: not `null` when another is offered; the simplest one when the depth is spent. */
function chooseBranch(branches: unknown[], generation: Generation, minimal: boolean): unknown {
  const notNull = branches.filter((branch) => !(isRecord(branch) && typeOf(branch) === 'null'));
  const offered = notNull.length > 0 ? notNull : branches;
  if (minimal) {
    const leaf = branches.find((branch) => isRecord(branch) && typeof branch.$ref !== 'string' && !['object', 'array'].includes(typeOf(branch)));
    if (leaf !== undefined) return leaf;
  }
  return pick(offered, generation.random);
}

function typeOf(schema: Schema): string {
  const declared = Array.isArray(schema.type) ? (schema.type.find((type) => String(type).toLowerCase() !== 'null') ?? schema.type[0]) : schema.type;
  if (typeof declared === 'string') return declared.toLowerCase();
  if (isRecord(schema.properties) || Array.isArray(schema.required) || schema.additionalProperties !== undefined) return 'object';
  if (schema.items !== undefined || Array.isArray(schema.prefixItems)) return 'array';
  if (['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'].some((bound) => schema[bound] !== undefined)) return 'number';
  return 'string';
}

/** A number a schema states, which Gemini's proto JSON may write as a string ("3"). */
function bound(value: unknown): number | undefined {
  const number = typeof value === 'string' && value.trim() !== '' ? Number(value) : value;
  return typeof number === 'number' && Number.isFinite(number) ? number : undefined;
}

function numberIn(schema: Schema, integer: boolean, random: () => number): number {
  let low = bound(schema.minimum);
  let high = bound(schema.maximum);
  let lowOpen = false;
  let highOpen = false;
  const exclusiveMin = bound(schema.exclusiveMinimum);
  const exclusiveMax = bound(schema.exclusiveMaximum);
  if (exclusiveMin !== undefined && (low === undefined || exclusiveMin >= low)) [low, lowOpen] = [exclusiveMin, true];
  if (exclusiveMax !== undefined && (high === undefined || exclusiveMax <= high)) [high, highOpen] = [exclusiveMax, true];
  // Draft 4 writes exclusive bounds as booleans beside minimum/maximum.
  if (schema.exclusiveMinimum === true) lowOpen = true;
  if (schema.exclusiveMaximum === true) highOpen = true;
  if (low === undefined && high === undefined) [low, high] = [DEFAULT_RANGE.low, DEFAULT_RANGE.high];
  else if (low === undefined) low = Math.min(DEFAULT_RANGE.low, high! - DEFAULT_RANGE.high);
  else if (high === undefined) high = Math.max(DEFAULT_RANGE.high, low + DEFAULT_RANGE.high);
  const step = bound(schema.multipleOf);
  const unit = step !== undefined && step > 0 ? step : integer ? 1 : undefined;
  if (unit !== undefined) {
    const integral = integer && !Number.isInteger(unit) ? lcmWithOne(unit) : unit;
    let first = Math.ceil(low! / integral);
    let last = Math.floor(high! / integral);
    if (lowOpen && first * integral <= low!) first++;
    if (highOpen && last * integral >= high!) last--;
    if (last < first) return tidy(first * integral);
    return tidy((first + Math.floor(random() * (last - first + 1))) * integral);
  }
  const span = high! - low!;
  let value = Math.round((low! + span * (0.1 + 0.8 * random())) * 100) / 100;
  if (value < low! || value > high! || (lowOpen && value <= low!) || (highOpen && value >= high!)) value = low! + span / 2;
  return value;
}

/** The smallest multiple of a fractional step that is an integer (an integer's multipleOf 0.5 is any integer). */
function lcmWithOne(step: number): number {
  for (let k = 1; k <= 1000; k++) if (Number.isInteger(tidy(step * k))) return tidy(step * k);
  return 1;
}

/** Drops the float noise of multiplying by a decimal step (0.1 * 3). */
function tidy(value: number): number {
  return Number.parseFloat(value.toPrecision(12));
}

function arrayOf(schema: Schema, generation: Generation, depth: number, minimal: boolean): unknown[] {
  const min = Math.min(HARD_MAX_ITEMS, Math.max(0, bound(schema.minItems) ?? 0));
  const max = Math.max(min, Math.min(HARD_MAX_ITEMS, bound(schema.maxItems) ?? Number.POSITIVE_INFINITY));
  const tuple = Array.isArray(schema.prefixItems) ? schema.prefixItems : Array.isArray(schema.items) ? schema.items : [];
  const rest = Array.isArray(schema.items) ? (schema.additionalItems ?? {}) : (schema.items ?? {});
  const wanted = minimal ? min : Math.max(min, Math.min(max, 1 + Math.floor(generation.random() * DEFAULT_MAX_ITEMS)));
  const count = rest === false ? Math.min(wanted, tuple.length) : Math.max(wanted, Math.min(max, minimal ? min : tuple.length));
  const items: unknown[] = [];
  const seen = new Set<string>();
  for (let index = 0; index < count && generation.nodes <= HARD_MAX_NODES; index++) {
    const itemSchema = index < tuple.length ? tuple[index] : rest;
    let item = generate(itemSchema, generation, depth + 1, undefined);
    if (schema.uniqueItems === true) {
      for (let retry = 0; retry < 8 && seen.has(JSON.stringify(item)); retry++) item = generate(itemSchema, generation, depth + 1, `${index}-${retry}`);
      if (seen.has(JSON.stringify(item))) {
        if (items.length >= min) break;
      }
      seen.add(JSON.stringify(item));
    }
    items.push(item);
  }
  return items;
}

function objectOf(schema: Schema, generation: Generation, depth: number, minimal: boolean): Record<string, unknown> {
  const properties = isRecord(schema.properties) ? schema.properties : {};
  const required = Array.isArray(schema.required) ? schema.required.filter((name): name is string => typeof name === 'string') : [];
  const extra = schema.additionalProperties;
  const maxProperties = bound(schema.maxProperties) ?? Number.POSITIVE_INFINITY;
  const names = [...required];
  for (const name of Object.keys(properties)) {
    if (!names.includes(name) && !minimal && names.length < maxProperties) names.push(name);
  }
  const result: Record<string, unknown> = {};
  for (const name of names) {
    const propertySchema = name in properties ? properties[name] : isRecord(extra) ? extra : {};
    result[name] = generate(propertySchema, generation, depth + 1, name);
  }
  const minProperties = Math.min(HARD_MAX_ITEMS, bound(schema.minProperties) ?? 0);
  for (let index = 1; Object.keys(result).length < minProperties && extra !== false && index <= HARD_MAX_ITEMS; index++) {
    const name = `field_${index}`;
    if (!(name in result)) result[name] = generate(isRecord(extra) ? extra : {}, generation, depth + 1, name);
  }
  return result;
}

function stringFor(schema: Schema, key: string | undefined, generation: Generation): string {
  const formatted = formattedString(schema.format, generation.random);
  if (formatted !== undefined) return formatted;
  return textFor(key, schema, generation);
}

function formattedString(format: unknown, random: () => number): string | undefined {
  const n = 1 + Math.floor(random() * 28);
  const two = (value: number) => String(value).padStart(2, '0');
  const time = `${two(Math.floor(random() * 24))}:${two(Math.floor(random() * 60))}:${two(Math.floor(random() * 60))}`;
  switch (format) {
    case 'date-time':
      return `2026-${two(1 + Math.floor(random() * 12))}-${two(n)}T${time}Z`;
    case 'date':
      return `2026-${two(1 + Math.floor(random() * 12))}-${two(n)}`;
    case 'time':
      return `${time}Z`;
    case 'email':
    case 'idn-email':
      return `${pick(LEXICON, random)}${n}@example.com`;
    case 'uri':
    case 'url':
    case 'iri':
    case 'uri-reference':
      return `https://example.com/${pick(LEXICON, random)}/${n}`;
    case 'uuid': {
      const hex = (length: number) => Array.from({ length }, () => Math.floor(random() * 16).toString(16)).join('');
      return `${hex(8)}-${hex(4)}-4${hex(3)}-${'89ab'[Math.floor(random() * 4)]}${hex(3)}-${hex(12)}`;
    }
    case 'ipv4':
      return `192.0.2.${n}`;
    case 'ipv6':
      return `2001:db8::${n.toString(16)}`;
    case 'hostname':
    case 'idn-hostname':
      return `${pick(LEXICON, random)}${n}.example.com`;
    case 'duration':
      return `P${n}D`;
    default:
      return undefined;
  }
}

/** Words (single spaces, none at either end), cut or padded to the schema's lengths. */
function textFor(key: string | undefined, schema: Schema, generation: Generation): string {
  const random = generation.random;
  let text = key !== undefined && PLACE_KEYS.has(key.toLowerCase()) ? 'Paris' : `${pick(LEXICON, random)} ${pick(LEXICON, random)}`;
  const min = Math.min(HARD_MAX_LENGTH, Math.max(0, bound(schema.minLength) ?? 0));
  const max = Math.max(min, bound(schema.maxLength) ?? Number.POSITIVE_INFINITY);
  // Lengths count code points; the text is ASCII, so characters are code points.
  if (text.length > max) text = text.slice(0, max).trimEnd();
  if (text.length < min) text += 'x'.repeat(min - text.length);
  generation.characters += text.length;
  return text;
}

function pick<T>(choices: readonly T[], random: () => number): T {
  return choices[Math.floor(random() * choices.length)];
}
