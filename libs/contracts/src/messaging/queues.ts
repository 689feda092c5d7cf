import type { ResolveKeyReply, ResolveKeyRequest } from '../billing/key-resolution';
import type { UsageEvent } from '../billing/usage-event';
import type { CatalogueSnapshot } from '../catalogue/catalogue-model';

/**
 * Queue names. NEVER RENAME a value: jobs already waiting under the old name would stall.
 */
export enum QueueName {
  Usage = 'usage',
  BillingRpc = 'billing-rpc',
  CatalogueRpc = 'catalogue-rpc',
  Decisions = 'decisions',
}

/** Job names per queue, with their payload and reply types. NEVER RENAME a name either. */
export interface JobMap {
  [QueueName.Usage]: {
    /** One event per job: what gateways before usage.recordBatch send; still applied during a rolling upgrade. */
    'usage.record': { data: UsageEvent; reply: { applied: boolean } };
    /** The events a gateway buffered over a few milliseconds, in one job; each is applied exactly once. */
    'usage.recordBatch': { data: { events: UsageEvent[] }; reply: { applied: number } };
  };
  [QueueName.BillingRpc]: {
    'keys.resolve': { data: ResolveKeyRequest; reply: ResolveKeyReply };
  };
  [QueueName.CatalogueRpc]: {
    'catalogue.snapshot': { data: Record<string, never>; reply: CatalogueSnapshot };
  };
  [QueueName.Decisions]: {
    'decisions.ping': { data: Record<string, never>; reply: { ok: true } };
  };
}

export type JobName<Q extends QueueName> = keyof JobMap[Q] & string;
export type JobData<Q extends QueueName, N extends JobName<Q>> = JobMap[Q][N] extends { data: infer D } ? D : never;
export type JobReply<Q extends QueueName, N extends JobName<Q>> = JobMap[Q][N] extends { reply: infer R } ? R : never;
