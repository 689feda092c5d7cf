import { ApiProperty } from '@nestjs/swagger';
import { formatSpend, periodEndOf, periodStartOf } from '@igw/domain';
import type { ApiKeyEntity } from '../api-key.entity';
import { ResponseCacheSettingsDto } from '../../cache/dto/response-cache-settings.dto';
import { KeyBudgetDto, KeySpendDto } from './key-rules.dto';

/** A key as listed: never the key itself (only its hash is stored), with its rules and its spend in the current period. */
export class KeyDto {
  @ApiProperty() id!: string;
  @ApiProperty({ nullable: true, type: String }) name!: string | null;
  @ApiProperty({ description: 'First characters of the key, to recognise it' }) prefix!: string;
  @ApiProperty() accountId!: string;
  @ApiProperty() createdAt!: string;
  @ApiProperty({ nullable: true, type: String, description: 'When the key was revoked; null while it works' }) revokedAt!: string | null;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'string' } }) metadata!: Record<string, string>;
  @ApiProperty({ type: KeyBudgetDto, nullable: true }) budget!: KeyBudgetDto | null;
  @ApiProperty({ type: [String], nullable: true, description: 'Models the key may call; null: every model' }) models!: string[] | null;
  @ApiProperty({ type: 'integer', nullable: true }) rpm!: number | null;
  @ApiProperty({ type: 'integer', nullable: true }) concurrency!: number | null;
  @ApiProperty({ type: String, nullable: true }) expiresAt!: string | null;
  @ApiProperty({ type: ResponseCacheSettingsDto, nullable: true, description: "The key's response cache setting as set, over its account's; null: the account's applies" })
  cache!: ResponseCacheSettingsDto | null;
  @ApiProperty({ type: KeySpendDto, nullable: true, description: 'What the key spent in its budget\'s current period; null without a budget' }) spend!: KeySpendDto | null;

  static from(key: ApiKeyEntity, now = new Date()): KeyDto {
    return {
      id: key.id,
      name: key.name,
      prefix: key.prefix,
      accountId: key.accountId,
      createdAt: key.createdAt.toISOString(),
      revokedAt: key.revokedAt?.toISOString() ?? null,
      metadata: key.metadata ?? {},
      budget: budgetOf(key),
      models: key.models,
      rpm: key.rateLimitRpm,
      concurrency: key.rateLimitConcurrency,
      expiresAt: key.expiresAt?.toISOString() ?? null,
      cache: key.cache,
      spend: spendOf(key, now),
    };
  }
}

export function budgetOf(key: Pick<ApiKeyEntity, 'budgetLimit' | 'budgetUnit' | 'budgetPeriod'>): KeyBudgetDto | null {
  if (key.budgetLimit === null || key.budgetUnit === null || key.budgetPeriod === null) return null;
  return { limit: key.budgetLimit, unit: key.budgetUnit, period: key.budgetPeriod };
}

/**
 * The key's spend in the period `now` falls in: the stored spend when it counts that period,
 * else 0 (no usage of the key has occurred in it yet).
 */
export function spendOf(key: Pick<ApiKeyEntity, 'budgetLimit' | 'budgetUnit' | 'budgetPeriod' | 'spendPeriodStart' | 'spentMicro' | 'spentUsd'>, now: Date): KeySpendDto | null {
  const budget = budgetOf(key);
  if (!budget) return null;
  const periodStart = periodStartOf(budget.period, now);
  const current = key.spendPeriodStart !== null && key.spendPeriodStart.getTime() >= periodStart.getTime();
  return {
    period: budget.period,
    spent: current ? formatSpend(BigInt(key.spentMicro), key.spentUsd, budget.unit) : '0',
    periodStart: periodStart.toISOString(),
    resetsAt: periodEndOf(budget.period, periodStart)?.toISOString() ?? null,
  };
}
