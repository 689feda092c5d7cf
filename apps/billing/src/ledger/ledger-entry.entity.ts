import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

export type LedgerEntryKind = 'usage' | 'credit';

/** One change of an account's balance. The balance is always the sum of these. */
@Entity({ name: 'ledger_entries' })
@Index(['accountId', 'occurredAt'])
export class LedgerEntryEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId!: string;

  @Column({ type: 'text' })
  kind!: LedgerEntryKind;

  /** The gateway's request id for usage; its uniqueness makes applying an event idempotent. */
  @Index({ unique: true })
  @Column({ name: 'request_id', type: 'text', nullable: true })
  requestId!: string | null;

  /** The client's X-Client-Request-Id for usage, when it sent a well-formed one: lets a client find its own requests. */
  @Column({ name: 'client_request_id', type: 'text', nullable: true })
  clientRequestId!: string | null;

  @Column({ name: 'key_id', type: 'uuid', nullable: true })
  keyId!: string | null;

  @Column({ type: 'text', nullable: true })
  model!: string | null;

  @Column({ type: 'text', nullable: true })
  endpoint!: string | null;

  /** The deployment that served a usage entry (`<connection>/<upstream>`); null for credits and for usage recorded without one. */
  @Column({ type: 'text', nullable: true })
  deployment!: string | null;

  @Column({ type: 'jsonb', nullable: true })
  units!: Record<string, number> | null;

  /** Signed change of the balance: negative for usage, positive for credits added. */
  @Column({ name: 'amount_micro', type: 'bigint' })
  amountMicro!: string;

  /** USD value of the entry, exact decimal. */
  @Column({ type: 'numeric', precision: 38, scale: 15 })
  usd!: string;

  @Column({ name: 'catalogue_revision', type: 'integer', nullable: true })
  catalogueRevision!: number | null;

  /** The catalogue prices this usage was charged at. */
  @Column({ type: 'jsonb', nullable: true })
  prices!: Array<{ unit: string; price: number; per: number }> | null;

  /** `hit`: answered from the response cache, charged at its `prices` (the model's cache prices); `miss`: looked up there and not found; null: not asked (and every credit). */
  @Column({ type: 'text', nullable: true })
  cache!: 'hit' | 'miss' | null;

  /** For a hit: the same units at the model's full prices minus the charge, USD, exact decimal (unbounded numeric: the event's up to 18 decimals stay exact). */
  @Column({ name: 'cache_saved_usd', type: 'numeric', nullable: true })
  cacheSavedUsd!: string | null;

  @Column({ type: 'text', nullable: true })
  reason!: string | null;

  @Column({ name: 'occurred_at', type: 'timestamptz' })
  occurredAt!: Date;

  @CreateDateColumn({ name: 'recorded_at', type: 'timestamptz' })
  recordedAt!: Date;
}
