import { Column, CreateDateColumn, Entity, JoinColumn, OneToOne, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import { AccountEntity } from '../accounts/account.entity';

/** The one webhook of an account: where its alerts are POSTed, and what they are signed with. */
@Entity({ name: 'account_webhooks' })
export class AccountWebhookEntity {
  @PrimaryColumn({ name: 'account_id', type: 'uuid' })
  accountId!: string;

  @OneToOne(() => AccountEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: AccountEntity;

  /** http or https, chosen by the admin. */
  @Column({ type: 'text' })
  url!: string;

  /**
   * The HMAC-SHA256 key of the signature. Kept as given (signing needs it), never returned by
   * the API nor written to a log.
   */
  @Column({ type: 'text' })
  secret!: string;

  /** `balance.below_threshold` is sent when the balance falls from at least this to under it; null: never. */
  @Column({ name: 'balance_threshold_micro', type: 'bigint', nullable: true })
  balanceThresholdMicro!: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
