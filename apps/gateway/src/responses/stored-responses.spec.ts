import type { ResponsesItem, ResponsesRequestDto } from '@igw/contracts';
import type { StreamedChunk, UpstreamChatChunk } from '@igw/providers';
import { responsesContextOf } from './responses-response';
import { responsesStreamEvents } from './responses-stream';
import { RpcTimeoutError, type MessagingService } from '@igw/messaging';
import { loadEnvironment, type ServiceSettings } from '@igw/config';
import { inputItemsPageOf, MAX_ITEM_REFERENCES, ownInputItems, referencedItemIds, resolvedConversationBytes, storedItemOf, StoredResponses, withReferencesResolved } from './stored-responses';

describe("a request's own input items, as stored", () => {
  it('makes a string input one user message with an input_text part, and gives every item sent without an id one of its type', () => {
    expect(ownInputItems('Hello')).toEqual([{ id: expect.stringMatching(/^msg_[0-9a-f]{32}$/), type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hello' }] }]);
    const items = ownInputItems([
      { role: 'user', content: 'Hi' },
      { type: 'function_call', call_id: 'c1', name: 'f', arguments: '{}' },
      { type: 'function_call_output', call_id: 'c1', output: 'ok' },
      { type: 'message', id: 'msg_kept', role: 'assistant', content: 'Yes' },
    ]);
    expect(items.map((item) => [item.type, String(item.id).split('_')[0]])).toEqual([
      ['message', 'msg'],
      ['function_call', 'fc'],
      ['function_call_output', 'fco'],
      ['message', 'msg'],
    ]);
    expect(items[3].id).toBe('msg_kept');
    expect(items[0]).toMatchObject({ role: 'user', content: 'Hi' });
  });
});

describe('an input item as stored', () => {
  it('keeps the known fields of the types the gateway reads, and other types as sent', () => {
    const junk = 'j'.repeat(1_000);
    expect(
      storedItemOf({ id: 'msg_1', type: 'message', role: 'user', junk, content: [{ type: 'input_text', text: 'Hi', junk }, { type: 'input_image', image_url: 'https://x/a.png', detail: 'low', junk }] }),
    ).toEqual({ id: 'msg_1', type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Hi' }, { type: 'input_image', image_url: 'https://x/a.png', detail: 'low' }] });
    expect(storedItemOf({ id: 'fc_1', type: 'function_call', call_id: 'c', name: 'f', arguments: '{}', junk })).toEqual({ id: 'fc_1', type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' });
    expect(storedItemOf({ id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'opaque', junk })).toEqual({ id: 'rs_1', type: 'reasoning', summary: [], encrypted_content: 'opaque' });
    const other = { id: 'ws_1', type: 'web_search_call', status: 'completed', action: { query: 'q' } };
    expect(storedItemOf(other)).toBe(other);
  });
});

describe('item references', () => {
  const items: ResponsesItem[] = [{ type: 'item_reference', id: 'msg_a' }, { role: 'user', content: 'next' }, { type: 'item_reference', id: 'fc_b' }];

  it('names the ids to look up, and refuses a reference without one', () => {
    expect(referencedItemIds(items)).toEqual(['msg_a', 'fc_b']);
    expect(() => referencedItemIds([{ type: 'item_reference' }])).toThrow('input[0].id: an item_reference needs the id of a stored item');
    expect(() => referencedItemIds([{ role: 'user', content: 'x' }, { type: 'item_reference', id: '' }])).toThrow('input[1].id');
  });

  it('are looked up once each, and more than MAX_ITEM_REFERENCES in one request are refused', () => {
    expect(referencedItemIds([...items, { type: 'item_reference', id: 'msg_a' }])).toEqual(['msg_a', 'fc_b']);
    const many = (count: number): ResponsesItem[] => Array.from({ length: count }, () => ({ type: 'item_reference', id: 'msg_a' }));
    expect(referencedItemIds(many(MAX_ITEM_REFERENCES))).toEqual(['msg_a']);
    expect(() => referencedItemIds(many(MAX_ITEM_REFERENCES + 1))).toThrow(`input: Expected at most ${MAX_ITEM_REFERENCES} item_reference items in one request`);
  });

  it('count in the conversation once per reference, with the earlier turns and the body', () => {
    const stored = { id: 'msg_a', type: 'message', role: 'assistant', content: 'é'.repeat(100) };
    const storedBytes = Buffer.byteLength(JSON.stringify(stored));
    const turn = { id: 'msg_t', type: 'message', role: 'user', content: 'earlier' };
    // As billing hands them back: each with its JSON size.
    const found = { items: [turn], referenced: { msg_a: stored }, itemsBytes: Buffer.byteLength(JSON.stringify(turn)), referencedBytes: { msg_a: storedBytes } };
    const twice: ResponsesItem[] = [{ type: 'item_reference', id: 'msg_a' }, { role: 'user', content: 'x' }, { type: 'item_reference', id: 'msg_a' }];
    expect(resolvedConversationBytes(90, twice, found)).toBe(90 + Buffer.byteLength(JSON.stringify(turn)) + 2 * storedBytes);
    expect(resolvedConversationBytes(90, [], { items: [], referenced: {} })).toBe(90);
  });

  it('are replaced by the stored items, in place; one not found is a 400 naming it', () => {
    const stored = { msg_a: { id: 'msg_a', type: 'message', role: 'assistant', content: 'A' }, fc_b: { id: 'fc_b', type: 'function_call', call_id: 'c', name: 'f', arguments: '{}' } };
    expect(withReferencesResolved(items, stored)).toEqual([stored.msg_a, items[1], stored.fc_b]);
    expect(() => withReferencesResolved(items, { msg_a: stored.msg_a })).toThrow('input[2].id: no stored item "fc_b" of this API key');
    expect(() => withReferencesResolved([{ type: 'item_reference', id: `msg_${'x'.repeat(5_000)}` }], {})).toThrow(/"msg_x{76}…"/);
  });
});

describe('input item pages', () => {
  it("take OpenAI's limit, order and after, with its defaults", () => {
    expect(inputItemsPageOf({})).toEqual({ limit: 20, order: 'desc' });
    expect(inputItemsPageOf({ limit: '100', order: 'asc', after: 'msg_1' })).toEqual({ limit: 100, order: 'asc', after: 'msg_1' });
  });

  it.each([{ limit: '0' }, { limit: '101' }, { limit: '2.5' }, { limit: ['1', '2'] }, { order: 'up' }, { after: '' }, { after: 'x'.repeat(300) }])('refuses %j', (query) => {
    expect(() => inputItemsPageOf(query)).toThrow(/Body validation error! (limit|order|after): /);
  });
});

describe('a stored stream', () => {
  const chunk = (content: string, finishReason: string | null = null): StreamedChunk => ({
    chunk: { id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: finishReason }] } as UpstreamChatChunk,
  });

  async function run(batches: StreamedChunk[][], keep: (response: Record<string, unknown>) => Promise<Record<string, unknown>>, failWith?: Error, settled: string[] = []) {
    const context = responsesContextOf({ model: 'mini', input: 'hi' } as ResponsesRequestDto, new Map());
    context.keep = keep;
    const stream: AsyncIterable<StreamedChunk[]> = {
      async *[Symbol.asyncIterator]() {
        for (const batch of batches) yield batch;
        if (failWith) throw failWith;
      },
    };
    const events = responsesStreamEvents(context)(stream, {
      modelId: 'acme/chat',
      includeUsage: false,
      prompt: { messages: [{ role: 'user', content: 'hi' }] },
      settle: () => (settled.push('settled'), { credits_used: 1, usd_spent: 0.0000005 }),
      describeError: (error) => (error as Error).message,
    });
    const seen: string[] = [];
    for await (const text of events) seen.push(text);
    return { text: seen.join(''), settled };
  }

  it('keeps the finished response, usage settled, before response.completed; and sends what keeping made of it', async () => {
    const order: string[] = [];
    let kept: Record<string, unknown> | undefined;
    const settled: string[] = [];
    const { text } = await run(
      [[chunk('Hello'), chunk(' there', 'stop')]],
      async (response) => {
        order.push(`keep after ${settled.length} settlement`);
        kept = response;
        return { ...response, store: false };
      },
      undefined,
      settled,
    );
    expect(order).toEqual(['keep after 1 settlement']);
    expect(kept).toMatchObject({ status: 'completed', store: true, output: [{ type: 'message', content: [{ type: 'output_text', text: 'Hello there' }] }], usage: { input_tokens: expect.any(Number) } });
    const completed = JSON.parse(text.split('event: response.completed\ndata: ')[1]) as Record<string, unknown>;
    expect(completed.response).toMatchObject({ id: kept!.id, store: false });
  });

  it('keeps nothing of a stream that fails half-way', async () => {
    const keep = jest.fn(async (response: Record<string, unknown>) => response);
    const { text } = await run([[chunk('Hel')]], keep, new Error('upstream cut'));
    expect(keep).not.toHaveBeenCalled();
    expect(text).toContain('event: error');
    expect(text).not.toContain('response.completed');
  });
});

const AUTH = { accountId: 'acc', keyId: 'key' };

describe('keeping a response', () => {
  const settings = { env: loadEnvironment({}).env } as ServiceSettings;
  const sent = (data: unknown[], reply: unknown = { saved: true }) =>
    ({
      request: async (_queue: string, _name: string, job: unknown) => {
        data.push(job);
        return reply;
      },
    }) as unknown as MessagingService;
  const response = { id: 'resp_0123456789abcdef0123456789abcdef', created_at: 1764000000, store: true, output: [] };

  it('asks billing to save it with its own input and the previous id, and sends it as it was', async () => {
    const jobs: unknown[] = [];
    const keep = new StoredResponses(sent(jobs), settings).keeper({ model: 'm', input: 'hi', previous_response_id: 'resp_ffffffffffffffffffffffffffffffff' } as ResponsesRequestDto, AUTH, [{ id: 'msg_1', type: 'message' }]);
    expect(await keep!(response)).toBe(response);
    expect(jobs).toEqual([{ accountId: 'acc', keyId: 'key', id: response.id, previousResponseId: 'resp_ffffffffffffffffffffffffffffffff', createdAt: 1764000000, content: { deflated: expect.any(String) } }]);
  });

  it('keeps nothing with store: false', () => {
    expect(new StoredResponses(sent([]), settings).keeper({ model: 'm', input: 'hi', store: false } as ResponsesRequestDto, AUTH, [])).toBeUndefined();
  });

  it('sends the answer all the same when billing cannot keep it, saying store: false', async () => {
    const down = { request: async () => Promise.reject(new RpcTimeoutError('responses-rpc', 'responses.save', 5000)) } as unknown as MessagingService;
    const keep = new StoredResponses(down, settings).keeper({ model: 'm', input: 'hi' } as ResponsesRequestDto, AUTH, []);
    expect(await keep!(response)).toEqual({ ...response, store: false });
  });

  it('answers store: false when billing refuses the save for the quota, then refuses storing requests of that account for a while', async () => {
    const stored = new StoredResponses(sent([], { saved: false, reason: 'quota', maxResponses: 3, maxMegabytes: 1 }), settings);
    const keep = stored.keeper({ model: 'm', input: 'hi' } as ResponsesRequestDto, AUTH, []);
    expect(await keep!(response)).toEqual({ ...response, store: false });
    const storing = { model: 'm', input: 'again' } as ResponsesRequestDto;
    expect(() => stored.assertMayStore(storing, 'acc')).toThrow('Forbidden: this account keeps as many stored responses as it may (at most 3 responses and 1 MB of items');
    // store: false still works, other accounts are not concerned, and the refusal ends after a minute.
    expect(() => stored.assertMayStore({ ...storing, store: false }, 'acc')).not.toThrow();
    expect(() => stored.assertMayStore(storing, 'other')).not.toThrow();
    expect(() => stored.assertMayStore(storing, 'acc', Date.now() + 61_000)).not.toThrow();
    expect(() => stored.assertMayStore(storing, 'acc')).not.toThrow();
  });
});
