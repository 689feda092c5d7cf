/**
 * Broadcast topics (BullMQ Relay). Every subscriber in every process receives each message.
 * NEVER RENAME a topic: running replicas of the old version would stop hearing each other.
 */
export interface TopicMap {
  'billing.keys.revoked': { keyId: string; keyHash: string };
  'billing.keys.created': { keyHash: string };
  'billing.balance.changed': { accountId: string; balanceMicro: string; balanceVersion: number };
  'catalogue.revision.changed': { revision: number };
}

export type Topic = keyof TopicMap;
