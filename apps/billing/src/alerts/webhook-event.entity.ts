import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

export type WebhookEventStatus = 'pending' | 'delivered' | 'failed' | 'discarded';

/**
 * The outbox of alerts: one row per crossing, written in the transaction that caused it, so an
 * alert exists exactly when its cause was committed. The delivery job's id is the row's id.
 */
@Entity({ name: 'webhook_events' })
@Index(['accountId', 'createdAt'])
@Index('IDX_webhook_events_pending', ['createdAt'], { where: `status = 'pending'` })
export class WebhookEventEntity {
  /** The event's id, as the receiver sees it (body `id`, header `X-Gateway-Event-Id`). */
  @PrimaryColumn({ type: 'uuid' })
  id!: string;

  @Column({ name: 'account_id', type: 'uuid' })
  accountId!: string;

  /** `balance.below_threshold`, `key.budget_threshold`, `key.budget_exhausted`. */
  @Column({ type: 'text' })
  type!: string;

  /**
   * What makes a crossing one event: `balance:<account>:<balance version>` or
   * `key:<key>:<period start>:<percent>`. Unique, so the same crossing is never recorded twice.
   */
  @Index({ unique: true })
  @Column({ name: 'dedupe_key', type: 'text' })
  dedupeKey!: string;

  /** The JSON body exactly as sent (and signed) on every attempt. */
  @Column({ type: 'text' })
  body!: string;

  @Column({ type: 'text', default: 'pending' })
  status!: WebhookEventStatus;

  @Column({ type: 'integer', default: 0 })
  attempts!: number;

  /** The HTTP status of the last attempt; null when it got no answer. */
  @Column({ name: 'last_status', type: 'integer', nullable: true })
  lastStatus!: number | null;

  /** Why the last attempt failed (status and the start of the answer, or the network error). */
  @Column({ name: 'last_error', type: 'text', nullable: true })
  lastError!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'delivered_at', type: 'timestamptz', nullable: true })
  deliveredAt!: Date | null;
}
