// Small deterministic helpers shared by all wire formats.
import { randomBytes } from 'node:crypto';

const WHITESPACE = /\s+/;

/**
 * The emulator's "tokeniser": a token is a whitespace-separated word. Simple on
 * purpose, so tests can compute expected usage by hand.
 */
export function words(text: string): string[] {
  const trimmed = text.trim();
  return trimmed === '' ? [] : trimmed.split(WHITESPACE);
}

export function countWords(text: string): number {
  return words(text).length;
}

const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789';

/** Random bytes drawn ahead, many ids' worth at a time: one call for random bytes per id cost more than the rest of a stream's answer. */
let pool = Buffer.alloc(0);
let poolAt = 0;
const POOL_BYTES = 4096;

/** A random alphanumeric id of `length` characters, e.g. for `chatcmpl-<id>`. */
export function randomId(length = 24): string {
  if (poolAt + length > pool.length) {
    pool = randomBytes(Math.max(POOL_BYTES, length));
    poolAt = 0;
  }
  let id = '';
  for (let i = 0; i < length; i++) id += ALPHABET[pool[poolAt + i] % ALPHABET.length];
  poolAt += length;
  return id;
}

/** 32-bit FNV-1a hash of a string (UTF-16 code units). */
export function hashText(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash >>> 0;
}


export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** A positive integer, or undefined when absent/null; NaN when present but invalid. */
export function optionalPositiveInt(value: unknown): number | undefined {
  if (value === undefined || value === null) return undefined;
  return typeof value === 'number' && Number.isInteger(value) && value > 0 ? value : Number.NaN;
}
