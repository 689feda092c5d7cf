import { Injectable } from '@nestjs/common';
import type { AuthenticatedKey } from '@igw/contracts';
import { ApiKeyAuthenticator, hashApiKey, isWellFormedApiKey } from '@igw/platform';
import { KeysService } from './keys.service';

/** Billing owns the keys table, so it checks keys against it directly: revocation is immediate. */
@Injectable()
export class BillingKeyAuthenticator extends ApiKeyAuthenticator {
  constructor(private readonly keys: KeysService) {
    super();
  }

  async authenticate(presentedKey: string): Promise<AuthenticatedKey | null> {
    // Checked by the guard too; repeated so no caller can make billing query a key that cannot exist.
    if (!isWellFormedApiKey(presentedKey)) return null;
    const resolved = await this.keys.resolve(hashApiKey(presentedKey));
    if (!resolved) return null;
    return {
      keyId: resolved.keyId,
      accountId: resolved.accountId,
      plan: resolved.plan,
      status: resolved.status,
      limits: resolved.limits,
      balance: { balanceMicro: BigInt(resolved.balanceMicro), version: resolved.balanceVersion, usageSpentMicro: BigInt(resolved.usageSpentMicro) },
    };
  }
}
