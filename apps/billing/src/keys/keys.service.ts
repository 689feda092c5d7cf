import { HttpStatus, Injectable } from '@nestjs/common';
import type { AccountLimits, AccountPlan, AccountStatus, ResolvedKey } from '@igw/contracts';
import { MessagingService } from '@igw/messaging';
import { GatewayException, generateApiKey, hashApiKey } from '@igw/platform';
import { DataSource, IsNull } from 'typeorm';
import { AccountsService } from '../accounts/accounts.service';
import { ApiKeyEntity } from './api-key.entity';
import { KeyDto } from './dto/key.dto';

export interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  name: string | null;
  accountId: string;
  createdAt: string;
}

const KEY_HASH = /^[0-9a-f]{64}$/;

@Injectable()
export class KeysService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly accounts: AccountsService,
    private readonly messaging: MessagingService,
  ) {}

  /** Creates a key; the only time the key itself exists outside the client is this return value. */
  async create(accountId: string, name: string | undefined): Promise<CreatedKey> {
    await this.accounts.get(accountId);
    const { key, prefix } = generateApiKey();
    const keyHash = hashApiKey(key);
    const saved = await this.dataSource
      .getRepository(ApiKeyEntity)
      .save({ accountId, name: name ?? null, prefix, keyHash, revokedAt: null });
    // A gateway that saw this hash fail before keeps a short negative cache entry; drop it.
    await this.messaging.publish('billing.keys.created', { keyHash });
    return { id: saved.id, key, prefix, name: saved.name, accountId, createdAt: saved.createdAt.toISOString() };
  }

  /** The account's keys, newest first; 404 for an unknown account rather than an empty list. */
  async list(accountId: string): Promise<KeyDto[]> {
    await this.accounts.get(accountId);
    const keys = await this.dataSource.getRepository(ApiKeyEntity).find({ where: { accountId }, order: { createdAt: 'DESC', id: 'ASC' } });
    return keys.map((key) => KeyDto.from(key));
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
              a.rate_limit_rpm, a.rate_limit_concurrency
         FROM "billing"."api_keys" k JOIN "billing"."accounts" a ON a.id = k.account_id
        WHERE k.key_hash = $1 AND k.revoked_at IS NULL`,
      [keyHash],
    );
    const row = rows[0];
    if (!row) return null;
    return {
      keyId: row.key_id,
      accountId: row.account_id,
      plan: row.plan,
      status: row.status,
      limits: accountLimits(row),
      balanceMicro: row.balance_micro,
      balanceVersion: Number(row.balance_version),
      usageSpentMicro: row.usage_spent_micro,
    };
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
}

/** The account's overrides; a limit without one is left out, so the gateway's default applies. */
function accountLimits(row: Pick<ResolvedKeyRow, 'rate_limit_rpm' | 'rate_limit_concurrency'>): AccountLimits {
  const limits: AccountLimits = {};
  if (row.rate_limit_rpm !== null) limits.requestsPerMinute = row.rate_limit_rpm;
  if (row.rate_limit_concurrency !== null) limits.concurrentRequests = row.rate_limit_concurrency;
  return limits;
}
