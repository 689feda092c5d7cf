import { promisify } from 'node:util';
import { constants as zlibConstants, deflateRaw, inflateRaw, inflateRawSync } from 'node:zlib';
import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { responseCacheEvictions, responseCacheLookups, responseCacheSavedCredits, responseCacheStoredBytes } from '../telemetry/gateway-metrics';
import { RESPONSE_CACHE_STORE, type CacheEntryAddress, type CacheInvalidation, type ResponseCacheStore, type StoredEntry } from './response-cache-store';

const deflateRawAsync = promisify(deflateRaw);
const inflateRawAsync = promisify(inflateRaw);
/** Entries up to this size are inflated on the event loop: a thread pool hop costs more. */
const INFLATED_INLINE_BYTES = 16 * 1024;

export type CacheLookup = { status: 'hit'; entry: StoredEntry; ageSeconds: number } | { status: 'miss' } | { status: 'bypass' };

/**
 * The response cache's store as the request path uses it, never in its way: a look-up slower
 * than RESPONSE_CACHE_LOOKUP_TIMEOUT_MS is a miss, a store that fails is a bypass (a warning
 * when it starts failing, a line when it answers again), and an answer is stored after it
 * left, compressed off the event loop, never awaited. Values over RESPONSE_CACHE_MAX_ENTRY_BYTES
 * compressed are not stored.
 */
@Injectable()
export class ResponseCache implements OnModuleDestroy {
  private readonly logger = new Logger('ResponseCache');
  private failing = false;
  private readonly lookupTimeoutMs: number;
  private readonly maxEntryBytes: number;
  private readonly accountBytes: number;
  /** Writes under way, so a shutdown lets them finish before the store closes. */
  private readonly writes = new Set<Promise<unknown>>();

  constructor(
    @Inject(RESPONSE_CACHE_STORE) private readonly entries: ResponseCacheStore,
    @Inject(SERVICE_SETTINGS) { env }: ServiceSettings,
  ) {
    this.lookupTimeoutMs = env.RESPONSE_CACHE_LOOKUP_TIMEOUT_MS;
    this.maxEntryBytes = env.RESPONSE_CACHE_MAX_ENTRY_BYTES;
    this.accountBytes = env.RESPONSE_CACHE_ACCOUNT_BYTES;
  }

  /** The entry at `address` if it is at most `maxAgeSeconds` old, its value as it was stored. */
  async lookup(address: CacheEntryAddress, maxAgeSeconds: number): Promise<CacheLookup> {
    const found = await this.withinTimeout(this.entries.get(address));
    if (found === 'failed') return this.counted({ status: 'bypass' });
    if (found === 'late' || found === undefined) return this.counted({ status: 'miss' });
    const ageSeconds = Math.max(0, Math.floor((Date.now() - found.storedAt) / 1000));
    if (ageSeconds > maxAgeSeconds) return this.counted({ status: 'miss' });
    let value: Buffer;
    try {
      value = found.value.length <= INFLATED_INLINE_BYTES ? inflateRawSync(found.value) : await inflateRawAsync(found.value);
    } catch {
      // Not a value this gateway wrote: a miss, and the answer stored anew replaces it.
      return this.counted({ status: 'miss' });
    }
    return this.counted({ status: 'hit', entry: { value, storedAt: found.storedAt }, ageSeconds });
  }

  /** Keeps `value` at `address` for `ttlSeconds`, in the background. */
  store(address: CacheEntryAddress, value: Buffer, ttlSeconds: number): void {
    const write = deflateRawAsync(value, { level: zlibConstants.Z_BEST_SPEED })
      .then(async (compressed) => {
        if (compressed.length > this.maxEntryBytes) return;
        const evicted = await this.entries.set(address, compressed, ttlSeconds, this.accountBytes);
        this.answered();
        responseCacheStoredBytes.inc(responseCacheStoredBytes.series(this.entries.backend), compressed.length);
        if (evicted > 0) responseCacheEvictions.inc(responseCacheEvictions.series(this.entries.backend), evicted);
      })
      .catch((error: unknown) => this.failed(error))
      .finally(() => this.writes.delete(write));
    this.writes.add(write);
  }

  /** Removes the entries `invalidation` names (DELETE /admin/v1/cache, through billing). */
  invalidate(invalidation: CacheInvalidation): Promise<number> {
    return this.entries.invalidate(invalidation);
  }

  /** Counts, in micro-credits, what a hit did not charge. */
  countSaved(creditsMicro: bigint): void {
    if (creditsMicro > 0n) responseCacheSavedCredits.inc(responseCacheSavedCredits.series(this.entries.backend), creditsMicro);
  }

  async onModuleDestroy(): Promise<void> {
    await Promise.all([...this.writes]);
    await this.entries.close();
  }

  private async withinTimeout(lookup: Promise<StoredEntry | undefined>): Promise<StoredEntry | undefined | 'late' | 'failed'> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => (timer = setTimeout(resolve, this.lookupTimeoutMs, 'late')));
    try {
      const found = await Promise.race([
        lookup.then(
          (entry) => {
            this.answered();
            return entry;
          },
          (error: unknown) => {
            this.failed(error);
            return 'failed' as const;
          },
        ),
        late,
      ]);
      return found;
    } finally {
      clearTimeout(timer);
    }
  }

  private counted(lookup: CacheLookup): CacheLookup {
    responseCacheLookups.inc(responseCacheLookups.series(lookup.status, this.entries.backend));
    return lookup;
  }

  private answered(): void {
    if (!this.failing) return;
    this.failing = false;
    this.logger.log(`The response cache's ${this.entries.backend} answers again: requests read and keep answers there.`);
  }

  private failed(error: unknown): void {
    if (this.failing) return;
    this.failing = true;
    this.logger.warn(`The response cache's ${this.entries.backend} failed (${error instanceof Error ? error.message : String(error)}): requests go on without the cache until it answers again.`);
  }
}
