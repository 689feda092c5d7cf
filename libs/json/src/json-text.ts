// Reading a JSON text's structure without parsing it: strings are skipped whole with indexOf,
// so only the few characters between them are read one by one.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COLON = 0x3a;
const COMMA = 0x2c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;

/** The index of the quote closing the string that opens at `opening`, or -1. */
export function closingQuote(text: string, opening: number): number {
  let quote = text.indexOf('"', opening + 1);
  while (quote > 0) {
    let backslashes = 0;
    while (text.charCodeAt(quote - 1 - backslashes) === BACKSLASH) backslashes++;
    if (backslashes % 2 === 0) return quote;
    quote = text.indexOf('"', quote + 1);
  }
  return -1;
}

/**
 * How deeply objects and arrays may nest in a JSON body. Real requests (tool schemas
 * included) stay far below it; the limit keeps every recursive walk over a body
 * (class-transformer, class-validator, schema normalization, JSON.stringify) well inside
 * the stack, which tens of thousands of levels would overflow.
 */
export const MAX_JSON_DEPTH = 128;

/**
 * Whether a JSON text nests objects and arrays deeper than `limit`, found in one linear pass
 * without parsing: each string is skipped whole with indexOf (its brackets do not count), so
 * only the few characters between strings are read one by one. A text with no more opening
 * brackets than the limit, which is most bodies, is answered by counting them with indexOf.
 * A text that is not JSON may get either answer; its parse fails anyway.
 */
export function exceedsJsonDepth(text: string, limit = MAX_JSON_DEPTH): boolean {
  if (!hasMoreOpeningsThan(text, limit)) return false;
  let depth = 0;
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      index = closingQuote(text, index);
      if (index < 0) return false;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      if (++depth > limit) return true;
    } else if (code === CLOSE_BRACE || code === CLOSE_BRACKET) {
      depth--;
    }
  }
  return false;
}

function hasMoreOpeningsThan(text: string, limit: number): boolean {
  let count = 0;
  for (let index = text.indexOf('{'); index !== -1; index = text.indexOf('{', index + 1)) if (++count > limit) return true;
  for (let index = text.indexOf('['); index !== -1; index = text.indexOf('[', index + 1)) if (++count > limit) return true;
  return false;
}

/** Where a member's value lies in a JSON text, and how many object keys it holds at every depth. */
export interface JsonMemberSpan {
  start: number;
  end: number;
  keys: number;
}

/**
 * The value of `key` in a JSON object's text (a text JSON.parse accepted), or undefined when the
 * text is not an object, does not have the key, has it more than once, or has a key written with
 * an escape (which could spell `key` too). Linear in the text, whatever it holds.
 */
export function topLevelMember(text: string, key: string): JsonMemberSpan | undefined {
  let index = afterWhitespace(text, 0);
  if (text.charCodeAt(index) !== OPEN_BRACE) return undefined;
  let found: JsonMemberSpan | undefined;
  for (index = afterWhitespace(text, index + 1); text.charCodeAt(index) === QUOTE; ) {
    const keyEnd = closingQuote(text, index);
    if (keyEnd < 0) return undefined;
    for (let inKey = index + 1; inKey < keyEnd; inKey++) if (text.charCodeAt(inKey) === BACKSLASH) return undefined;
    const named = keyEnd - index - 1 === key.length && text.startsWith(key, index + 1);
    const start = afterWhitespace(text, afterWhitespace(text, keyEnd + 1) + 1);
    const value = valueSpan(text, start);
    if (!value) return undefined;
    if (named) {
      if (found) return undefined;
      found = value;
    }
    index = afterWhitespace(text, value.end);
    if (text.charCodeAt(index) === COMMA) index = afterWhitespace(text, index + 1);
  }
  return found;
}

/** The JSON value that starts at `start`: where it ends and the object keys it holds (undefined for a string left open). */
function valueSpan(text: string, start: number): JsonMemberSpan | undefined {
  const first = text.charCodeAt(start);
  if (first === QUOTE) {
    const end = closingQuote(text, start);
    return end < 0 ? undefined : { start, end: end + 1, keys: 0 };
  }
  if (first !== OPEN_BRACE && first !== OPEN_BRACKET) {
    // A number, true, false or null: up to the comma, bracket or whitespace after it.
    let end = start + 1;
    while (end < text.length && !endsLiteral(text.charCodeAt(end))) end++;
    return { start, end, keys: 0 };
  }
  let depth = 0;
  let keys = 0;
  for (let index = start; index < text.length; index++) {
    const code = text.charCodeAt(index);
    if (code === QUOTE) {
      index = closingQuote(text, index);
      if (index < 0) return undefined;
      // A string followed by a colon is a key.
      if (text.charCodeAt(afterWhitespace(text, index + 1)) === COLON) keys++;
    } else if (code === OPEN_BRACE || code === OPEN_BRACKET) {
      depth++;
    } else if ((code === CLOSE_BRACE || code === CLOSE_BRACKET) && --depth === 0) {
      return { start, end: index + 1, keys };
    }
  }
  return undefined;
}

function endsLiteral(code: number): boolean {
  return code === COMMA || code === CLOSE_BRACE || code === CLOSE_BRACKET || isJsonWhitespace(code);
}

function isJsonWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x0d || code === 0x09;
}

function afterWhitespace(text: string, index: number): number {
  while (isJsonWhitespace(text.charCodeAt(index))) index++;
  return index;
}
