import { isAscii } from 'node:buffer';
import { topLevelMember } from './json-text';

/**
 * The client's own JSON of a value the gateway forwards unchanged (a chat request's `messages`),
 * so that the upstream body carries those bytes rather than the value serialized again:
 * `JSON.stringify` and UTF-8 encoding cost about a millisecond per 250 KB on the request's
 * thread. What JSON.parse made of the text is kept with it, and the bytes are written only
 * when, at that moment, the value is still what the text says (see `encodeJson`).
 */
interface JsonSource {
  /** The UTF-8 bytes of the value's JSON text. */
  bytes: Buffer;
  /** What JSON.parse made of the text. */
  parsed: unknown;
  /** The object keys written in the text, at every depth: more than `parsed` has when a key was written twice. */
  keys: number;
}

const sources = new WeakMap<object, JsonSource>();

/** Members shorter than this are serialized as usual: looking for their text costs about what it saves. */
const SMALLEST_KEPT_CHARACTERS = 16_384;

/**
 * Keeps the JSON text of the member `key` of a parsed body (`text`, decoded from `bytes`) as the
 * source of `value`, the gateway's own copy of that member, when the member is long enough to be
 * worth it and written plainly (see topLevelMember).
 */
export function keepJsonSource(value: object, body: { text: string; bytes: Buffer; parsed: unknown }, key: string): void {
  if (body.text.length < SMALLEST_KEPT_CHARACTERS) return;
  const parsed = (body.parsed as Record<string, unknown> | null)?.[key];
  if (typeof parsed !== 'object' || parsed === null) return;
  const span = topLevelMember(body.text, key);
  if (!span || span.end - span.start < SMALLEST_KEPT_CHARACTERS) return;
  // An ASCII body's characters are its bytes; any other text is encoded again (it is what JSON.parse read).
  const bytes = isAscii(body.bytes) ? body.bytes.subarray(span.start, span.end) : Buffer.from(body.text.slice(span.start, span.end));
  sources.set(value, { bytes, parsed, keys: span.keys });
}

/**
 * A body as JSON, like JSON.stringify, except that a top-level member whose value has a kept
 * source, and still says what that source says, is written as the source's bytes (after the
 * other members). Returns a Buffer when it wrote one.
 */
export function encodeJson(value: unknown): string | Buffer {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return JSON.stringify(value);
  const body = value as Record<string, unknown>;
  let verbatim: Array<[string, Buffer]> | undefined;
  for (const key of Object.keys(body)) {
    const member = body[key];
    const source = typeof member === 'object' && member !== null ? sources.get(member) : undefined;
    if (source && keysIfSameJson(member, source.parsed) === source.keys) (verbatim ??= []).push([key, source.bytes]);
  }
  if (!verbatim) return JSON.stringify(value);
  const rest: Record<string, unknown> = {};
  for (const key of Object.keys(body)) if (!verbatim.some(([written]) => written === key)) rest[key] = body[key];
  const restJson = JSON.stringify(rest);
  const parts: Buffer[] = [];
  let separator = restJson === '{}' ? '{' : `${restJson.slice(0, -1)},`;
  for (const [key, bytes] of verbatim) {
    parts.push(Buffer.from(`${separator}${JSON.stringify(key)}:`), bytes);
    separator = ',';
  }
  parts.push(Buffer.from('}'));
  return Buffer.concat(parts);
}

/**
 * When JSON.stringify of `value` would parse to what `parsed` (a JSON.parse result) holds, the
 * number of object keys in `parsed` at every depth; otherwise -1, also when `value` holds an
 * object of `parsed` itself. Key order is not compared (JSON gives it no meaning); members
 * JSON.stringify leaves out (undefined, functions) are left out here too.
 */
export function keysIfSameJson(value: unknown, parsed: unknown): number {
  if (typeof parsed !== 'object' || parsed === null) return value === parsed ? 0 : -1;
  // An object shared with the parse may have changed since, along with the parse: its text is stale.
  if (typeof value !== 'object' || value === null || value === parsed) return -1;
  let keys = 0;
  if (Array.isArray(parsed)) {
    if (!Array.isArray(value) || value.length !== parsed.length) return -1;
    for (let index = 0; index < parsed.length; index++) {
      const inside = keysIfSameJson(value[index], parsed[index]);
      if (inside < 0) return -1;
      keys += inside;
    }
    return keys;
  }
  if (Array.isArray(value) || typeof (value as { toJSON?: unknown }).toJSON === 'function') return -1;
  const parsedObject = parsed as Record<string, unknown>;
  const object = value as Record<string, unknown>;
  // for...in rather than Object.keys: no array made per object. An enumerable key an object
  // inherits (never one of JSON.parse's, nor of the DTO classes) counts as a difference.
  let written = 0;
  for (const key in object) {
    const member = object[key];
    if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
    written++;
    if (!Object.hasOwn(object, key) || !Object.hasOwn(parsedObject, key)) return -1;
    const inside = keysIfSameJson(member, parsedObject[key]);
    if (inside < 0) return -1;
    keys += inside;
  }
  let parsedKeys = 0;
  for (const key in parsedObject) if (Object.hasOwn(parsedObject, key)) parsedKeys++;
  return written === parsedKeys ? keys + parsedKeys : -1;
}
