import { HttpStatus, Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { QueueName, MessagingService } from '@igw/messaging';
import type { AuthenticatedKey, BalanceSnapshot, KeySpendSnapshot, KeySpendWire, ResolvedKey } from '@igw/contracts';
import { ApiKeyAuthenticator, apiKeyPrefix, GatewayException, hashApiKey, isWellFormedApiKey, KeyLookupBudget } from '@igw/http';
import { SERVICE_SETTINGS, type ClientConnection, type ServiceSettings } from '@igw/config';

/** A resolved key without its money (kept per account, see `balances`); `keyPrefix` is set from the first presented key that found it. */
interface CachedKey extends Omit<AuthenticatedKey, 'balance' | 'keySpend'> {
  /** Set when broadcasts may have been missed: the entry is checked with billing again, but still used within its TTL if billing is away. */
  stale?: boolean;
  expiresAt: number;
}

/** A look-up at billing, shared by every request for the same key while it runs. */
interface PendingLookUp {
  answer: Promise<CachedKey | null>;
  /** The key was revoked while billing was being asked: whatever billing said, it is gone now. */
  revoked: boolean;
  /** The key was created while billing was being asked: a "no such key" may predate it. */
  created: boolean;
  /** Accounts whose plan, status or limits changed while billing was being asked. */
  changedAccounts: Set<string>;
  /** Broadcasts may have been missed meanwhile: the answer serves its requests but is not kept. */
  unkeepable: boolean;
}

const NO_BALANCE: BalanceSnapshot = { balanceMicro: 0n, version: -1, usageSpentMicro: 0n };

/**
 * Resolves API keys from memory, asking billing over the queue only on a miss. Billing's
 * broadcasts keep it right: revoked keys are dropped, balances replaced by newer versions.
 * Look-ups of keys it does not know are budgeted per client address (see KeyLookupBudget).
 */
@Injectable()
export class GatewayKeyAuthenticator extends ApiKeyAuthenticator implements OnApplicationBootstrap {
  private readonly keys = new Map<string, CachedKey>();
  private readonly lookUps: KeyLookupBudget;
  private readonly balances = new Map<string, BalanceSnapshot>();
  /** The spend of keys resolved here (only those: broadcasts about other keys are not kept), newest version each. */
  private readonly keySpends = new Map<string, KeySpendSnapshot>();
  private readonly pending = new Map<string, PendingLookUp>();

  constructor(
    private readonly messaging: MessagingService,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {
    super();
    this.lookUps = new KeyLookupBudget(settings.env, billingNotAnswering);
  }

  async onApplicationBootstrap(): Promise<void> {
    await this.messaging.subscribe('billing.keys.revoked', ({ keyHash }) => {
      this.keys.delete(keyHash);
      this.lookUps.unknown.set(keyHash, true);
      const pending = this.pending.get(keyHash);
      if (pending) pending.revoked = true;
    });
    await this.messaging.subscribe('billing.keys.created', ({ keyHash }) => {
      this.lookUps.unknown.delete(keyHash);
      const pending = this.pending.get(keyHash);
      if (pending) pending.created = true;
    });
    // Plan, status or limits changed: forget the account's keys so the next request asks billing.
    await this.messaging.subscribe('billing.account.changed', ({ accountId }) => {
      for (const [hash, key] of this.keys) if (key.accountId === accountId) this.keys.delete(hash);
      for (const pending of this.pending.values()) pending.changedAccounts.add(accountId);
    });
    await this.messaging.subscribe('billing.balance.changed', ({ accountId, balanceMicro, balanceVersion, usageSpentMicro }) => {
      this.observeBalance(accountId, { balanceMicro: BigInt(balanceMicro), version: balanceVersion, usageSpentMicro: BigInt(usageSpentMicro) });
    });
    await this.messaging.subscribe('billing.keys.spend.changed', (spend) => {
      if (this.keySpends.has(spend.keyId)) this.observeKeySpend(spend);
    });
    // Broadcasts may have been missed while the relay node was away: check every key again.
    this.messaging.onRelayRecovered(() => {
      for (const key of this.keys.values()) key.stale = true;
      this.lookUps.unknown.clear();
      for (const pending of this.pending.values()) pending.unkeepable = true;
    });
  }

  async authenticate(presentedKey: string, client?: ClientConnection): Promise<AuthenticatedKey | null> {
    if (!isWellFormedApiKey(presentedKey)) return null;
    const keyHash = hashApiKey(presentedKey);
    const cached = this.keys.get(keyHash);
    if (cached && cached.expiresAt > Date.now() && !cached.stale) return this.withBalance(cached);
    if (this.lookUps.unknown.has(keyHash)) return null;

    let entry: CachedKey | null;
    try {
      entry = await this.lookUp(keyHash, this.lookUps.clientOf(client), cached !== undefined);
    } catch (error) {
      // Billing is away (or this client has too many look-ups waiting): a key billing vouched for
      // keeps working until its entry expires (revocations still arrive by broadcast and remove
      // it); after that it fails closed, like a key never seen. Read again: a revocation may have
      // removed the entry while billing was being asked.
      const known = this.keys.get(keyHash);
      if (known && known.expiresAt > Date.now()) return this.withBalance(known);
      throw error;
    }
    if (!entry) return null;
    entry.keyPrefix ??= apiKeyPrefix(presentedKey);
    return this.withBalance(entry);
  }

  private observeBalance(accountId: string, snapshot: BalanceSnapshot): void {
    const known = this.balances.get(accountId);
    if (!known || snapshot.version > known.version) this.balances.set(accountId, snapshot);
  }

  private observeKeySpend(spend: KeySpendWire): void {
    const known = this.keySpends.get(spend.keyId);
    if (known && spend.version <= known.version) return;
    this.keySpends.set(spend.keyId, { version: spend.version, periodStart: spend.periodStart, spentMicro: BigInt(spend.spentMicro), appliedMicro: BigInt(spend.appliedMicro) });
  }

  private withBalance(key: CachedKey): AuthenticatedKey {
    const balance = this.balances.get(key.accountId) ?? NO_BALANCE;
    const keySpend = key.rules?.budget ? this.keySpends.get(key.keyId) : undefined;
    return { keyId: key.keyId, keyPrefix: key.keyPrefix, accountId: key.accountId, plan: key.plan, status: key.status, limits: key.limits, balance, rules: key.rules, keySpend, cache: key.cache };
  }

  /**
   * Concurrent misses for one key share a single look-up. A key not known here at all spends
   * the client's look-up budget; refreshing one billing vouched for does not.
   */
  private lookUp(keyHash: string, client: string, known: boolean): Promise<CachedKey | null> {
    const joined = this.pending.get(keyHash);
    if (joined) return joined.answer;
    const pending: PendingLookUp = { answer: Promise.resolve(null), revoked: false, created: false, changedAccounts: new Set(), unkeepable: false };
    pending.answer = this.lookUps.lookUp(client, !known, () => this.askUntilSure(keyHash, pending)).finally(() => this.pending.delete(keyHash));
    this.pending.set(keyHash, pending);
    return pending.answer;
  }

  private async askUntilSure(keyHash: string, pending: PendingLookUp): Promise<CachedKey | null> {
    // A second try at most: its question reached billing after the broadcast that made the first answer doubtful.
    for (let attempt = 1; ; attempt++) {
      const askedAt = Date.now();
      // Only what changes while billing answers can make the answer doubtful.
      pending.changedAccounts.clear();
      pending.created = false;
      const resolved = await this.askBilling(keyHash);
      if (pending.revoked) {
        this.keys.delete(keyHash);
        return null;
      }
      const doubtful = resolved ? pending.changedAccounts.has(resolved.accountId) : pending.created;
      if (doubtful && attempt === 1) continue;
      const keep = !doubtful && !pending.unkeepable;
      if (!resolved) {
        this.keys.delete(keyHash);
        if (keep) this.lookUps.unknown.set(keyHash, true);
        return null;
      }
      this.observeBalance(resolved.accountId, {
        balanceMicro: BigInt(resolved.balanceMicro),
        version: resolved.balanceVersion,
        usageSpentMicro: BigInt(resolved.usageSpentMicro),
      });
      if (resolved.keySpend) this.observeKeySpend(resolved.keySpend);
      const entry: CachedKey = {
        keyId: resolved.keyId,
        keyPrefix: undefined,
        accountId: resolved.accountId,
        plan: resolved.plan,
        status: resolved.status,
        limits: resolved.limits,
        rules: resolved.rules,
        cache: resolved.cache,
        // Counted from the question, not the answer: the answer is as old as the question.
        expiresAt: askedAt + this.settings.env.KEY_CACHE_TTL_MS,
      };
      if (keep) this.keys.set(keyHash, entry);
      return entry;
    }
  }

  private async askBilling(keyHash: string): Promise<ResolvedKey | null> {
    try {
      return (await this.messaging.request(QueueName.BillingRpc, 'keys.resolve', { keyHash })).key;
    } catch (error) {
      throw billingNotAnswering(error);
    }
  }
}

function billingNotAnswering(cause?: unknown): GatewayException {
  return new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'API keys cannot be verified right now: the billing service is not answering. Retry shortly.', { cause });
}
