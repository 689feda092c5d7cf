export type AccountPlan = 'free' | 'paid';
export type AccountStatus = 'active' | 'suspended';

/** Per-account overrides of the gateway's limits; an absent field uses the configured default. */
export interface AccountLimits {
  /** Requests per minute, per API key. */
  requestsPerMinute?: number;
  /** Requests in flight at once, per API key. */
  concurrentRequests?: number;
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
}

export interface ResolveKeyRequest {
  keyHash: string;
}

export interface ResolveKeyReply {
  key: ResolvedKey | null;
}
