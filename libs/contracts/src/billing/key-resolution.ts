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

export interface ResolveKeyRequest {
  keyHash: string;
}

export interface ResolveKeyReply {
  key: ResolvedKey | null;
}
