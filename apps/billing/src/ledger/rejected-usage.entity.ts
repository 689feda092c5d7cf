import { Column, CreateDateColumn, Entity, Index, PrimaryGeneratedColumn } from 'typeorm';

/**
 * A usage event billing refused to apply (see `usage-event-validation.ts`), kept as it came
 * so an operator can look at it: the queue is a trust boundary, and an event that does not
 * add up is either a bug or someone writing to the queue who should not.
 */
@Entity({ name: 'rejected_usage' })
@Index(['rejectedAt'])
export class RejectedUsageEntity {
  @PrimaryGeneratedColumn({ type: 'bigint' })
  id!: string;

  /** The event's request id when it has one; unique, so a redelivered event is kept once. */
  @Index({ unique: true })
  @Column({ name: 'request_id', type: 'text', nullable: true })
  requestId!: string | null;

  /** As the event named it (not necessarily an account that exists). */
  @Column({ name: 'account_id', type: 'text', nullable: true })
  accountId!: string | null;

  /** Why it was refused, e.g. `creditsMicro 5 does not match its units at its prices (900)`. */
  @Column({ type: 'text' })
  reason!: string;

  /** The event as received. */
  @Column({ type: 'jsonb' })
  event!: unknown;

  @CreateDateColumn({ name: 'rejected_at', type: 'timestamptz' })
  rejectedAt!: Date;
}
