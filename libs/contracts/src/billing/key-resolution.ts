export type AccountPlan = 'free' | 'paid';
export type AccountStatus = 'active' | 'suspended';

/** Per-account overrides of the gateway's limits; an absent field uses the configured default. */
export interface AccountLimits {
  /** Requests per minute, per API key. */
  requestsPerMinute?: number;
  /** Requests in flight at once, per API key. */
  concurrentRequests?: number;
}

/** A key's budget as the gateway enforces it: what it allows in micro-credits, and how it resets. */
export interface KeyBudget {
  /** The budget as the admin set it (an exact decimal in `unit`), for messages. */
  limit: string;
  unit: 'usd' | 'credits';
  period: 'day' | 'month' | 'lifetime';
  /** `limit` in micro-credits (USD converted at CREDITS_PER_USD, rounded down), as a string of an integer. */
  limitMicro: string;
}

/** The rules a key carries beyond its account's; an absent field sets no rule. */
export interface KeyRules {
  budget?: KeyBudget;
  /** Model ids, aliases or patterns (`anthropic/*`) the key may call; absent: every model. */
  models?: string[];
  /** Requests per minute of this key; the account's limit still applies when lower. */
  requestsPerMinute?: number;
  /** Requests in flight at once of this key; the account's limit still applies when lower. */
  concurrentRequests?: number;
  /** ISO 8601: from then on the key is refused (401). */
  expiresAt?: string;
}

/**
 * What billing said about a key's spending, like BalanceSnapshot for the account: the spend in
 * its budget's current period and every usage charge applied to the key so far (which lets a
 * gateway tell which of what it metered billing already counted).
 */
export interface KeySpendWire {
  keyId: string;
  /** Grows with every change of the key's spend or rules; a lower one is older. */
  version: number;
  /** Start of the period `spentMicro` counts (epoch ms; 0 for a lifetime budget or none). */
  periodStart: number;
  spentMicro: string;
  appliedMicro: string;
}

export interface KeySpendSnapshot {
  version: number;
  periodStart: number;
  spentMicro: bigint;
  appliedMicro: bigint;
}

/** What billing tells the gateway about a presented API key (never the key itself). */
export interface ResolvedKey {
  keyId: string;
  accountId: string;
  plan: AccountPlan;
  status: AccountStatus;
  limits: AccountLimits;
  balanceMicro: string;
  /** Increases with every balance change, so stale broadcasts can be ignored. */
  balanceVersion: number;
  /** Usage charges applied to the account so far, as of `balanceVersion`. */
  usageSpentMicro: string;
  /** The key's own rules (absent from billings older than them: no rules). */
  rules?: KeyRules;
  keySpend?: KeySpendWire;
}

/** What billing said about an account's money: the balance and the usage charges it already includes. */
export interface BalanceSnapshot {
  balanceMicro: bigint;
  /** Grows with every balance change; a lower one is older. */
  version: number;
  usageSpentMicro: bigint;
}

/** Who is calling, once an API key was accepted: the resolved key with its money as numbers. */
export interface AuthenticatedKey {
  keyId: string;
  /** The key's first characters (`apiKeyPrefix`), for logs. */
  keyPrefix?: string;
  accountId: string;
  plan: AccountPlan;
  status: AccountStatus;
  limits: AccountLimits;
  /** The account's money as last heard from billing when the request started. */
  balance: BalanceSnapshot;
  /** The key's own rules; absent or empty: only the account's apply. */
  rules?: KeyRules;
  /** The key's spending as last heard from billing, when the key has a budget. */
  keySpend?: KeySpendSnapshot;
}

export interface ResolveKeyRequest {
  keyHash: string;
}

export interface ResolveKeyReply {
  key: ResolvedKey | null;
}
