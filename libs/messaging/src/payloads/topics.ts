import type { GatewayUpstreams } from './queues';
import type { KeySpendWire } from '@igw/contracts';

/**
 * Broadcast topics (BullMQ Relay). Every subscriber in every process receives each message.
 * NEVER RENAME a topic: running replicas of the old version would stop hearing each other.
 */
export interface TopicMap {
  'billing.keys.revoked': { keyId: string; keyHash: string };
  'billing.keys.created': { keyHash: string };
  /** `usageSpentMicro`: the usage charges applied to the account so far, as of `balanceVersion`. */
  'billing.balance.changed': { accountId: string; balanceMicro: string; balanceVersion: number; usageSpentMicro: string };
  /** A key's spend in its budget's period changed (usage applied, period started, rules changed); newer versions win. */
  'billing.keys.spend.changed': KeySpendWire;
  /** Plan, status or limits of an account, or the rules of one of its keys, changed: gateways drop what they cached for it. */
  'billing.account.changed': { accountId: string };
  'catalogue.revision.changed': { revision: number };
  /** Billing's console asks the gateways which providers they have credentials for (the catalogue page's "configured"). */
  'gateway.upstreams.asked': { askId: string };
  /** A gateway's answer to one ask: the first to arrive is used. */
  'gateway.upstreams.answered': GatewayUpstreams & { askId: string };
}

export type Topic = keyof TopicMap;
