import { Column, CreateDateColumn, Entity, Index, JoinColumn, ManyToOne, PrimaryGeneratedColumn } from 'typeorm';
import type { BudgetPeriod, BudgetUnit } from '@igw/domain';
import type { ResponseCacheSettings } from '@igw/contracts';
import { AccountEntity } from '../accounts/account.entity';

@Entity({ name: 'api_keys' })
export class ApiKeyEntity {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Index()
  @Column({ name: 'account_id', type: 'uuid' })
  accountId!: string;

  @ManyToOne(() => AccountEntity, { onDelete: 'CASCADE' })
  @JoinColumn({ name: 'account_id' })
  account?: AccountEntity;

  @Column({ type: 'text', nullable: true })
  name!: string | null;

  /** The first characters of the key, to recognise it in lists; the key itself is never stored. */
  @Column({ type: 'text' })
  prefix!: string;

  @Index({ unique: true })
  @Column({ name: 'key_hash', type: 'text' })
  keyHash!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @Column({ name: 'revoked_at', type: 'timestamptz', nullable: true })
  revokedAt!: Date | null;

  /** Free-form labels (owner, team, purpose), string to string. */
  @Column({ type: 'jsonb', default: () => "'{}'" })
  metadata!: Record<string, string>;

  /** The budget as the admin set it, an exact decimal in `budgetUnit`; null: no budget. */
  @Column({ name: 'budget_limit', type: 'text', nullable: true })
  budgetLimit!: string | null;

  @Column({ name: 'budget_unit', type: 'text', nullable: true })
  budgetUnit!: BudgetUnit | null;

  @Column({ name: 'budget_period', type: 'text', nullable: true })
  budgetPeriod!: BudgetPeriod | null;

  /** Model ids, aliases or patterns the key may call; null: every model. */
  @Column({ type: 'jsonb', nullable: true })
  models!: string[] | null;

  /** The key's own requests per minute; the account's limit still applies when lower. */
  @Column({ name: 'rate_limit_rpm', type: 'integer', nullable: true })
  rateLimitRpm!: number | null;

  /** The key's own requests in flight; the account's limit still applies when lower. */
  @Column({ name: 'rate_limit_concurrency', type: 'integer', nullable: true })
  rateLimitConcurrency!: number | null;

  @Column({ name: 'expires_at', type: 'timestamptz', nullable: true })
  expiresAt!: Date | null;

  /** The key's response cache setting, over its account's; null: the account's applies. */
  @Column({ type: 'jsonb', nullable: true })
  cache!: ResponseCacheSettings | null;

  /**
   * Start of the budget period `spentMicro` and `spentUsd` count (null without a budget). They
   * equal the sum of the key's usage rows in the ledger that occurred in that period, and move
   * in the transaction that writes those rows (key-spend.ts).
   */
  @Column({ name: 'spend_period_start', type: 'timestamptz', nullable: true })
  spendPeriodStart!: Date | null;

  @Column({ name: 'spent_micro', type: 'bigint', default: 0 })
  spentMicro!: string;

  @Column({ name: 'spent_usd', type: 'numeric', precision: 38, scale: 15, default: 0 })
  spentUsd!: string;

  /** Every usage charge of the key ever applied: gateways compare it with what they metered, as for the account. */
  @Column({ name: 'usage_applied_micro', type: 'bigint', default: 0 })
  usageAppliedMicro!: string;

  /** Bumped on every change of the spend or the rules, so gateways drop stale broadcasts. */
  @Column({ name: 'spend_version', type: 'bigint', default: 0 })
  spendVersion!: string;
}
