import { HttpStatus, Injectable } from '@nestjs/common';
import type { ResolvedKey } from '@igw/contracts';
import { MessagingService } from '@igw/messaging';
import { GatewayException, generateApiKey, hashApiKey } from '@igw/platform';
import { DataSource, IsNull } from 'typeorm';
import { AccountsService } from '../accounts/accounts.service';
import { ApiKeyEntity } from './api-key.entity';

export interface CreatedKey {
  id: string;
  key: string;
  prefix: string;
  name: string | null;
  accountId: string;
  createdAt: string;
}

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

  async revoke(keyId: string): Promise<void> {
    const repository = this.dataSource.getRepository(ApiKeyEntity);
    const key = await repository.findOneBy({ id: keyId });
    if (!key) throw new GatewayException(HttpStatus.NOT_FOUND, `API key ${keyId} not found`);
    if (!key.revokedAt) await repository.update({ id: keyId, revokedAt: IsNull() }, { revokedAt: new Date() });
    await this.messaging.publish('billing.keys.revoked', { keyId, keyHash: key.keyHash });
  }

  /** The account behind a key hash, or null for unknown and revoked keys. */
  async resolve(keyHash: string): Promise<ResolvedKey | null> {
    const rows: Array<{ key_id: string; account_id: string; plan: 'free' | 'paid'; status: 'active' | 'suspended'; balance_micro: string; balance_version: string }> =
      await this.dataSource.query(
        `SELECT k.id AS key_id, a.id AS account_id, a.plan, a.status, a.balance_micro, a.balance_version
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
      // Per-account limit overrides arrive with the account settings API; defaults apply until then.
      limits: {},
      balanceMicro: row.balance_micro,
      balanceVersion: Number(row.balance_version),
    };
  }
}
