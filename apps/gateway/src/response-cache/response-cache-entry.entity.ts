import { Column, Entity, Index, PrimaryColumn } from 'typeorm';

/**
 * One response cache entry, when the cache lives in PostgreSQL (no REDIS_URL). The table is
 * UNLOGGED (its migration says so): a cache is worth losing in a crash, not a write-ahead log.
 */
@Entity({ name: 'response_cache_entries' })
@Index('response_cache_entries_account_stored', ['accountId', 'storedAt'])
@Index('response_cache_entries_expiry', ['expiresAt'])
export class ResponseCacheEntryEntity {
  @PrimaryColumn({ name: 'account_id', type: 'uuid' })
  accountId!: string;

  /** '' for the entries every key of the account reads. */
  @PrimaryColumn({ name: 'key_id', type: 'text' })
  keyId!: string;

  @PrimaryColumn({ type: 'text' })
  hash!: string;

  @Column({ name: 'writer_key_id', type: 'text' })
  writerKeyId!: string;

  @Column({ type: 'text' })
  model!: string;

  @Column({ type: 'bytea' })
  value!: Buffer;

  @Column({ type: 'integer' })
  bytes!: number;

  @Column({ name: 'stored_at', type: 'timestamptz' })
  storedAt!: Date;

  @Column({ name: 'expires_at', type: 'timestamptz' })
  expiresAt!: Date;
}
