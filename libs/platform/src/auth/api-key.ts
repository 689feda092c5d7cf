import { createHash, hash, randomBytes, timingSafeEqual } from 'node:crypto';

export const API_KEY_PREFIX = 'igw_';

/** A new API key: 32 random bytes, so a fast hash is as safe to store as a slow one. */
export function generateApiKey(): { key: string; prefix: string } {
  const key = `${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}`;
  return { key, prefix: key.slice(0, API_KEY_PREFIX.length + 6) };
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
