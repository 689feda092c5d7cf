import { HttpStatus, Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { QueueName, type ResolvedKey } from '@igw/contracts';
import { MessagingService } from '@igw/messaging';
import { ApiKeyAuthenticator, GatewayException, hashApiKey, SERVICE_SETTINGS, type AuthenticatedKey, type BalanceSnapshot, type ServiceSettings } from '@igw/platform';

interface CachedKey {
  /** Set when broadcasts may have been missed: the entry is checked with billing again, but still used if billing is away. */
  stale?: boolean;
  keyId: string;
  accountId: string;
  plan: 'free' | 'paid';
  status: 'active' | 'suspended';
  limits: AuthenticatedKey['limits'];
  expiresAt: number;
}

const NO_BALANCE: BalanceSnapshot = { balanceMicro: 0n, version: -1, usageSpentMicro: 0n };

/** How long an unknown key is remembered as unknown; creations clear it early by broadcast. */
const NEGATIVE_TTL_MS = 5_000;

/**
 * Resolves API keys from memory, asking billing over the queue only on a miss. Billing's
 * broadcasts keep it right: revoked keys are dropped, balances replaced by newer versions.
 */
@Injectable()
export class GatewayKeyAuthenticator extends ApiKeyAuthenticator implements OnApplicationBootstrap {
  private readonly keys = new Map<string, CachedKey>();
  private readonly unknown = new Map<string, number>();
  private readonly balances = new Map<string, BalanceSnapshot>();
  private readonly inFlight = new Map<string, Promise<ResolvedKey | null>>();

  constructor(
    private readonly messaging: MessagingService,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {
    super();
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.messaging.subscribe('billing.keys.revoked', ({ keyHash }) => {
      this.keys.delete(keyHash);
      this.unknown.set(keyHash, Date.now() + NEGATIVE_TTL_MS);
    });
    await this.messaging.subscribe('billing.keys.created', ({ keyHash }) => void this.unknown.delete(keyHash));
    // Plan, status or limits changed: forget the account's keys so the next request asks billing.
    await this.messaging.subscribe('billing.account.changed', ({ accountId }) => {
      for (const [hash, key] of this.keys) if (key.accountId === accountId) this.keys.delete(hash);
    });
    await this.messaging.subscribe('billing.balance.changed', ({ accountId, balanceMicro, balanceVersion, usageSpentMicro }) => {
      // A sender older than usageSpentMicro cannot say what its balance includes; the next look-up will.
      if (usageSpentMicro !== undefined) this.observeBalance(accountId, { balanceMicro: BigInt(balanceMicro), version: balanceVersion, usageSpentMicro: BigInt(usageSpentMicro) });
    });
    // Broadcasts may have been missed while the relay node was away: check every key again.
    this.messaging.onRelayRecovered(() => {
      for (const key of this.keys.values()) key.stale = true;
      this.unknown.clear();
    });
  }

  async authenticate(presentedKey: string): Promise<AuthenticatedKey | null> {
    const keyHash = hashApiKey(presentedKey);
    const now = Date.now();
    const cached = this.keys.get(keyHash);
    if (cached && cached.expiresAt > now && !cached.stale) return this.withBalance(cached);
    const unknownUntil = this.unknown.get(keyHash);
    if (unknownUntil && unknownUntil > now) return null;

    let resolved: ResolvedKey | null;
    try {
      resolved = await this.lookUp(keyHash);
    } catch (error) {
      // Billing is away: a key it vouched for keeps working (revocations still arrive by
      // broadcast); only keys never seen before have to wait for it.
      if (cached) return this.withBalance(cached);
      throw error;
    }
    if (!resolved) {
      this.keys.delete(keyHash);
      this.unknown.set(keyHash, now + NEGATIVE_TTL_MS);
      return null;
    }
    const entry: CachedKey = {
      keyId: resolved.keyId,
      accountId: resolved.accountId,
      plan: resolved.plan,
      status: resolved.status,
      limits: resolved.limits,
      expiresAt: now + this.settings.env.KEY_CACHE_TTL_MS,
    };
    this.keys.set(keyHash, entry);
    this.observeBalance(resolved.accountId, {
      balanceMicro: BigInt(resolved.balanceMicro),
      version: resolved.balanceVersion,
      usageSpentMicro: BigInt(resolved.usageSpentMicro),
    });
    return this.withBalance(entry);
  }

  private observeBalance(accountId: string, snapshot: BalanceSnapshot): void {
    const known = this.balances.get(accountId);
    if (!known || snapshot.version > known.version) this.balances.set(accountId, snapshot);
  }

  private withBalance(key: CachedKey): AuthenticatedKey {
    const balance = this.balances.get(key.accountId) ?? NO_BALANCE;
    return { keyId: key.keyId, accountId: key.accountId, plan: key.plan, status: key.status, limits: key.limits, balance };
  }

  /** Concurrent misses for one key share a single look-up. */
  private lookUp(keyHash: string): Promise<ResolvedKey | null> {
    let pending = this.inFlight.get(keyHash);
    if (!pending) {
      pending = this.messaging
        .request(QueueName.BillingRpc, 'keys.resolve', { keyHash })
        .then((reply) => reply.key)
        .catch((error: unknown) => {
          throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'API keys cannot be verified right now: the billing service is not answering. Retry shortly.', {
            cause: error,
          });
        })
        .finally(() => this.inFlight.delete(keyHash));
      this.inFlight.set(keyHash, pending);
    }
    return pending;
  }
}
