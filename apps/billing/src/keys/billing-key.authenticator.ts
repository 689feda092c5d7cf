import { HttpStatus, Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { AuthenticatedKey } from '@igw/contracts';
import { MessagingService } from '@igw/messaging';
import { LRUCache } from 'lru-cache';
import { ApiKeyAuthenticator, GatewayException, hashApiKey, isWellFormedApiKey, KeyLookupBudget } from '@igw/http';
import { SERVICE_SETTINGS, type ClientConnection, type ServiceSettings } from '@igw/config';
import { KeysService } from './keys.service';

/**
 * Billing owns the keys table, so it checks keys against it directly: revocation is immediate.
 * Keys it found unknown are remembered, and look-ups of keys it does not know are budgeted per
 * client address, as on the gateway: a flood of made-up keys costs 401s and 429s, not queries.
 */
@Injectable()
export class BillingKeyAuthenticator extends ApiKeyAuthenticator implements OnApplicationBootstrap {
  private readonly lookUps: KeyLookupBudget;
  /**
   * Hashes of keys found lately: their look-ups (still made every time, so a revocation counts
   * at once) spend no client's budget, so a flood from a client's address (or from everyone
   * behind one proxy) does not lock out keys in use.
   */
  private readonly found: LRUCache<string, true>;

  constructor(
    private readonly keys: KeysService,
    private readonly messaging: MessagingService,
    @Inject(SERVICE_SETTINGS) settings: ServiceSettings,
  ) {
    super();
    this.lookUps = new KeyLookupBudget(settings.env, databaseNotAnswering);
    this.found = new LRUCache({ max: FOUND_KEYS_REMEMBERED, ttl: settings.env.KEY_CACHE_TTL_MS });
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.messaging.subscribe('billing.keys.created', ({ keyHash }) => {
      this.lookUps.unknown.delete(keyHash);
    });
    // A creation may have been missed while the relay node was away.
    this.messaging.onRelayRecovered(() => this.lookUps.unknown.clear());
  }

  async authenticate(presentedKey: string, client?: ClientConnection): Promise<AuthenticatedKey | null> {
    // Checked by the guard too; repeated so no caller can make billing query a key that cannot exist.
    if (!isWellFormedApiKey(presentedKey)) return null;
    const keyHash = hashApiKey(presentedKey);
    if (this.lookUps.unknown.has(keyHash)) return null;
    const charged = !this.found.has(keyHash);
    const resolved = await this.lookUps.lookUp(this.lookUps.clientOf(client), charged, () => this.keys.resolve(keyHash));
    if (!resolved) {
      this.found.delete(keyHash);
      this.lookUps.unknown.set(keyHash, true);
      return null;
    }
    this.found.set(keyHash, true);
    return {
      keyId: resolved.keyId,
      accountId: resolved.accountId,
      plan: resolved.plan,
      status: resolved.status,
      limits: resolved.limits,
      balance: { balanceMicro: BigInt(resolved.balanceMicro), version: resolved.balanceVersion, usageSpentMicro: BigInt(resolved.usageSpentMicro) },
      rules: resolved.rules,
    };
  }
}

/** Keys in use remembered at most; the oldest go first (their next look-up is charged, and refunded when found). */
const FOUND_KEYS_REMEMBERED = 10_000;

function databaseNotAnswering(): GatewayException {
  return new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'API keys cannot be verified right now: the database is not answering. Retry shortly.');
}
