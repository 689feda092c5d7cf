import type { AuthenticatedKey } from './key-resolution';

/** What a stubbed ApiKeyAuthenticator answers in unit specs: an active key of a paid account with credit. */
export const ACTIVE_PAID_KEY: AuthenticatedKey = {
  keyId: 'k',
  accountId: 'a',
  plan: 'paid',
  status: 'active',
  limits: {},
  balance: { balanceMicro: 1n, version: 1, usageSpentMicro: 0n },
};
