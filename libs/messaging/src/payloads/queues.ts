import { promisify } from 'node:util';
import { constants as zlibConstants, deflateRaw, inflateRawSync } from 'node:zlib';
import type { ResolveKeyReply, ResolveKeyRequest, UsageEvent, CatalogueSnapshot, DecideJob, DecideReply, ConversationQuery, ConversationReply, InputItemsQuery, InputItemsReply, PackedJson, SaveStoredResponse, SaveStoredResponseReply, StoredResponseQuery } from '@igw/contracts';
import type { ConnectionsReport } from './connections-report';

/**
 * Queue names. NEVER RENAME a value: jobs already waiting under the old name would stall.
 */
export enum QueueName {
  Usage = 'usage',
  BillingRpc = 'billing-rpc',
  CatalogueRpc = 'catalogue-rpc',
  Decisions = 'decisions',
  Webhooks = 'webhooks',
  /** Stored Responses API responses (billing keeps them): a queue of its own, so a burst of saves never delays key look-ups. */
  ResponsesRpc = 'responses-rpc',
  /** Asks of billing to the gateways, answered by whichever gateway takes the job (the response cache is shared by all). */
  GatewayRpc = 'gateway-rpc',
}

/** What a gateway can answer: the providers it has credentials for and the catalogue models with a source among them. */
export interface GatewayUpstreams {
  /** The catalogue revision the answer was computed on; null before the gateway loaded one. */
  revision: number | null;
  providers: string[];
  /** Ids of the catalogue models that can answer on this gateway. */
  answerable: string[];
  /** The upstream estate this gateway routes to, with each deployment's shared state (GET /admin/v1/connections). */
  connections: ConnectionsReport;
}

/**
 * A batch of usage events: their JSON lines (each event serialized once, for the journal and
 * the batch), compressed with raw DEFLATE, in base64. PostgreSQL stores a job's data as jsonb,
 * and a 500-event batch of ~250 kB cost it ~4 ms to parse and log; deflated at the fastest
 * level (~0.2 ms of the gateway's CPU) the same batch is ~10 kB.
 */
export interface UsageBatch {
  eventLinesDeflated: string;
}

const deflateRawAsync = promisify(deflateRaw);

/** Far above any batch (2,000 events of a few hundred bytes): a corrupt or hostile job cannot make billing inflate without bound. */
const MAX_INFLATED_BATCH_BYTES = 64 * 1024 * 1024;

/**
 * The batch of these events: `eventLines` is the UTF-8 of the events' JSON lines (each a
 * `JSON.stringify` of a UsageEvent) joined by newlines. Compresses off the event loop.
 */
export async function usageBatchOf(eventLines: Uint8Array): Promise<UsageBatch> {
  const deflated = await deflateRawAsync(eventLines, { level: zlibConstants.Z_BEST_SPEED });
  return { eventLinesDeflated: deflated.toString('base64') };
}

/** The events of a batch; throws when the data is not a deflated batch. */
export function usageBatchEvents(batch: UsageBatch): UsageEvent[] {
  const eventLines = inflateRawSync(Buffer.from(batch.eventLinesDeflated, 'base64'), { maxOutputLength: MAX_INFLATED_BATCH_BYTES }).toString('utf8');
  return eventLines === '' ? [] : eventLines.split('\n').map((line) => JSON.parse(line) as UsageEvent);
}

/** Job names per queue, with their payload and reply types. NEVER RENAME a name either. */
export interface JobMap {
  [QueueName.Usage]: {
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
    /** One POST /v1/decisions, validated and admitted by the gateway; answered by the decisions service. */
    'decisions.decide': { data: DecideJob; reply: DecideReply };
  };
  [QueueName.Webhooks]: {
    /** Sends one alert of billing's outbox to its account's webhook; the job id is the event id. */
    'webhooks.deliver': { data: { eventId: string }; reply: { outcome: 'delivered' | 'already-delivered' | 'failed' | 'discarded' | 'unknown' } };
  };
  [QueueName.ResponsesRpc]: {
    /** Keeps a response (store: true) before its answer leaves the gateway. */
    'responses.save': { data: SaveStoredResponse; reply: SaveStoredResponseReply };
    /** The conversation a previous_response_id continues, and the items item_reference names. */
    'responses.conversation': { data: ConversationQuery; reply: ConversationReply };
    /** A StoredResponseContent's response, or null (unknown, expired, or another account's). */
    'responses.get': { data: StoredResponseQuery; reply: { response: PackedJson | null } };
    'responses.delete': { data: StoredResponseQuery; reply: { deleted: boolean } };
    'responses.inputItems': { data: InputItemsQuery; reply: InputItemsReply };
  };
  [QueueName.GatewayRpc]: {
    /** DELETE /admin/v1/cache: removes an account's response cache entries (of one model, of one key, or all). */
    'cache.invalidate': { data: ResponseCacheInvalidation; reply: { removed: number } };
  };
}

/** Which response cache entries to remove: an account's, narrowed to one model id and/or one key id. */
export interface ResponseCacheInvalidation {
  accountId: string;
  model?: string;
  keyId?: string;
}

export type JobName<Q extends QueueName> = keyof JobMap[Q] & string;
export type JobData<Q extends QueueName, N extends JobName<Q>> = JobMap[Q][N] extends { data: infer D } ? D : never;
export type JobReply<Q extends QueueName, N extends JobName<Q>> = JobMap[Q][N] extends { reply: infer R } ? R : never;
