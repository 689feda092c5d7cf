import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn, UpdateDateColumn } from 'typeorm';
import type { AccountPlan, ResponseCacheSettings } from '@igw/contracts';

export type AccountStatus = 'active' | 'suspended';
export type AutoDebitStatus = 'enabled' | 'disabled';

@Entity({ name: 'accounts' })
export class AccountEntity {
  @PrimaryGeneratedColumn('uuid')
  id!: string;

  @Column({ type: 'text' })
  name!: string;

  @Column({ type: 'text' })
  plan!: AccountPlan;

  /** Always equal to the sum of this account's ledger entries. */
  @Column({ name: 'balance_micro', type: 'bigint' })
  balanceMicro!: string;

  /** Bumped on every balance change so caches can drop stale broadcasts. */
  @Column({ name: 'balance_version', type: 'bigint', default: 0 })
  balanceVersion!: string;

  /**
   * Sum of every usage charge applied so far. With the balance it lets gateways tell which of
   * the spending they metered is already in a balance they were told about.
   */
  @Column({ name: 'usage_spent_micro', type: 'bigint', default: 0 })
  usageSpentMicro!: string;

  @Column({ name: 'low_balance_threshold_micro', type: 'bigint' })
  lowBalanceThresholdMicro!: string;

  @Column({ type: 'text', default: 'active' })
  status!: AccountStatus;

  @Column({ name: 'auto_debit', type: 'text', default: 'disabled' })
  autoDebit!: AutoDebitStatus;

  /** Override of the gateway's requests-per-minute limit (per key); null uses the configured default. */
  @Column({ name: 'rate_limit_rpm', type: 'integer', nullable: true })
  rateLimitRpm!: number | null;

  /** Override of the gateway's concurrent-requests limit (per key); null uses the configured default. */
  @Column({ name: 'rate_limit_concurrency', type: 'integer', nullable: true })
  rateLimitConcurrency!: number | null;

  /** The response cache for the account's keys (each key's own setting over it); null: the defaults, cache off. */
  @Column({ type: 'jsonb', nullable: true })
  cache!: ResponseCacheSettings | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
