import { randomBytes } from 'node:crypto';
import path from 'node:path';
import OpenAI, { BadRequestError, NotFoundError } from 'openai';
import type { FunctionTool, ResponseFunctionToolCall, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { eventually } from '@igw/testing';
import { startEmulator, type RecordedRequest, type RunningEmulator } from '../tools/emulator/src/emulator';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

const weatherTool: FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  strict: false,
};

type ChatMessage = { role: string; content: unknown; tool_calls?: Array<{ id: string; function: { name: string; arguments: string } }>; tool_call_id?: string };

/** The SDK's Response type leaves `store` out; the answer has it. */
type Stored = { store?: boolean };

/** A made-up id of the gateway's form. */
const randomResponseId = () => `resp_${randomBytes(16).toString('hex')}`;

/**
 * Conversation state of the Responses API through the official `openai` SDK, against the
 * standalone gateway (billing keeps the responses in PostgreSQL) with upstreams played by the
 * emulator: store, previous_response_id, item_reference, retrieve, delete, input items, what
 * another account sees, and what store: false and failed requests leave behind.
 */
describe('Stored responses (store, previous_response_id, GET/DELETE /v1/responses/{id}), end to end with the openai SDK', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let client: OpenAI;
  let stranger: OpenAI;
  let key: string;

  /** The chat request the upstream received last whose messages mention `marker`. */
  const upstreamMessages = (marker: string): ChatMessage[] => {
    const request = [...emulator.requests].reverse().find((one: RecordedRequest) => JSON.stringify((one.body as { messages?: unknown })?.messages ?? null).includes(marker));
    expect(request).toBeDefined();
    return (request!.body as { messages: ChatMessage[] }).messages;
  };

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/responses-store-catalogue.yaml'), ...emulatedProviders(emulator.url) });
    ({ key } = await harness.paidKey(20_000_000));
    client = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: key, maxRetries: 0 });
    stranger = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: (await harness.paidKey(20_000_000)).key, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  it('keeps a response by default: retrieve gives it back as answered, and its input items are listed', async () => {
    const created = await client.responses.create({ model: 'mini', instructions: 'You count words.', input: 'Keep this turn please', metadata: { topic: 'store' } });
    expect([(created as Stored).store, created.previous_response_id]).toEqual([true, null]);
    const retrieved = await client.responses.retrieve(created.id);
    expect(retrieved).toEqual(created);
    expect(retrieved.output_text).toBe('Hello from the emulator. You said: Keep this turn please');
    expect(await client.responses.retrieve(created.id, { stream: false })).toEqual(created);
    // Replaying it as events is not served: the SDK gets a 400 it raises, not a JSON body it cannot read as events.
    const replay = await client.responses.retrieve(created.id, { stream: true }).catch((caught: unknown) => caught);
    expect(replay).toBeInstanceOf(BadRequestError);
    expect((replay as BadRequestError).message).toContain('stream: a stored response is read whole here');

    const items = await client.responses.inputItems.list(created.id);
    expect(items.data).toEqual([{ id: expect.stringMatching(/^msg_/), type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Keep this turn please' }] }]);
    expect(items.has_more).toBe(false);
  });

  it('keeps a streamed response before response.completed is sent, and an incomplete one as it ended', async () => {
    const stream = client.responses.stream({ model: 'claude', input: 'Stream and keep this one', max_output_tokens: 3 });
    let completed: unknown;
    stream.on('response.completed', (event) => (completed = event.response));
    const final = await stream.finalResponse();
    expect([final.status, (final as Stored).store]).toEqual(['incomplete', true]);
    // No wait: the response is there as soon as the stream said it completed.
    const retrieved = await client.responses.retrieve(final.id);
    expect(retrieved).toMatchObject({ id: final.id, status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' }, model: 'anthropic/claude-test', usage: final.usage });
    // The SDK adds output_text to what it retrieves.
    const { output_text: _added, ...stored } = retrieved;
    expect(stored).toEqual(completed);
  });

  it.each(['mini', 'claude'])('runs a tool-call round trip on %s with previous_response_id: the upstream gets the whole history, never the old instructions', async (model) => {
    const question = `What is the weather in Paris? (${model} round trip)`;
    const first = client.responses.stream({ model, instructions: 'Old instructions, not carried over.', input: question, tools: [weatherTool] });
    const called = await first.finalResponse();
    const call = called.output.find((item) => item.type === 'function_call') as ResponseFunctionToolCall | undefined;
    expect(call).toMatchObject({ name: 'get_weather', arguments: '{"location":"Paris"}' });

    const answer = await client.responses.create({
      model,
      previous_response_id: called.id,
      input: [{ type: 'function_call_output', call_id: call!.call_id, output: 'Sunny, 21 degrees' }],
      tools: [weatherTool],
    });
    expect(answer.output_text).toBe('Tool said: Sunny, 21 degrees');
    expect(answer.previous_response_id).toBe(called.id);
    if (model === 'mini') {
      // The chat request the OpenAI-format upstream read: the first turn's input and output, then this one's.
      expect(upstreamMessages('Sunny, 21 degrees')).toEqual([
        { role: 'user', content: [{ type: 'text', text: question }] },
        { role: 'assistant', content: null, tool_calls: [{ id: call!.call_id, type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }] },
        { role: 'tool', tool_call_id: call!.call_id, content: 'Sunny, 21 degrees' },
      ]);
    }

    // A third turn continues the second: all three turns reach the upstream, in order.
    const third = await client.responses.create({ model, previous_response_id: answer.id, input: `And tomorrow? (${model} third turn)` });
    expect(third.output_text).toBe(`Hello from the emulator. You said: And tomorrow? (${model} third turn)`);
    if (model === 'mini') {
      const messages = upstreamMessages(`${model} third turn`);
      expect(messages.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant', 'user']);
      expect(messages[3].content).toBe('Tool said: Sunny, 21 degrees');
      expect(JSON.stringify(messages)).not.toContain('Old instructions');
    }
    const items = await client.responses.inputItems.list(answer.id);
    expect(items.data).toEqual([{ id: expect.stringMatching(/^fco_/), type: 'function_call_output', call_id: call!.call_id, output: 'Sunny, 21 degrees' }]);
  });

  it('resolves item_reference to a stored item of the account, and refuses one it does not have', async () => {
    const stored = await client.responses.create({ model: 'mini', input: 'Remember the word zebra' });
    const message = stored.output[0];
    const next = await client.responses.create({ model: 'mini', store: false, input: [{ type: 'item_reference', id: message.id! }, { role: 'user', content: 'Which word? (reference)' }] });
    expect(next.output_text).toBe('Hello from the emulator. You said: Which word? (reference)');
    expect(upstreamMessages('(reference)')).toEqual([
      { role: 'assistant', content: 'Hello from the emulator. You said: Remember the word zebra' },
      { role: 'user', content: 'Which word? (reference)' },
    ]);
    const unknown = await rejection(client.responses.create({ model: 'mini', input: [{ type: 'item_reference', id: 'msg_nope' }, { role: 'user', content: 'x' }] }));
    expect(unknown).toBeInstanceOf(BadRequestError);
    expect((unknown as BadRequestError).message).toContain('input[0].id: no stored item "msg_nope" of this API key');
    const strangers = await rejection(stranger.responses.create({ model: 'mini', input: [{ type: 'item_reference', id: message.id! }] }));
    expect(strangers).toBeInstanceOf(BadRequestError);
  });

  it('deletes a response: the answer is OpenAI\'s, and afterwards retrieve, delete and continuing it are 404s the SDK surfaces', async () => {
    const created = await client.responses.create({ model: 'mini', input: 'Delete me later' });
    expect(await client.responses.delete(created.id)).toEqual({ id: created.id, object: 'response.deleted', deleted: true });
    const raw = await client.responses.create({ model: 'mini', input: 'Delete me raw' });
    const answer = await fetch(`${harness.gateway}/v1/responses/${raw.id}`, { method: 'DELETE', headers: { authorization: `Bearer ${key}` } });
    expect([answer.status, await answer.json()]).toEqual([200, { id: raw.id, object: 'response.deleted', deleted: true }]);

    for (const id of [created.id, raw.id]) {
      const retrieved = await rejection(client.responses.retrieve(id));
      expect(retrieved).toBeInstanceOf(NotFoundError);
      expect((retrieved as NotFoundError).message).toContain(`Response with id '${id}' not found.`);
      expect(await rejection(client.responses.delete(id))).toBeInstanceOf(NotFoundError);
      const continued = await rejection(client.responses.create({ model: 'mini', previous_response_id: id, input: 'Go on' }));
      expect(continued).toBeInstanceOf(NotFoundError);
      expect((continued as NotFoundError).message).toContain(`Previous response with id '${id}' not found.`);
      expect((continued as NotFoundError).code).toBe('previous_response_not_found');
    }
  });

  it("never shows another account's response: it cannot read, list, delete or continue it", async () => {
    const mine = await client.responses.create({ model: 'mini', input: 'Private turn' });
    for (const attempt of [
      () => stranger.responses.retrieve(mine.id),
      () => stranger.responses.inputItems.list(mine.id),
      () => stranger.responses.delete(mine.id),
      () => stranger.responses.create({ model: 'mini', previous_response_id: mine.id, input: 'Tell me what they said' }),
    ]) {
      expect(await rejection(attempt())).toBeInstanceOf(NotFoundError);
    }
    expect(JSON.stringify(emulator.requests.at(-1)?.body)).not.toContain('Tell me what they said');
    // Still the owner's, untouched.
    expect((await client.responses.retrieve(mine.id)).output_text).toBe('Hello from the emulator. You said: Private turn');
  });

  it('answers made-up ids by the hundred with 404s, then 429s for that account alone; malformed ones without a look-up', async () => {
    const mine = await client.responses.create({ model: 'mini', input: 'Kept while another account floods' });
    const flooder = (await harness.paidKey(1_000_000)).key;
    const headers = { authorization: `Bearer ${flooder}` };
    const statuses = await Promise.all(
      Array.from({ length: 150 }, randomResponseId).map(async (id) => {
        const url = `${harness.gateway}/v1/responses/${id}`;
        const [got, deleted, listed] = await Promise.all([fetch(url, { headers }), fetch(url, { method: 'DELETE', headers }), fetch(`${url}/input_items`, { headers })]);
        return [got.status, deleted.status, listed.status];
      }),
    );
    const counts = statuses.flat().reduce<Record<number, number>>((all, status) => ({ ...all, [status]: (all[status] ?? 0) + 1 }), {});
    // KEY_LOOKUP_MISS_BURST (20) look-ups that find nothing, then the account waits (KEY_LOOKUP_MISSES_PER_MINUTE).
    expect(Object.keys(counts).sort()).toEqual(['404', '429']);
    expect(counts[404]).toBeGreaterThanOrEqual(20);
    expect(counts[404]).toBeLessThan(60);
    // Another account is not held back by it.
    expect((await client.responses.retrieve(mine.id)).id).toBe(mine.id);
    // Ids that cannot be ours are 404s at once, whatever the budget.
    for (const id of ['resp_', 'x'.repeat(300), 'resp_ZZZZ', '..%2F..%2Fetc', "resp_' OR 1=1 --"]) {
      const answer = await fetch(`${harness.gateway}/v1/responses/${encodeURIComponent(id)}`, { headers });
      expect([id, answer.status]).toEqual([id, 404]);
    }
    const noKey = await fetch(`${harness.gateway}/v1/responses/${randomResponseId()}`);
    expect(noKey.status).toBe(401);
    const badLimit = await fetch(`${harness.gateway}/v1/responses/${randomResponseId()}/input_items?limit=500`, { headers: { authorization: `Bearer ${key}` } });
    expect(badLimit.status).toBe(400);
    const malformedPrevious = await rejection(client.responses.create({ model: 'mini', previous_response_id: 'resp_123', input: 'x' }));
    expect(malformedPrevious).toBeInstanceOf(NotFoundError);
  });

  it('keeps nothing with store: false, nor for a stream the upstream cut', async () => {
    const unstored = await client.responses.create({ model: 'mini', input: 'Forget this', store: false });
    expect((unstored as Stored).store).toBe(false);
    expect(await rejection(client.responses.retrieve(unstored.id))).toBeInstanceOf(NotFoundError);
    expect(await rejection(client.responses.create({ model: 'mini', previous_response_id: unstored.id, input: 'x' }))).toBeInstanceOf(NotFoundError);
    const streamed = await client.responses.stream({ model: 'mini', input: 'Forget this stream', store: false }).finalResponse();
    expect(await rejection(client.responses.retrieve(streamed.id))).toBeInstanceOf(NotFoundError);

    const id = await cutStreamResponseId(client, 'cut');
    expect(await rejection(client.responses.retrieve(id))).toBeInstanceOf(NotFoundError);
  });

  describe('on a source taking the Responses API natively', () => {
    type Item = { type?: string; call_id?: string; role?: string; content?: unknown; output?: string };
    /** The native Responses request the upstream received last whose input mentions `marker`. */
    const upstreamResponsesRequest = (marker: string): Record<string, unknown> => {
      const request = [...emulator.requests].reverse().find((one: RecordedRequest) => one.path === '/v1/responses' && JSON.stringify((one.body as { input?: unknown })?.input ?? null).includes(marker));
      expect(request).toBeDefined();
      return request!.body as Record<string, unknown>;
    };

    it('keeps an unstreamed answer as the client got it, under the gateway\'s own id, and continues it with previous_response_id', async () => {
      const question = 'What is the weather in Paris? (native unstreamed)';
      const called = await client.responses.create({ model: 'native', instructions: 'Old instructions, not carried over.', input: question, tools: [weatherTool] });
      expect(called.id).toMatch(/^resp_[0-9a-f]{32}$/);
      expect([(called as Stored).store, called.previous_response_id, called.model]).toEqual([true, null, 'acme/native']);
      const call = called.output.find((item) => item.type === 'function_call') as ResponseFunctionToolCall;
      expect(call).toMatchObject({ name: 'get_weather', arguments: '{"location":"Paris"}' });
      const { output_text: _added, ...retrieved } = await client.responses.retrieve(called.id);
      const { output_text: _alsoAdded, ...answered } = called;
      expect(retrieved).toEqual(answered);
      // The upstream keeps nothing of the operator's account.
      expect(upstreamResponsesRequest(question)).toMatchObject({ store: false });

      const answer = await client.responses.create({ model: 'native', previous_response_id: called.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'Sunny, 21 degrees' }], tools: [weatherTool] });
      expect(answer.output_text).toBe('Tool said: Sunny, 21 degrees');
      expect([answer.previous_response_id, (answer as Stored).store]).toEqual([called.id, true]);
      // The native request carried the stored turn's input and output items, then this one's; no instructions of the old turn, no previous_response_id upstream.
      const upstream = upstreamResponsesRequest('Sunny, 21 degrees');
      expect((upstream.input as Item[]).map((item) => item.type ?? 'message')).toEqual(['message', 'function_call', 'function_call_output']);
      expect((upstream.input as Item[])[1]).toMatchObject({ call_id: call.call_id, name: 'get_weather' });
      expect(upstream).not.toHaveProperty('previous_response_id');
      expect(upstream).not.toHaveProperty('instructions');
      const { output_text: _third, ...kept } = await client.responses.retrieve(answer.id);
      const { output_text: _fourth, ...given } = answer;
      expect(kept).toEqual(given);
    });

    it('keeps a streamed answer before its response.completed event is sent, as that event carried it, and continues it', async () => {
      const question = 'What is the weather in Paris? (native streamed)';
      const stream = client.responses.stream({ model: 'native', input: question, tools: [weatherTool] });
      let completed: { id: string } | undefined;
      let created: { id: string } | undefined;
      stream.on('response.created', (event) => (created = event.response));
      stream.on('response.completed', (event) => (completed = event.response));
      const final = await stream.finalResponse();
      expect(final.id).toMatch(/^resp_[0-9a-f]{32}$/);
      expect([created?.id, (final as Stored).store, final.model]).toEqual([final.id, true, 'acme/native']);
      // No wait: the response is there as soon as the stream said it completed.
      const { output_text: _added, ...retrieved } = await client.responses.retrieve(final.id);
      expect(retrieved).toEqual(completed);
      expect(retrieved).toHaveProperty('meta.usage.credits_used');

      const call = final.output.find((item) => item.type === 'function_call') as ResponseFunctionToolCall;
      const next = client.responses.stream({ model: 'native', previous_response_id: final.id, input: [{ type: 'function_call_output', call_id: call.call_id, output: 'Rainy, 12 degrees' }], tools: [weatherTool] });
      const answer = await next.finalResponse();
      expect([answer.output_text, answer.previous_response_id]).toEqual(['Tool said: Rainy, 12 degrees', final.id]);
      expect((upstreamResponsesRequest('Rainy, 12 degrees').input as Item[]).map((item) => item.type ?? 'message')).toEqual(['message', 'function_call', 'function_call_output']);
      expect((await client.responses.retrieve(answer.id)).previous_response_id).toBe(final.id);
    });

    it('keeps nothing of a native stream the upstream cut, nor with store: false', async () => {
      expect(await rejection(client.responses.retrieve(await cutStreamResponseId(client, 'native-cut')))).toBeInstanceOf(NotFoundError);

      const unstored = await client.responses.stream({ model: 'native', input: 'Forget this native stream', store: false }).finalResponse();
      expect((unstored as Stored).store).toBe(false);
      expect(await rejection(client.responses.retrieve(unstored.id))).toBeInstanceOf(NotFoundError);
    });

    it('keeps nothing of a native stream its client left, once it is settled', async () => {
      const { key: leaverKey, accountId } = await harness.paidKey(1_000_000);
      const abort = new AbortController();
      const response = await fetch(`${harness.gateway}/v1/responses`, {
        method: 'POST',
        headers: { authorization: `Bearer ${leaverKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'native-slow', stream: true, input: 'one two three four five six seven eight nine ten '.repeat(3) }),
        signal: abort.signal,
      });
      const reader = response.body!.getReader();
      let received = '';
      while ((received.match(/event: response\.output_text\.delta/g) ?? []).length < 3) received += new TextDecoder().decode((await reader.read()).value);
      abort.abort();
      const id = /"id":"(resp_[0-9a-f]{32})"/.exec(received)![1];
      await eventually(async () => emulator.requests.some((request) => (request.body as { model?: string }).model?.startsWith('gpt-native') && request.closedEarly), 5_000);
      // Billed (the stream is settled), never kept.
      await eventually(async () => (await harness.usageEntries(accountId, 5)).length === 1, 15_000, 100);
      const leaver = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: leaverKey, maxRetries: 0 });
      expect(await rejection(leaver.responses.retrieve(id))).toBeInstanceOf(NotFoundError);
    });
  });

  it('pages input items as OpenAI does (limit, order, after)', async () => {
    const input = ['one', 'two', 'three', 'four', 'five'].map((word) => ({ role: 'user' as const, content: `word ${word}` }));
    const created = await client.responses.create({ model: 'mini', input });
    const all = await client.responses.inputItems.list(created.id, { order: 'asc', limit: 100 });
    expect(all.data.map((item) => (item as unknown as { content: string }).content)).toEqual(input.map((item) => item.content));
    const seen: string[] = [];
    for await (const item of client.responses.inputItems.list(created.id, { limit: 2 })) seen.push((item as unknown as { content: string }).content);
    expect(seen).toEqual(input.map((item) => item.content).reverse());
  });

  it('documents the stored response routes in Swagger', async () => {
    const document = (await (await fetch(`${harness.gateway}/docs-json`)).json()) as { paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, { example?: unknown }> }> }>> };
    expect(Object.keys(document.paths['/v1/responses/{id}']).sort()).toEqual(['delete', 'get']);
    expect(document.paths['/v1/responses/{id}'].delete.responses['200'].content!['application/json'].example).toEqual({ id: expect.stringMatching(/^resp_/), object: 'response.deleted', deleted: true });
    expect(document.paths['/v1/responses/{id}/input_items'].get.responses['200'].content!['application/json'].example).toMatchObject({ object: 'list', has_more: false });
  });
});

describe('Stored responses past RESPONSES_RETENTION_DAYS, and conversations past BODY_LIMIT', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;

  beforeAll(async () => {
    emulator = await startEmulator();
    // Four seconds.
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/responses-store-catalogue.yaml'),
      RESPONSES_RETENTION_DAYS: String(4 / 86_400),
      BODY_LIMIT: '16kb',
      ...emulatedProviders(emulator.url),
    });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  it('are gone: retrieve and previous_response_id answer 404 once the retention has passed', async () => {
    const client = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: (await harness.paidKey(1_000_000)).key, maxRetries: 0 });
    const created = await client.responses.create({ model: 'mini', input: 'Short-lived' });
    const startedAt = Date.now();
    const early = await client.responses.retrieve(created.id).then(
      (response) => response.id,
      () => 'expired before read',
    );
    // Only a machine slower than the retention could miss the live read; it then proves nothing, but must not pass silently.
    if (Date.now() - startedAt < 3_000) expect(early).toBe(created.id);
    await eventually(
      async () => (await client.responses.retrieve(created.id).then(() => false, (caught: unknown) => caught instanceof NotFoundError)),
      15_000,
      250,
    );
    expect(await rejection(client.responses.create({ model: 'mini', previous_response_id: created.id, input: 'x' }))).toBeInstanceOf(NotFoundError);
  });

  it('refuses to continue a conversation that would be larger than BODY_LIMIT with the new turn, as a body carrying it all would be', async () => {
    const client = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: (await harness.paidKey(1_000_000)).key, maxRetries: 0 });
    const words = (count: number) => Array.from({ length: count }, (_, index) => `w${index}`).join(' ');
    // A first turn of ~13 KB of input (three messages of ~4.4 KB); a second of ~4.4 KB would take the conversation past 16 KB.
    const first = await client.responses.create({ model: 'claude', input: [1, 2, 3].map((turn) => ({ role: 'user' as const, content: `${turn}: ${words(900)}` })) });
    const small = await client.responses.create({ model: 'claude', input: 'hi' });
    expect((await client.responses.create({ model: 'claude', previous_response_id: small.id, input: words(900) })).status).toBe('completed');
    const refused = await rejection(client.responses.create({ model: 'claude', previous_response_id: first.id, input: words(900) }));
    expect(refused).toBeInstanceOf(BadRequestError);
    expect((refused as BadRequestError).message).toContain('previous_response_id: the conversation it continues, with this request and the items it references, is larger than the 16384-byte body limit');
  });
});

/** Streams a request to a model whose upstream cuts the stream: it was created, never completed, and failed; its response id. */
async function cutStreamResponseId(client: OpenAI, model: string): Promise<string> {
  const events: ResponseStreamEvent[] = [];
  const cut = await client.responses.create({ model, input: 'one two three four five six seven', stream: true });
  const failure = await rejection(
    (async () => {
      for await (const event of cut) events.push(event);
    })(),
  );
  const created = events.find((event) => event.type === 'response.created');
  expect(created).toBeDefined();
  expect(events.some((event) => event.type === 'response.completed')).toBe(false);
  expect(failure ?? events.find((event) => event.type === 'error')).toBeDefined();
  return (created as { response: { id: string } }).response.id;
}

function rejection(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
}
