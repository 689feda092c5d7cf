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

/** Whose entries a cached answer may serve: every key of the account, or only the key that stored it. */
export const RESPONSE_CACHE_SCOPES = ['account', 'key'] as const;
export type ResponseCacheScope = (typeof RESPONSE_CACHE_SCOPES)[number];

/**
 * The response cache as an operator sets it on an account or a key (`cache` of the admin API);
 * an absent field is the account's (for a key) or the default (for an account).
 */
export interface ResponseCacheSettings {
  enabled?: boolean;
  /** How long a stored answer is served, in seconds (default RESPONSE_CACHE_DEFAULTS.ttlSeconds). */
  ttlSeconds?: number;
  /** The longest `ttlSeconds` may be, and the oldest entry a client's `Cache-Control: max-age` may accept. */
  maxTtlSeconds?: number;
  /** Whether a key reads only the entries it stored itself (default `account`). */
  scope?: ResponseCacheScope;
}

export const RESPONSE_CACHE_DEFAULTS = { ttlSeconds: 3_600, maxTtlSeconds: 86_400, scope: 'account' } as const satisfies Required<Omit<ResponseCacheSettings, 'enabled'>>;
/** The longest any entry lives: 30 days. */
export const RESPONSE_CACHE_MAX_TTL_SECONDS = 2_592_000;

/**
 * The cache as it applies to one key's requests, worked out by billing from the key's and the
 * account's settings (effectiveResponseCache); present only when the cache is on for the key.
 */
export interface EffectiveResponseCache {
  /** At most `maxTtlSeconds`. */
  ttlSeconds: number;
  maxTtlSeconds: number;
  scope: ResponseCacheScope;
}

/**
 * The key's settings over the account's, then the defaults: on only when one of them says
 * `enabled: true` and the key does not say `enabled: false`; `ttlSeconds` cut to `maxTtlSeconds`
 * (the lower of the two levels' maxima).
 */
export function effectiveResponseCache(account: ResponseCacheSettings | null | undefined, key: ResponseCacheSettings | null | undefined): EffectiveResponseCache | undefined {
  const enabled = key?.enabled ?? account?.enabled ?? false;
  if (!enabled) return undefined;
  const maxTtlSeconds = Math.min(account?.maxTtlSeconds ?? RESPONSE_CACHE_DEFAULTS.maxTtlSeconds, key?.maxTtlSeconds ?? RESPONSE_CACHE_MAX_TTL_SECONDS, RESPONSE_CACHE_MAX_TTL_SECONDS);
  const ttlSeconds = Math.min(key?.ttlSeconds ?? account?.ttlSeconds ?? RESPONSE_CACHE_DEFAULTS.ttlSeconds, maxTtlSeconds);
  return { ttlSeconds, maxTtlSeconds, scope: key?.scope ?? account?.scope ?? RESPONSE_CACHE_DEFAULTS.scope };
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
  /** The key's response cache settings, over its account's. */
  cache?: ResponseCacheSettings;
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
  /** The response cache for this key's requests (effectiveResponseCache); absent: off. */
  cache?: EffectiveResponseCache;
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
  /** The response cache for this key's requests; absent: off. */
  cache?: EffectiveResponseCache;
}

export interface ResolveKeyRequest {
  keyHash: string;
}

export interface ResolveKeyReply {
  key: ResolvedKey | null;
}
