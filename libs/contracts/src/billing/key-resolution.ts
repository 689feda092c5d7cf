export type AccountPlan = 'free' | 'paid';

/** What billing tells the gateway about a presented API key (never the key itself). */
export interface ResolvedKey {
  keyId: string;
  accountId: string;
  plan: AccountPlan;
  balanceMicro: string;
  /** Increases with every balance change, so stale broadcasts can be ignored. */
  balanceVersion: number;
}

export interface ResolveKeyRequest {
  keyHash: string;
}

export interface ResolveKeyReply {
  key: ResolvedKey | null;
}
