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

/**
 * A batch of usage events: as JSON lines (what gateways send: each event is serialized once,
 * for the journal, and PostgreSQL stores a job's data as jsonb, where one string costs it a
 * third of what the same events as objects do), or as objects (what earlier gateways sent;
 * still applied during a rolling upgrade).
 */
export type UsageBatch = { eventLines: string } | { events: UsageEvent[] };

/** The events of a batch, whichever form it came in. */
export function usageBatchEvents(batch: UsageBatch): UsageEvent[] {
  if ('events' in batch) return batch.events;
  return batch.eventLines === '' ? [] : batch.eventLines.split('\n').map((line) => JSON.parse(line) as UsageEvent);
}

/** Job names per queue, with their payload and reply types. NEVER RENAME a name either. */
export interface JobMap {
  [QueueName.Usage]: {
    /** One event per job: what gateways before usage.recordBatch send; still applied during a rolling upgrade. */
    'usage.record': { data: UsageEvent; reply: { applied: boolean } };
    /** The events a gateway buffered over a few hundred milliseconds, in one job; each is applied exactly once. */
    'usage.recordBatch': { data: UsageBatch; reply: { applied: number } };
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
