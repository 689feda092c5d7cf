import type { DataSource } from 'typeorm';
import { openServiceDataSource } from '@igw/persistence';
import { gatewayPersistence } from '../gateway.persistence';
import type { CacheEntryAddress, CacheInvalidation, ResponseCacheStore, StoredEntry } from './response-cache-store';

const TABLE = 'gateway.response_cache_entries';
/** Expired rows removed per sweep, and how often: reads skip them meanwhile. */
const SWEPT_PER_ROUND = 5_000;
const SWEEP_EVERY_MS = 60_000;
/** Connections the cache may hold: look-ups are one indexed read each, writes happen after the answer. */
const POOL_SIZE = 4;

/**
 * The response cache in PostgreSQL (no REDIS_URL): the gateway's own schema, one UNLOGGED
 * table. A write replaces the entry at its address, then removes the account's oldest entries
 * while its live ones pass the budget, never another account's; expired rows are swept in
 * bounded rounds.
 */
export class PostgresResponseCacheStore implements ResponseCacheStore {
  readonly backend = 'postgres';
  private readonly sweeper: NodeJS.Timeout;

  /** Opens the gateway's data source and brings its schema up to date (under the migrations' advisory lock). */
  static async open(url: string): Promise<PostgresResponseCacheStore> {
    return new PostgresResponseCacheStore(await openServiceDataSource(url, gatewayPersistence, POOL_SIZE));
  }

  constructor(private readonly dataSource: DataSource) {
    this.sweeper = setInterval(() => void this.sweep().catch(() => undefined), SWEEP_EVERY_MS);
    this.sweeper.unref();
  }

  async get({ accountId, keyId, hash }: CacheEntryAddress): Promise<StoredEntry | undefined> {
    const rows = (await this.dataSource.query(`SELECT value, stored_at FROM ${TABLE} WHERE account_id = $1 AND key_id = $2 AND hash = $3 AND expires_at > now()`, [accountId, keyId, hash])) as Array<{ value: Buffer; stored_at: Date }>;
    const [row] = rows;
    return row ? { value: row.value, storedAt: row.stored_at.getTime() } : undefined;
  }

  async set(address: CacheEntryAddress, value: Buffer, ttlSeconds: number, accountBytes: number): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      await manager.query(
        `INSERT INTO ${TABLE} (account_id, key_id, hash, writer_key_id, model, value, bytes, stored_at, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, now(), now() + make_interval(secs => $8))
         ON CONFLICT (account_id, key_id, hash) DO UPDATE SET writer_key_id = EXCLUDED.writer_key_id, model = EXCLUDED.model, value = EXCLUDED.value,
           bytes = EXCLUDED.bytes, stored_at = EXCLUDED.stored_at, expires_at = EXCLUDED.expires_at`,
        [address.accountId, address.keyId, address.hash, address.writerKeyId, address.model, value, value.length, ttlSeconds],
      );
      // The newest first: what lies past the budget, counting from the newest, goes.
      const evicted = (await manager.query(
        `DELETE FROM ${TABLE} entry USING (
           SELECT key_id, hash, sum(bytes) OVER (ORDER BY stored_at DESC, key_id, hash) AS held
           FROM ${TABLE} WHERE account_id = $1 AND expires_at > now()
         ) ranked
         WHERE entry.account_id = $1 AND entry.key_id = ranked.key_id AND entry.hash = ranked.hash AND ranked.held > $2
         RETURNING 1`,
        [address.accountId, accountBytes],
      )) as [unknown[], number] | unknown[];
      return rowCount(evicted);
    });
  }

  async invalidate({ accountId, model, keyId }: CacheInvalidation): Promise<number> {
    const removed = (await this.dataSource.query(
      `DELETE FROM ${TABLE} WHERE account_id = $1 AND ($2::text IS NULL OR model = $2) AND ($3::text IS NULL OR key_id = $3 OR writer_key_id = $3) AND expires_at > now() RETURNING 1`,
      [accountId, model ?? null, keyId ?? null],
    )) as [unknown[], number] | unknown[];
    return rowCount(removed);
  }

  async close(): Promise<void> {
    clearInterval(this.sweeper);
    await this.dataSource.destroy();
  }

  /** Removes a bounded round of expired rows. */
  async sweep(): Promise<number> {
    const swept = (await this.dataSource.query(`DELETE FROM ${TABLE} WHERE ctid IN (SELECT ctid FROM ${TABLE} WHERE expires_at <= now() LIMIT ${SWEPT_PER_ROUND}) RETURNING 1`)) as [unknown[], number] | unknown[];
    return rowCount(swept);
  }
}

/** TypeORM's postgres driver answers a DELETE ... RETURNING with [rows, count]. */
function rowCount(result: [unknown[], number] | unknown[]): number {
  return Array.isArray(result[0]) ? (result as [unknown[], number])[1] : result.length;
}
