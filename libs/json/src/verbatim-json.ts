import { isAscii } from 'node:buffer';
import { topLevelMember } from './json-text';

/** Members shorter than this are serialized as usual: looking for their text costs about what it saves. */
const SMALLEST_KEPT_CHARACTERS = 16_384;

/**
 * The client's own JSON of a value the gateway forwards unchanged (a chat request's `messages`),
 * so that the upstream body carries those bytes rather than the value serialized again:
 * `JSON.stringify` and UTF-8 encoding cost about a millisecond per 250 KB on the request's
 * thread. What JSON.parse made of the text is kept with it, and the bytes are handed out only
 * for a value that, at that moment, still says what the text says (`bytesFor`).
 */
export class JsonSource {
  private constructor(
    /** The UTF-8 bytes of the value's JSON text. */
    private readonly bytes: Buffer,
    /** What JSON.parse made of the text. */
    private readonly parsed: unknown,
    /** The object keys written in the text, at every depth: more than `parsed` has when a key was written twice. */
    private readonly keys: number,
  ) {}

  /**
   * The JSON text of the member `key` of a parsed body (`text`, decoded from `bytes`), when the
   * member is long enough to be worth it and written plainly (see topLevelMember).
   */
  static ofMember(body: { text: string; bytes: Buffer; parsed: unknown }, key: string): JsonSource | undefined {
    if (body.text.length < SMALLEST_KEPT_CHARACTERS) return undefined;
    const parsed = (body.parsed as Record<string, unknown> | null)?.[key];
    if (typeof parsed !== 'object' || parsed === null) return undefined;
    const span = topLevelMember(body.text, key);
    if (!span || span.end - span.start < SMALLEST_KEPT_CHARACTERS) return undefined;
    // An ASCII body's characters are its bytes; any other text is encoded again (it is what JSON.parse read).
    const bytes = isAscii(body.bytes) ? body.bytes.subarray(span.start, span.end) : Buffer.from(body.text.slice(span.start, span.end));
    return new JsonSource(bytes, parsed, span.keys);
  }

  /**
   * The bytes, when JSON.stringify of `value` (the gateway's own copy, validated) would parse to
   * what they parse to and they name no key twice; otherwise undefined, and the value is to be
   * serialized as usual.
   */
  bytesFor(value: unknown): Buffer | undefined {
    return keysIfSameJson(value, this.parsed) === this.keys ? this.bytes : undefined;
  }
}

/**
 * A body as JSON, like JSON.stringify, except that a top-level member given a source in
 * `sources`, and still saying what that source says, is written as the source's bytes (after
 * the other members). Returns a Buffer when it wrote one.
 */
export function encodeJson(value: unknown, sources?: Readonly<Record<string, JsonSource>>): string | Buffer {
  if (sources === undefined || typeof value !== 'object' || value === null || Array.isArray(value)) return JSON.stringify(value);
  const body = value as Record<string, unknown>;
  let verbatim: Array<[string, Buffer]> | undefined;
  for (const key of Object.keys(sources)) {
    const bytes = Object.hasOwn(body, key) ? sources[key].bytesFor(body[key]) : undefined;
    if (bytes) (verbatim ??= []).push([key, bytes]);
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
