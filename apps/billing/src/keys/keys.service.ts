import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { effectiveResponseCache, ErrorMessages, type AccountLimits, type AccountPlan, type AccountStatus, type KeyRules, type KeySpendWire, type ResolvedKey, type ResponseCacheSettings } from '@igw/contracts';
import { budgetLimitMicro, MAX_BUDGET_MICRO, periodStartOf, type BudgetPeriod } from '@igw/domain';
import { MessagingService } from '@igw/messaging';
import { GatewayException, generateApiKey, hashApiKey } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { DataSource, IsNull } from 'typeorm';
import { AccountsService } from '../accounts/accounts.service';
import { responseCacheSettingsOf } from '../cache/dto/response-cache-settings.dto';
import { ApiKeyEntity } from './api-key.entity';
import { KeyDto } from './dto/key.dto';
import type { KeyRulesDto } from './dto/key-rules.dto';
import { KeySpendAnnouncer, KeySpendLedger } from './key-spend';

export interface CreatedKey extends KeyDto {
  key: string;
}

const KEY_HASH = /^[0-9a-f]{64}$/;

type RuleColumns = Pick<
  ApiKeyEntity,
  'name' | 'metadata' | 'budgetLimit' | 'budgetUnit' | 'budgetPeriod' | 'models' | 'rateLimitRpm' | 'rateLimitConcurrency' | 'expiresAt' | 'cache'
>;

@Injectable()
export class KeysService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly accounts: AccountsService,
    private readonly messaging: MessagingService,
    private readonly keySpend: KeySpendLedger,
    private readonly spendAnnouncer: KeySpendAnnouncer,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  /** Creates a key with its rules; the only time the key itself exists outside the client is this return value. */
  async create(accountId: string, rules: KeyRulesDto): Promise<CreatedKey> {
    await this.accounts.get(accountId);
    const columns = this.ruleColumns(rules, undefined);
    const { key, prefix } = generateApiKey();
    const keyHash = hashApiKey(key);
    // A new key has no usage: its spend in the current period is nothing.
    const periodStart = columns.budgetPeriod ? periodStartOf(columns.budgetPeriod, new Date()) : null;
    const saved = await this.dataSource.getRepository(ApiKeyEntity).save({ accountId, ...columns, prefix, keyHash, revokedAt: null, spendPeriodStart: periodStart });
    // A gateway that saw this hash fail before keeps a short negative cache entry; drop it.
    await this.messaging.publish('billing.keys.created', { keyHash });
    const created = await this.dataSource.getRepository(ApiKeyEntity).findOneByOrFail({ id: saved.id });
    return { ...KeyDto.from(created), key };
  }

  async get(keyId: string): Promise<KeyDto> {
    const key = await this.dataSource.getRepository(ApiKeyEntity).findOneBy({ id: keyId });
    if (!key) throw new GatewayException(HttpStatus.NOT_FOUND, `API key ${keyId} not found`);
    return KeyDto.from(key);
  }

  /**
   * Changes the rules sent (null removes one). A changed budget's spend is summed again from
   * the ledger for the current period, under the key's row lock (key-spend.ts). Once committed,
   * every gateway drops what it cached about the account's keys and hears the new spend.
   */
  async update(keyId: string, rules: KeyRulesDto): Promise<KeyDto> {
    const { key, spend } = await this.dataSource.transaction(async (manager) => {
      const repository = manager.getRepository(ApiKeyEntity);
      const current = await repository.findOne({ where: { id: keyId }, lock: { mode: 'pessimistic_write' } });
      if (!current) throw new GatewayException(HttpStatus.NOT_FOUND, `API key ${keyId} not found`);
      const changes: Partial<ApiKeyEntity> = this.ruleColumns(rules, current);
      const next = { ...current, ...changes };
      const budgetChanged = next.budgetLimit !== current.budgetLimit || next.budgetUnit !== current.budgetUnit || next.budgetPeriod !== current.budgetPeriod;
      if (budgetChanged) {
        const state = await this.keySpend.recompute(manager, keyId, next.budgetPeriod, new Date());
        Object.assign(changes, { spendPeriodStart: state.periodStart, spentMicro: state.spentMicro.toString(), spentUsd: state.spentUsd });
      }
      changes.spendVersion = String(BigInt(current.spendVersion) + 1n);
      await repository.update({ id: keyId }, changes);
      const updated = await repository.findOneByOrFail({ id: keyId });
      return { key: updated, spend: spendWire(updated) };
    });
    await this.messaging.publish('billing.account.changed', { accountId: key.accountId });
    await this.spendAnnouncer.now(spend);
    return KeyDto.from(key);
  }

  /**
   * The columns of the rules sent: a field left out keeps `current`'s value (a new key's
   * default), null clears it. A budget whose limit overflows what the ledger can count is a 400.
   */
  private ruleColumns(rules: KeyRulesDto, current: RuleColumns | undefined): RuleColumns {
    const keep = <K extends keyof RuleColumns>(field: K, fallback: RuleColumns[K]): RuleColumns[K] => (current ? current[field] : fallback);
    const budget = rules.budget === undefined ? undefined : rules.budget;
    if (budget && budgetLimitMicro(budget.limit, budget.unit, this.settings.env.CREDITS_PER_USD) > MAX_BUDGET_MICRO) {
      throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} budget.limit: Expected a budget of at most ${MAX_BUDGET_MICRO / 1_000_000n} credits. Received ${budget.limit} ${budget.unit}`);
    }
    return {
      name: rules.name === undefined ? keep('name', null) : rules.name,
      metadata: rules.metadata === undefined ? keep('metadata', {}) : { ...rules.metadata },
      budgetLimit: budget === undefined ? keep('budgetLimit', null) : (budget?.limit ?? null),
      budgetUnit: budget === undefined ? keep('budgetUnit', null) : (budget?.unit ?? null),
      budgetPeriod: budget === undefined ? keep('budgetPeriod', null) : (budget?.period ?? null),
      models: rules.models === undefined ? keep('models', null) : rules.models === null ? null : [...new Set(rules.models)],
      rateLimitRpm: rules.rpm === undefined ? keep('rateLimitRpm', null) : rules.rpm,
      rateLimitConcurrency: rules.concurrency === undefined ? keep('rateLimitConcurrency', null) : rules.concurrency,
      expiresAt: rules.expiresAt === undefined ? keep('expiresAt', null) : rules.expiresAt === null ? null : new Date(rules.expiresAt),
      cache: rules.cache === undefined ? keep('cache', null) : rules.cache === null ? null : responseCacheSettingsOf(rules.cache),
    };
  }

  /** The account's keys, newest first; 404 for an unknown account rather than an empty list. */
  async list(accountId: string): Promise<KeyDto[]> {
    await this.accounts.get(accountId);
    const keys = await this.dataSource.getRepository(ApiKeyEntity).find({ where: { accountId }, order: { createdAt: 'DESC', id: 'ASC' } });
    const now = new Date();
    return keys.map((key) => KeyDto.from(key, now));
  }

  async revoke(keyId: string): Promise<void> {
    const repository = this.dataSource.getRepository(ApiKeyEntity);
    const key = await repository.findOneBy({ id: keyId });
    if (!key) throw new GatewayException(HttpStatus.NOT_FOUND, `API key ${keyId} not found`);
    if (!key.revokedAt) await repository.update({ id: keyId, revokedAt: IsNull() }, { revokedAt: new Date() });
    await this.messaging.publish('billing.keys.revoked', { keyId, keyHash: key.keyHash });
  }

  /** The account behind a key hash, or null for unknown and revoked keys. */
  async resolve(keyHash: string): Promise<ResolvedKey | null> {
    // Only a SHA-256 in hex can match a stored hash: anything else is answered without a query.
    if (!KEY_HASH.test(keyHash)) return null;
    const rows: ResolvedKeyRow[] = await this.dataSource.query(
      `SELECT k.id AS key_id, a.id AS account_id, a.plan, a.status, a.balance_micro, a.balance_version, a.usage_spent_micro,
              a.rate_limit_rpm, a.rate_limit_concurrency, a.cache AS account_cache, k.cache AS key_cache,
              k.budget_limit, k.budget_unit, k.budget_period, k.models, k.rate_limit_rpm AS key_rpm, k.rate_limit_concurrency AS key_concurrency,
              k.expires_at, k.spend_period_start, k.spent_micro, k.usage_applied_micro, k.spend_version
         FROM "billing"."api_keys" k JOIN "billing"."accounts" a ON a.id = k.account_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
      [keyHash],
    );
    const row = rows[0];
    if (!row) return null;
    const cache = effectiveResponseCache(row.account_cache, row.key_cache);
    return {
      keyId: row.key_id,
      accountId: row.account_id,
      plan: row.plan,
      status: row.status,
      limits: accountLimits(row),
      balanceMicro: row.balance_micro,
      balanceVersion: Number(row.balance_version),
      usageSpentMicro: row.usage_spent_micro,
      rules: this.rulesOf(row),
      keySpend: {
        keyId: row.key_id,
        version: Number(row.spend_version),
        periodStart: row.spend_period_start?.getTime() ?? 0,
        spentMicro: row.spent_micro,
        appliedMicro: row.usage_applied_micro,
      },
      ...(cache ? { cache } : {}),
    };
  }

  private rulesOf(row: ResolvedKeyRow): KeyRules {
    const rules: KeyRules = {};
    if (row.budget_limit !== null && row.budget_unit && row.budget_period) {
      const limitMicro = budgetLimitMicro(row.budget_limit, row.budget_unit, this.settings.env.CREDITS_PER_USD);
      rules.budget = { limit: row.budget_limit, unit: row.budget_unit, period: row.budget_period, limitMicro: limitMicro.toString() };
    }
    if (row.models !== null) rules.models = row.models;
    if (row.key_rpm !== null) rules.requestsPerMinute = row.key_rpm;
    if (row.key_concurrency !== null) rules.concurrentRequests = row.key_concurrency;
    if (row.expires_at !== null) rules.expiresAt = row.expires_at.toISOString();
    if (row.key_cache !== null) rules.cache = row.key_cache;
    return rules;
  }
}

interface ResolvedKeyRow {
  key_id: string;
  account_id: string;
  plan: AccountPlan;
  status: AccountStatus;
  balance_micro: string;
  usage_spent_micro: string;
  balance_version: string;
  rate_limit_rpm: number | null;
  rate_limit_concurrency: number | null;
  account_cache: ResponseCacheSettings | null;
  key_cache: ResponseCacheSettings | null;
  budget_limit: string | null;
  budget_unit: 'usd' | 'credits' | null;
  budget_period: BudgetPeriod | null;
  models: string[] | null;
  key_rpm: number | null;
  key_concurrency: number | null;
  expires_at: Date | null;
  spend_period_start: Date | null;
  spent_micro: string;
  usage_applied_micro: string;
  spend_version: string;
}

function spendWire(key: ApiKeyEntity): KeySpendWire {
  return KeySpendAnnouncer.wire(
    key.id,
    Number(key.spendVersion),
    { periodStart: key.spendPeriodStart, spentMicro: BigInt(key.spentMicro), spentUsd: key.spentUsd },
    BigInt(key.usageAppliedMicro),
  );
}

/** The account's overrides; a limit without one is left out, so the gateway's default applies. */
function accountLimits(row: Pick<ResolvedKeyRow, 'rate_limit_rpm' | 'rate_limit_concurrency'>): AccountLimits {
  const limits: AccountLimits = {};
  if (row.rate_limit_rpm !== null) limits.requestsPerMinute = row.rate_limit_rpm;
  if (row.rate_limit_concurrency !== null) limits.concurrentRequests = row.rate_limit_concurrency;
  return limits;
}
