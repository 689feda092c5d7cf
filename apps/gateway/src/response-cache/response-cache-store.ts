/** Where one stored answer lives. */
export interface CacheEntryAddress {
  accountId: string;
  /** The key whose entries these are, or '' for entries every key of the account reads (scope `account`). */
  keyId: string;
  /** The key that stored it, whatever the scope: invalidation by key removes what it wrote. */
  writerKeyId: string;
  /** The catalogue model id, so entries can be removed by model. */
  model: string;
  /** Hex SHA-256 of the request's canonical form (requestCacheHash). */
  hash: string;
}

export interface StoredEntry {
  /** The value as stored (compressed by ResponseCache). */
  value: Buffer;
  /** When it was stored, epoch ms. */
  storedAt: number;
}

/** Which entries to remove: an account's, narrowed to one model and/or to what one key stored or reads alone. */
export interface CacheInvalidation {
  accountId: string;
  model?: string;
  keyId?: string;
}

/**
 * Where the response cache keeps entries: Redis, shared by every replica, when REDIS_URL is
 * set; else PostgreSQL. Each call rejects only when the store fails; ResponseCache turns that
 * into a miss or a bypass.
 */
export interface ResponseCacheStore {
  readonly backend: 'redis' | 'postgres';
  /** The entry, or undefined when there is none or it expired. */
  get(address: CacheEntryAddress): Promise<StoredEntry | undefined>;
  /**
   * Keeps `value` for `ttlSeconds`, replacing an entry at the same address; then removes the
   * account's oldest entries while its entries pass `accountBytes`. Returns how many it evicted.
   */
  set(address: CacheEntryAddress, value: Buffer, ttlSeconds: number, accountBytes: number): Promise<number>;
  /** Removes the entries `invalidation` names; returns how many. */
  invalidate(invalidation: CacheInvalidation): Promise<number>;
  close(): Promise<void>;
}

export const RESPONSE_CACHE_STORE = Symbol('RESPONSE_CACHE_STORE');
