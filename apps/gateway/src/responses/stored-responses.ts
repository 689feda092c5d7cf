import { HttpStatus, Inject, Injectable, Logger } from '@nestjs/common';
import { ErrorMessages, packJson, STORED_RESPONSE_ID, unpackJson, type ConversationItems, type InputItemsReply, type ResponsesItem, type ResponsesRequestDto, type AuthenticatedKey, type StoredResponsesOwner } from '@igw/contracts';
import { QueueName, MessagingService } from '@igw/messaging';
import { bodyLimitBytes, GatewayException, KeyLookupBudget } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { itemId } from './responses-response';

// Conversation state of the Responses API, kept by billing (the gateway has no tables):
// `store` (true unless false) keeps a response before its answer (or its stream's
// response.completed event) leaves, so a follow-up on any replica finds it; `previous_response_id`
// puts the stored turns ahead of a request's input (never their instructions), and
// `item_reference` items become the stored items they name. Every look-up is of the caller's
// account only: another account's response is as unknown as one that never was.

/** What one look-up may inflate to: the earlier turns are bounded by BODY_LIMIT, a stored answer by the upstream's. */
const MAX_REPLY_BYTES = 96 * 1024 * 1024;

/**
 * `item_reference` items one request may send. Each becomes a whole stored item in the prompt,
 * so without a bound a small body could name one large item thousands of times; a real client
 * references a few items of its own conversation.
 */
export const MAX_ITEM_REFERENCES = 1_000;

/** How long an account billing found at its stored responses quota is refused storing requests without asking again. */
const QUOTA_RECHECK_MS = 60_000;

/** The prefix of an id given to an input item sent without one, by type (as OpenAI names its items). */
const ITEM_ID_PREFIXES: Record<string, string> = { message: 'msg', function_call: 'fc', function_call_output: 'fco', reasoning: 'rs' };

export const previousResponseNotFound = (id: string) => `Previous response with id '${printableId(id)}' not found.`;
export const responseNotFound = (id: string) => `Response with id '${printableId(id)}' not found.`;

/** An id as an error message may repeat it: what a client sent, cut short. */
function printableId(id: string): string {
  return id.length > 80 ? `${id.slice(0, 80)}…` : id;
}

function refuse(path: string, why: string): never {
  throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${path}: ${why}`);
}

/** This request's own input as items, each with an id: a string input is one user message. */
export function ownInputItems(input: ResponsesRequestDto['input']): ResponsesItem[] {
  if (typeof input === 'string') return [{ id: itemId('msg'), type: 'message', role: 'user', content: [{ type: 'input_text', text: input }] }];
  return input.map((item) => {
    if (typeof item.id === 'string' && item.id !== '') return item;
    const type = item.type ?? 'message';
    return { id: itemId(ITEM_ID_PREFIXES[type] ?? 'item'), ...(item.type === undefined ? { type: 'message' } : {}), ...item };
  });
}

/** The fields of the input items and content parts the gateway reads, by type (OpenAI's schemas): what is kept of them. */
const KEPT_ITEM_FIELDS: Record<string, readonly string[]> = {
  message: ['id', 'type', 'role', 'content', 'status'],
  function_call: ['id', 'type', 'call_id', 'name', 'namespace', 'arguments', 'status'],
  function_call_output: ['id', 'type', 'call_id', 'output', 'status'],
  reasoning: ['id', 'type', 'summary', 'encrypted_content', 'content', 'status'],
};
const KEPT_PART_FIELDS: Record<string, readonly string[]> = {
  input_text: ['type', 'text'],
  output_text: ['type', 'text', 'annotations', 'logprobs'],
  refusal: ['type', 'refusal'],
  input_image: ['type', 'image_url', 'file_id', 'detail'],
  input_file: ['type', 'file_data', 'file_id', 'file_url', 'filename'],
  input_audio: ['type', 'input_audio'],
};

const pick = (value: Record<string, unknown>, fields: readonly string[]): Record<string, unknown> => {
  const kept: Record<string, unknown> = {};
  for (const field of fields) if (value[field] !== undefined) kept[field] = value[field];
  return kept;
};

/**
 * An input item as it is stored: of the types the gateway reads, only their known fields (a
 * client's extra fields are storage no one reads, on the operator's disk); other types as sent.
 */
export function storedItemOf(item: ResponsesItem): ResponsesItem {
  const fields = KEPT_ITEM_FIELDS[item.type ?? 'message'];
  if (fields === undefined) return item;
  const kept = pick(item, fields) as ResponsesItem;
  if (Array.isArray(kept.content)) {
    kept.content = (kept.content as unknown[]).map((part) => {
      const partFields = part !== null && typeof part === 'object' ? KEPT_PART_FIELDS[(part as { type?: string }).type ?? ''] : undefined;
      return partFields === undefined ? part : pick(part as Record<string, unknown>, partFields);
    });
  }
  return kept;
}

/** The distinct ids `item_reference` items name (refusing one that names none, and more than MAX_ITEM_REFERENCES references). */
export function referencedItemIds(items: readonly ResponsesItem[]): string[] {
  const ids = new Set<string>();
  let references = 0;
  items.forEach((item, index) => {
    if (item.type !== 'item_reference') return;
    if (typeof item.id !== 'string' || item.id === '') refuse(`input[${index}].id`, 'an item_reference needs the id of a stored item');
    if (++references > MAX_ITEM_REFERENCES) refuse('input', `Expected at most ${MAX_ITEM_REFERENCES} item_reference items in one request. Received more`);
    ids.add(item.id);
  });
  return [...ids];
}

/**
 * The UTF-8 size of the conversation a request resolves to: its body, each earlier turn's items,
 * and each referenced item once per reference (a duplicate reference is a duplicate in the prompt),
 * from the sizes billing read with them. Every hold and context check counts this, not the body's
 * bytes alone.
 */
export function resolvedConversationBytes(bodyBytes: number, ownInput: readonly ResponsesItem[], found: ConversationItems): number {
  let bytes = bodyBytes + (found.itemsBytes ?? 0);
  for (const item of ownInput) if (item.type === 'item_reference') bytes += found.referencedBytes?.[item.id as string] ?? 0;
  return bytes;
}


/** The items with each `item_reference` replaced by the stored item it names. */
export function withReferencesResolved(items: readonly ResponsesItem[], referenced: Readonly<Record<string, ResponsesItem>>, whose = 'this API key'): ResponsesItem[] {
  return items.map((item, index) => {
    if (item.type !== 'item_reference') return item;
    const stored = referenced[item.id as string];
    if (stored === undefined) {
      refuse(
        `input[${index}].id`,
        `no stored item ${JSON.stringify(printableId(item.id as string))} of ${whose}: item_reference names input or output items of responses kept with store: true (until they expire or are deleted)`,
      );
    }
    return stored;
  });
}

/** A request ready for the translation, and what to keep of it. */
export interface Conversation {
  /** The body the translation reads: earlier turns ahead of its own input, no previous_response_id, no item references. */
  body: ResponsesRequestDto;
  /** This request's own input items (references resolved), as stored with its response. */
  ownInput: ResponsesItem[];
  /** The size of the request as sent upstream (resolvedConversationBytes): what its hold and context checks count. */
  bytes: number;
}

@Injectable()
export class StoredResponses {
  private readonly logger = new Logger('StoredResponses');
  private readonly bodyLimit: number;
  /**
   * Look-ups are budgeted per account as key look-ups are per address (KEY_LOOKUP_* settings):
   * ids that name nothing spend the account's budget (then 429), found ones give it back, and
   * one account's flood waits its turn instead of holding billing's queue for every account.
   */
  private readonly lookUps: KeyLookupBudget;
  private readonly sharedPerAccount: boolean;
  /**
   * Accounts whose last save billing refused for their quota, until when this replica refuses
   * their storing requests without asking (a deletion through this replica lifts it at once).
   */
  private readonly atQuota = new Map<string, { until: number; maxResponses: number; maxMegabytes: number }>();

  constructor(
    private readonly messaging: MessagingService,
    @Inject(SERVICE_SETTINGS) settings: ServiceSettings,
  ) {
    this.bodyLimit = bodyLimitBytes(settings.env.BODY_LIMIT);
    this.lookUps = new KeyLookupBudget(settings.env, unavailable);
    this.sharedPerAccount = settings.env.RESPONSES_SHARED_PER_ACCOUNT;
  }

  /**
   * Refuses a request that would store a response for an account at its quota (learned from
   * billing's last refusal, for QUOTA_RECHECK_MS): a 403 before anything is paid for, rather
   * than an answer that silently was not kept.
   */
  assertMayStore(sent: ResponsesRequestDto, accountId: string, now = Date.now()): void {
    if (sent.store === false) return;
    const quota = this.atQuota.get(accountId);
    if (quota === undefined) return;
    if (quota.until <= now) {
      this.atQuota.delete(accountId);
      return;
    }
    throw new GatewayException(
      HttpStatus.FORBIDDEN,
      `Forbidden: this account keeps as many stored responses as it may (at most ${quota.maxResponses} responses and ${quota.maxMegabytes} MB of items: RESPONSES_MAX_PER_ACCOUNT, RESPONSES_MAX_MB_PER_ACCOUNT). Delete some (DELETE /v1/responses/{id}), let them expire, or send store: false.`,
    );
  }

  /** Whose stored responses `auth` sees: its own key's, or every key's of its account when the operator shares them. */
  ownerOf(auth: Pick<AuthenticatedKey, 'accountId' | 'keyId'>): StoredResponsesOwner {
    return this.sharedPerAccount ? { accountId: auth.accountId } : { accountId: auth.accountId, keyId: auth.keyId };
  }

  /**
   * The conversation a request continues (404 for a previous_response_id the account does not
   * have, live): one look-up when it names a previous response or item references, none otherwise.
   */
  async conversationOf(sent: ResponsesRequestDto, owner: StoredResponsesOwner, bodyBytes: number): Promise<Conversation> {
    const { previous_response_id: previousId, ...rest } = sent;
    const own = ownInputItems(sent.input);
    const itemIds = referencedItemIds(own);
    const previous = typeof previousId === 'string' ? previousId : undefined;
    if (previous === undefined && itemIds.length === 0) return { body: rest as ResponsesRequestDto, ownInput: own, bytes: bodyBytes };
    if (previous !== undefined && !STORED_RESPONSE_ID.test(previous)) throw new GatewayException(HttpStatus.NOT_FOUND, previousResponseNotFound(previous));
    // The whole conversation is held to BODY_LIMIT, as a body sending it all in `input` would be.
    const maxBytes = Math.max(0, this.bodyLimit - bodyBytes);
    const reply = await this.lookUp(owner.accountId, async () => {
      const answer = await this.messaging.request(QueueName.ResponsesRpc, 'responses.conversation', { ...owner, previousResponseId: previous, itemIds, maxBytes });
      return answer.previousFound ? answer : null;
    });
    if (reply === null) throw new GatewayException(HttpStatus.NOT_FOUND, previousResponseNotFound(previous!));
    if (reply.tooLarge) this.refuseTooLarge(previous !== undefined);
    const found = await unpackJson<ConversationItems>(reply.packed!, MAX_REPLY_BYTES);
    const bytes = resolvedConversationBytes(bodyBytes, own, found);
    if (bytes > this.bodyLimit) this.refuseTooLarge(previous !== undefined);
    const ownInput = withReferencesResolved(own, found.referenced, owner.keyId === undefined ? 'this account' : 'this API key');
    return { body: { ...rest, input: [...found.items, ...ownInput] } as ResponsesRequestDto, ownInput, bytes };
  }

  private refuseTooLarge(continues: boolean): never {
    const limit = `the ${this.bodyLimit}-byte body limit (BODY_LIMIT)`;
    if (continues) refuse('previous_response_id', `the conversation it continues, with this request and the items it references, is larger than ${limit}: start a new conversation, or send a shorter one in input`);
    refuse('input', `the request with the stored items it references is larger than ${limit}: reference fewer or smaller items`);
  }

  /**
   * Keeps an answer unless the request said `store: false`, before it leaves. If billing cannot
   * keep it, the answer still goes (it is paid for), saying `store: false`: nothing was kept.
   */
  keeper(sent: ResponsesRequestDto, auth: Pick<AuthenticatedKey, 'accountId' | 'keyId'>, ownInput: ResponsesItem[]): ((response: Record<string, unknown>) => Promise<Record<string, unknown>>) | undefined {
    if (sent.store === false) return undefined;
    const previousResponseId = typeof sent.previous_response_id === 'string' ? sent.previous_response_id : null;
    return async (response) => {
      try {
        const content = await packJson({ input: ownInput.map(storedItemOf), response });
        const reply = await this.messaging.request(QueueName.ResponsesRpc, 'responses.save', {
          accountId: auth.accountId,
          keyId: auth.keyId,
          id: response.id as string,
          previousResponseId,
          createdAt: response.created_at as number,
          content,
        });
        if (!reply.saved) {
          this.atQuota.set(auth.accountId, { until: Date.now() + QUOTA_RECHECK_MS, maxResponses: reply.maxResponses, maxMegabytes: reply.maxMegabytes });
          this.logger.warn(`Response ${String(response.id)} answered without being stored: account ${auth.accountId} is at its stored responses quota`);
          return { ...response, store: false };
        }
        return response;
      } catch (error) {
        this.logger.warn(`Response ${String(response.id)} answered without being stored: ${error instanceof Error ? error.message : String(error)}`);
        return { ...response, store: false };
      }
    };
  }

  async get(owner: StoredResponsesOwner, id: string): Promise<Record<string, unknown>> {
    if (!STORED_RESPONSE_ID.test(id)) throw new GatewayException(HttpStatus.NOT_FOUND, responseNotFound(id));
    const packed = await this.lookUp(owner.accountId, async () => (await this.messaging.request(QueueName.ResponsesRpc, 'responses.get', { ...owner, id })).response);
    if (packed === null) throw new GatewayException(HttpStatus.NOT_FOUND, responseNotFound(id));
    return unpackJson<Record<string, unknown>>(packed, MAX_REPLY_BYTES);
  }

  async delete(owner: StoredResponsesOwner, id: string): Promise<{ id: string; object: 'response.deleted'; deleted: true }> {
    if (!STORED_RESPONSE_ID.test(id)) throw new GatewayException(HttpStatus.NOT_FOUND, responseNotFound(id));
    const deleted = await this.lookUp(owner.accountId, async () => ((await this.messaging.request(QueueName.ResponsesRpc, 'responses.delete', { ...owner, id })).deleted ? true : null));
    if (deleted === null) throw new GatewayException(HttpStatus.NOT_FOUND, responseNotFound(id));
    // Room was made: the next save asks billing again.
    this.atQuota.delete(owner.accountId);
    return { id, object: 'response.deleted', deleted: true };
  }

  /** OpenAI's list of a response's input items. */
  async inputItems(owner: StoredResponsesOwner, id: string, page: InputItemsPage): Promise<InputItemsList> {
    if (!STORED_RESPONSE_ID.test(id)) throw new GatewayException(HttpStatus.NOT_FOUND, responseNotFound(id));
    const reply: InputItemsReply | null = await this.lookUp(owner.accountId, async () => {
      const answer = await this.messaging.request(QueueName.ResponsesRpc, 'responses.inputItems', { ...owner, id, ...page });
      return answer.found ? answer : null;
    });
    if (reply === null) throw new GatewayException(HttpStatus.NOT_FOUND, responseNotFound(id));
    const ids = reply.items.map((item) => (typeof item.id === 'string' ? item.id : null));
    return { object: 'list', data: reply.items, first_id: ids[0] ?? null, last_id: ids.at(-1) ?? null, has_more: reply.hasMore };
  }

  /** Asks billing within the account's look-up budget: null (nothing found) spends it. */
  private lookUp<T>(accountId: string, ask: () => Promise<T | null>): Promise<T | null> {
    return this.lookUps.lookUp(accountId, true, async () => {
      try {
        return await ask();
      } catch (error) {
        this.logger.warn(`Stored responses unavailable: ${error instanceof Error ? error.message : String(error)}`);
        throw unavailable(error);
      }
    });
  }
}

function unavailable(cause?: unknown): GatewayException {
  return new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'Stored responses cannot be read right now: the billing service is not answering. Retry shortly.', { cause });
}

export interface InputItemsPage {
  limit: number;
  order: 'asc' | 'desc';
  after?: string;
}

export interface InputItemsList {
  object: 'list';
  data: ResponsesItem[];
  first_id: string | null;
  last_id: string | null;
  has_more: boolean;
}

/** `limit` (1–100, default 20), `order` (asc or desc, default desc) and `after` of GET /v1/responses/{id}/input_items. */
export function inputItemsPageOf(query: Record<string, unknown>): InputItemsPage {
  const page: InputItemsPage = { limit: 20, order: 'desc' };
  if (query.limit !== undefined) {
    const limit = Number(query.limit);
    if (typeof query.limit !== 'string' || !/^\d+$/.test(query.limit) || limit < 1 || limit > 100) refuse('limit', `Expected an integer from 1 to 100. Received ${JSON.stringify(query.limit)}`);
    page.limit = limit;
  }
  if (query.order !== undefined) {
    if (query.order !== 'asc' && query.order !== 'desc') refuse('order', `Expected one of asc, desc. Received ${JSON.stringify(query.order)}`);
    page.order = query.order;
  }
  if (query.after !== undefined) {
    if (typeof query.after !== 'string' || query.after === '' || query.after.length > 256) refuse('after', 'Expected an item id');
    page.after = query.after;
  }
  return page;
}
