import { promisify } from 'node:util';
import { constants as zlibConstants, deflateRaw, inflateRaw } from 'node:zlib';
import type { ResponsesItem } from './responses-request.dto';

// What the gateway and billing say to each other about stored Responses API responses
// (`store: true`, `previous_response_id`, `GET`/`DELETE /v1/responses/{id}`). Billing owns the
// rows; the gateway asks over the `responses-rpc` queue. Conversations travel deflated: they
// are JSON text (a tenth of the size once deflated), and the queue keeps a finished job's data
// and reply for a minute.

/** A JSON value deflated (raw DEFLATE) and in base64: what a queue job carries of a conversation. */
export interface PackedJson {
  deflated: string;
}

const deflateRawAsync = promisify(deflateRaw);
const inflateRawAsync = promisify(inflateRaw);

export async function packJson(value: unknown): Promise<PackedJson> {
  const deflated = await deflateRawAsync(Buffer.from(JSON.stringify(value)), { level: zlibConstants.Z_BEST_SPEED });
  return { deflated: deflated.toString('base64') };
}

/** The value of a packed JSON; throws when it inflates past `maxBytes` (a corrupt or hostile job) or is not JSON. */
export async function unpackJson<T>(packed: PackedJson, maxBytes: number): Promise<T> {
  const text = await inflateRawAsync(Buffer.from(packed.deflated, 'base64'), { maxOutputLength: maxBytes });
  return JSON.parse(text.toString('utf8')) as T;
}

/** A response as stored: one request's own input items (each with an id) and the answer as it was sent. */
export interface StoredResponseContent {
  /** This request's own input (a string input as one user message; item references resolved), not the earlier turns'. */
  input: ResponsesItem[];
  /** The Responses object as answered, its `output` items included. */
  response: Record<string, unknown> & { id: string; output: Array<Record<string, unknown>> };
}

/**
 * Whose stored responses a query sees: the account's, and of those only the key's own when
 * `keyId` is given (the default; RESPONSES_SHARED_PER_ACCOUNT=true leaves it out).
 */
export interface StoredResponsesOwner {
  accountId: string;
  keyId?: string;
}

export interface SaveStoredResponse {
  accountId: string;
  /** The API key that made the response: its owner unless the account's keys share them. */
  keyId: string;
  id: string;
  previousResponseId: string | null;
  /** Unix seconds, as in the answer's `created_at`. */
  createdAt: number;
  /** A StoredResponseContent. */
  content: PackedJson;
}

/**
 * A save's answer: kept, or refused because the account keeps as many stored responses, or as
 * many of their bytes, as RESPONSES_MAX_PER_ACCOUNT and RESPONSES_MAX_MB_PER_ACCOUNT allow.
 */
export type SaveStoredResponseReply = { saved: true } | { saved: false; reason: 'quota'; maxResponses: number; maxMegabytes: number };

/** What a new request needs of stored responses: the conversation before it, and items named by `item_reference`. */
export interface ConversationQuery extends StoredResponsesOwner {
  previousResponseId?: string;
  itemIds: string[];
  /** The most bytes of earlier items to hand back (BODY_LIMIT): a longer conversation is refused, as its body would be. */
  maxBytes: number;
}

export interface ConversationReply {
  /** False when previous_response_id names no live response of the account. */
  previousFound: boolean;
  /** The earlier turns' bytes, or the referenced items', went past maxBytes: nothing is returned. */
  tooLarge: boolean;
  /** `{items: ResponsesItem[] (oldest first: each turn's input then output), referenced: Record<itemId, ResponsesItem>}`. */
  packed: PackedJson | null;
}

export interface ConversationItems {
  items: ResponsesItem[];
  referenced: Record<string, ResponsesItem>;
  /** The JSON bytes of `items` as billing keeps them (each turn's items_bytes); absent with no items. */
  itemsBytes?: number;
  /** The JSON bytes of each referenced item; absent with none referenced. */
  referencedBytes?: Record<string, number>;
}

export interface StoredResponseQuery extends StoredResponsesOwner {
  id: string;
}

export interface InputItemsQuery extends StoredResponseQuery {
  limit: number;
  order: 'asc' | 'desc';
  after?: string;
}

export interface InputItemsReply {
  found: boolean;
  items: ResponsesItem[];
  hasMore: boolean;
}

/** A stored response's id: what the gateway hands out (`resp_` and 32 hex digits), so anything else is unknown without a look-up. */
export const STORED_RESPONSE_ID = /^resp_[0-9a-f]{32}$/;
