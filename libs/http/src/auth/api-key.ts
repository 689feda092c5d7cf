import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_KEY_PREFIX = 'igw_';
/** The prefix and 32 random bytes in base64url. */
export const API_KEY_LENGTH = API_KEY_PREFIX.length + 43;

/** A new API key: 32 random bytes, so a fast hash is as safe to store as a slow one. */
export function generateApiKey(): { key: string; prefix: string } {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { key, prefix: apiKeyPrefix(key) };
}

/** The key's first ten characters, which billing shows to tell keys apart: never enough to use it. */
export function apiKeyPrefix(key: string): string {
  return key.slice(0, API_KEY_PREFIX.length + 6);
}

/**
 * 32 bytes in base64url are 43 characters, and the last one carries only 2 bits of the key
 * (its low 4 bits are zero), so it is one of 16 characters.
 */
const WELL_FORMED_API_KEY = /^igw_[A-Za-z0-9_-]{42}[AEIMQUYcgkosw048]$/;

/**
 * Whether a presented key could be one generateApiKey made. Anything else is refused without
 * hashing it, caching it or asking billing: a flood of made-up keys costs a regular expression.
 */
export function isWellFormedApiKey(key: string): boolean {
  return key.length === API_KEY_LENGTH && WELL_FORMED_API_KEY.test(key);
}

export function hashApiKey(key: string): string {
  return hash('sha256', key, 'hex');
}

/** Compares two secrets in constant time (hashing first makes the lengths equal). */
export function secretsEqual(presented: string, expected: string): boolean {
  const a = createHash('sha256').update(presented).digest();
  const b = createHash('sha256').update(expected).digest();
  return timingSafeEqual(a, b);
}
