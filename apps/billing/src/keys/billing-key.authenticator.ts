import { HttpStatus, Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { AuthenticatedKey } from '@igw/contracts';
import { MessagingService } from '@igw/messaging';
import {
  ApiKeyAuthenticator,
  GatewayException,
  hashApiKey,
  isWellFormedApiKey,
  KeyLookupBudget,
  SERVICE_SETTINGS,
  type ClientConnection,
  type ServiceSettings,
} from '@igw/platform';
import { KeysService } from './keys.service';

/**
 * Billing owns the keys table, so it checks keys against it directly: revocation is immediate.
 * Keys it found unknown are remembered, and look-ups of keys it does not know are budgeted per
 * client address, as on the gateway: a flood of made-up keys costs 401s and 429s, not queries.
 */
@Injectable()
export class BillingKeyAuthenticator extends ApiKeyAuthenticator implements OnApplicationBootstrap {
  private readonly lookUps: KeyLookupBudget;

  constructor(
    private readonly keys: KeysService,
    private readonly messaging: MessagingService,
    @Inject(SERVICE_SETTINGS) settings: ServiceSettings,
  ) {
    super();
    this.lookUps = new KeyLookupBudget(settings.env, databaseNotAnswering);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.messaging.subscribe('billing.keys.created', ({ keyHash }) => this.lookUps.unknown.delete(keyHash));
    // A creation may have been missed while the relay node was away.
    this.messaging.onRelayRecovered(() => this.lookUps.unknown.clear());
  }

  async authenticate(presentedKey: string, client?: ClientConnection): Promise<AuthenticatedKey | null> {
    // Checked by the guard too; repeated so no caller can make billing query a key that cannot exist.
    if (!isWellFormedApiKey(presentedKey)) return null;
    const keyHash = hashApiKey(presentedKey);
    if (this.lookUps.unknown.has(keyHash, Date.now())) return null;
    // Every look-up is charged until it finds its key: billing keeps no key it found.
    const resolved = await this.lookUps.lookUp(this.lookUps.clientOf(client), true, () => this.keys.resolve(keyHash));
    if (!resolved) {
      this.lookUps.unknown.add(keyHash, Date.now());
      return null;
    }
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

function databaseNotAnswering(): GatewayException {
  return new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'API keys cannot be verified right now: the database is not answering. Retry shortly.');
}
