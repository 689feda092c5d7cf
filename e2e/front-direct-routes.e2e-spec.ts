import path from 'node:path';
import { findFreePort } from '@igw/persistence';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/**
 * The Responses, Messages and Gemini APIs are served two ways, as chat completions are
 * (chat-direct-route.e2e-spec.ts): straight from Node's server (their direct routes, for
 * `application/json` bodies with a content-length) and through Express and Nest (every other
 * request; `application/vnd.igw+json` is a JSON type the body reader reads and the direct routes
 * leave alone). Every kind of request must get the same status, headers and body either way,
 * streams and the ledger's rows included.
 */
const DIRECT = 'application/json';
const THROUGH_EXPRESS = 'application/vnd.igw+json';
const WAYS = [DIRECT, THROUGH_EXPRESS] as const;

interface Answer {
  status: number;
  headers: Record<string, string | null>;
  text: string;
}

/** The headers a client reads. */
const READ_HEADERS = ['content-type', 'cache-control', 'retry-after', 'x-gateway-dropped-tools'];

describe('Responses and Messages APIs: direct routes and Express give the same answers', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let key: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/chat-paths-catalogue.yaml'),
      OPENAI_API_KEY: 'k',
      OPENAI_BASE_URL: `${emulator.url}/v1`,
      ANTHROPIC_API_KEY: 'k',
      ANTHROPIC_BASE_URL: emulator.url,
      GEMINI_API_KEY: 'k',
      GEMINI_BASE_URL: `${emulator.url}/v1beta`,
      // Nothing listens there: the unreachable upstream.
      MISTRAL_API_KEY: 'k',
      MISTRAL_BASE_URL: `http://127.0.0.1:${await findFreePort()}/v1`,
      UPSTREAM_TIMEOUT_MS: '1000',
      RATE_LIMIT_RPM: '100000',
      BODY_LIMIT: '64kb',
    });
    key = (await harness.paidKey(1_000_000)).key;
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  type KeyAs = 'bearer' | 'x-api-key' | 'x-goog-api-key' | 'none';

  const send = async (pathname: string, rawBody: string, contentType: string, options: { token?: string; keyAs?: KeyAs; headers?: Record<string, string> } = {}): Promise<Answer> => {
    const token = options.token ?? key;
    const keyAs = options.keyAs ?? 'bearer';
    const headers: Record<string, string> = { ...options.headers, 'content-type': contentType };
    if (keyAs === 'bearer') headers.authorization = `Bearer ${token}`;
    if (keyAs === 'x-api-key') headers['x-api-key'] = token;
    if (keyAs === 'x-goog-api-key') headers['x-goog-api-key'] = token;
    const response = await fetch(`${harness.gateway}${pathname}`, { method: 'POST', headers, body: rawBody });
    const text = await response.text();
    const requestId = response.headers.get('x-request-id');
    expect(requestId).toMatch(/^[0-9a-f-]{36}$/);
    return { status: response.status, headers: Object.fromEntries(READ_HEADERS.map((name) => [name, response.headers.get(name)])), text: comparableText(text, requestId!) };
  };

  /**
   * What differs between two answers to the same request: the request id, times, and the ids
   * the gateway and the emulator make up (`resp_…`, `msg_…`, `fc_…`, `chatcmpl-…`).
   */
  const comparableText = (text: string, requestId: string) =>
    text
      .replaceAll(requestId, '<request id>')
      .replace(/"timestamp":"[^"]+"/g, '"timestamp":"<time>"')
      .replace(/"(created_at|created)":\d+/g, '"$1":0')
      .replace(/\b(resp|msg|fc|rs|call)_[A-Za-z0-9_-]+/g, '$1_<id>')
      .replace(/chatcmpl-[A-Za-z0-9-]+/g, 'chatcmpl-<id>')
      .replace(/"responseId":"[^"]+"/g, '"responseId":"<id>"');

  const both = async (pathname: string, rawBody: string, options: Parameters<typeof send>[3] = {}) => {
    const [direct, express] = [await send(pathname, rawBody, DIRECT, options), await send(pathname, rawBody, THROUGH_EXPRESS, options)];
    expect(direct).toEqual(express);
    return direct;
  };

  const responses = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'mini', input: 'Count the words in this sentence', ...extra });
  const messages = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'mini', max_tokens: 200, messages: [{ role: 'user', content: 'Count the words in this sentence' }], ...extra });
  const jsonOf = (answer: Answer) => JSON.parse(answer.text) as Record<string, unknown>;

  describe('POST /v1/responses', () => {
    it('answers alike, whole and streamed, on an OpenAI and an Anthropic model, with a query string', async () => {
      for (const model of ['mini', 'test/claude']) {
        const whole = await both('/v1/responses?trace=1', responses({ model, instructions: 'Be brief.', max_output_tokens: 100 }));
        expect(whole.status).toBe(200);
        expect(jsonOf(whole)).toMatchObject({ object: 'response', status: 'completed', output: [{ type: 'message', content: [{ type: 'output_text' }] }] });
        const streamed = await both('/v1/responses', responses({ model, stream: true, store: false }));
        expect(streamed.status).toBe(200);
        expect(streamed.headers['content-type']).toBe('text/event-stream; charset=utf-8');
        expect(streamed.text).toMatch(/^event: response\.created\n/);
        expect(streamed.text).toMatch(/event: response\.completed\ndata: [^\n]+\n\n$/);
      }
    });

    it('names the built-in tools it left out alike, and calls a function alike', async () => {
      const tools = [{ type: 'web_search' }, { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } }];
      const answer = await both('/v1/responses', responses({ input: 'What is the weather in Paris?', tools }));
      expect(answer.status).toBe(200);
      expect(answer.headers['x-gateway-dropped-tools']).toBe('web_search');
    });

    it("names a dropped tool whose name cannot be a header value percent-encoded, never a 500", async () => {
      const tools = [{ type: 'custom', name: 'évaluer\r\nSet-Cookie: a=b, c%' }, { type: 'web_search\n' }];
      const answer = await both('/v1/responses', responses({ tools }));
      expect(answer.status).toBe(200);
      expect(answer.headers['x-gateway-dropped-tools']).toBe('%C3%A9valuer%0D%0ASet-Cookie:%20a=b%2C%20c%25, web_search%0A');
    });

    it.each([
      ['malformed JSON', '{"model": "mini", "input": '],
      ['an array', '[]'],
      ['no input', JSON.stringify({ model: 'mini' })],
      ['a wrong field type', responses({ temperature: 'hot' })],
      ['a tool_choice forcing a built-in tool', responses({ tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } })],
    ])('refuses %s with the same 400', async (_, rawBody) => {
      expect((await both('/v1/responses', rawBody)).status).toBe(400);
    });
  });

  describe('POST /v1/messages', () => {
    it("answers Claude Code's ?beta=true with the key as x-api-key alike, whole and streamed, on an OpenAI and an Anthropic model", async () => {
      const anthropic = { 'anthropic-version': '2023-06-01', 'anthropic-beta': 'interleaved-thinking-2025-05-14' };
      for (const model of ['mini', 'test/claude']) {
        const whole = await both('/v1/messages?beta=true', messages({ model, system: [{ type: 'text', text: 'Be brief.', cache_control: { type: 'ephemeral' } }] }), { keyAs: 'x-api-key', headers: anthropic });
        expect(whole.status).toBe(200);
        expect(jsonOf(whole)).toMatchObject({ type: 'message', role: 'assistant', stop_reason: 'end_turn' });
        const streamed = await both('/v1/messages?beta=true', messages({ model, stream: true }), { keyAs: 'x-api-key', headers: anthropic });
        expect(streamed.status).toBe(200);
        expect(streamed.text).toMatch(/^event: message_start\n/);
        expect(streamed.text).toMatch(/event: message_stop\ndata: [^\n]+\n\n$/);
      }
      expect((await both('/v1/messages', messages())).status).toBe(200);
    });

    it("names a dropped server tool whose name cannot be a header value percent-encoded, never a 500, on an OpenAI and an Anthropic model", async () => {
      const tools = [{ type: 'web_fetch_20250910', name: 'web_fetch\r\nX-Injected: 1' }, { type: 'code_execution_20250825', name: 'code\u0000' }];
      for (const model of ['mini', 'test/claude']) {
        const answer = await both('/v1/messages', messages({ model, tools }));
        expect(answer.status).toBe(200);
        expect(answer.headers['x-gateway-dropped-tools']).toBe('web_fetch%0D%0AX-Injected:%201, code%00');
      }
    });

    it('counts tokens alike', async () => {
      const counted = await both('/v1/messages/count_tokens?beta=true', JSON.stringify({ model: 'mini', messages: [{ role: 'user', content: 'Count the words in this sentence' }] }), { keyAs: 'x-api-key' });
      expect(counted.status).toBe(200);
      expect(jsonOf(counted)).toEqual({ input_tokens: expect.any(Number) });
      const refused = await both('/v1/messages/count_tokens', JSON.stringify({ model: 'mini' }), { keyAs: 'x-api-key' });
      expect(refused.status).toBe(400);
      expect(jsonOf(refused)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    });

    it.each([
      ['malformed JSON', '{"model": "mini", "messages": ['],
      ['white space only', '   '],
      ['no max_tokens', JSON.stringify({ model: 'mini', messages: [{ role: 'user', content: 'x' }] })],
      ['a role it does not know', messages({ messages: [{ role: 'tool', content: 'x' }] })],
      ['a wrong field type', messages({ temperature: 'hot' })],
    ])("refuses %s with the same 400, in Anthropic's error shape", async (_, rawBody) => {
      const answer = await both('/v1/messages?beta=true', rawBody, { keyAs: 'x-api-key' });
      expect(answer.status).toBe(400);
      expect(jsonOf(answer)).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' }, statusCode: 400, path: '/v1/messages' });
    });
  });

  describe('the Gemini API', () => {
    const generate = (extra: Record<string, unknown> = {}) => JSON.stringify({ contents: [{ role: 'user', parts: [{ text: 'Count the words in this sentence' }] }], ...extra });

    it('answers alike, whole, as events and as a streamed array, on an OpenAI and a Gemini model, the key in each of its places', async () => {
      for (const model of ['mini', 'test/gemini']) {
        const whole = await both(`/v1beta/models/${model}:generateContent`, generate({ systemInstruction: { parts: [{ text: 'Be brief.' }] } }), { keyAs: 'x-goog-api-key' });
        expect(whole.status).toBe(200);
        expect(jsonOf(whole)).toMatchObject({ candidates: [{ content: { role: 'model' }, finishReason: 'STOP' }] });
        const events = await both(`/v1beta/models/${model}:streamGenerateContent?alt=sse&key=${key}`, generate(), { keyAs: 'none' });
        expect([events.status, events.headers['content-type']]).toEqual([200, 'text/event-stream; charset=utf-8']);
        expect(events.text).toMatch(/^data: \{"candidates"/);
        const array = await both(`/v1/models/${model}:streamGenerateContent`, generate());
        expect([array.status, array.headers['content-type']]).toEqual([200, 'application/json; charset=utf-8']);
        expect(JSON.parse(array.text)).toEqual(expect.arrayContaining([expect.objectContaining({ usageMetadata: expect.any(Object) })]));
      }
    });

    it("counts tokens and embeds alike, and refuses alike in Google's error shape", async () => {
      const counted = await both('/v1beta/models/mini:countTokens', generate(), { keyAs: 'x-goog-api-key' });
      expect([counted.status, Object.keys(jsonOf(counted))]).toEqual([200, ['totalTokens']]);
      const embedded = await both('/v1beta/models/test/embed:batchEmbedContents', JSON.stringify({ requests: [{ content: { parts: [{ text: 'a' }] } }, { content: { parts: [{ text: 'b' }] } }] }), { keyAs: 'x-goog-api-key' });
      expect([embedded.status, (jsonOf(embedded).embeddings as unknown[]).length]).toEqual([200, 2]);
      for (const [rawBody, status, keyAs] of [
        ['{"contents": [', 400, 'x-goog-api-key'],
        [generate({ contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }), 400, 'x-goog-api-key'],
        [generate(), 401, 'x-api-key'],
      ] as const) {
        const refused = await both('/v1beta/models/mini:generateContent', rawBody, { keyAs });
        expect(refused.status).toBe(status);
        expect(jsonOf(refused)).toMatchObject({ error: { code: status, status: status === 400 ? 'INVALID_ARGUMENT' : 'UNAUTHENTICATED' }, statusCode: status, path: '/v1beta/models/mini:generateContent' });
      }
    });
  });

  describe('errors of both APIs', () => {
    const routes: Array<[string, string, (extra?: Record<string, unknown>) => string]> = [
      ['/v1/responses', 'Responses', responses],
      ['/v1/messages?beta=true', 'Messages', messages],
    ];
    /** An error body of the route's API: Anthropic's shape on /v1/messages, the spec's on /v1/responses. */
    const expectErrorOf = (pathname: string, answer: Answer, status: number, message: RegExp) => {
      expect(answer.status).toBe(status);
      const body = jsonOf(answer);
      expect(body).toMatchObject({ statusCode: status, path: pathname.split('?')[0], requestId: '<request id>' });
      expect(body.message).toMatch(message);
      if (pathname.startsWith('/v1/messages')) expect(body).toMatchObject({ type: 'error', error: { message: body.message } });
      else expect(body).toMatchObject({ error: { message: body.message } });
    };

    it.each(routes)('%s: refuses a missing, unknown or broke key, and an unknown model, alike', async (pathname, _, body) => {
      expectErrorOf(pathname, await both(pathname, body(), { keyAs: 'none' }), 401, /API key/i);
      expectErrorOf(pathname, await both(pathname, body(), { token: 'sk-not-a-key' }), 401, /API key/i);
      expectErrorOf(pathname, await both(pathname, body(), { keyAs: 'x-api-key', token: 'sk-not-a-key' }), 401, /API key/i);
      // The key as x-api-key is the Messages API's alone, as RequireApiKey says on each route.
      const asXApiKey = await both(pathname, body(), { keyAs: 'x-api-key' });
      if (pathname.startsWith('/v1/messages')) expect(asXApiKey.status).toBe(200);
      else expectErrorOf(pathname, asXApiKey, 401, /API key/i);
      expectErrorOf(pathname, await both(pathname, body({ model: 'no/such-model' })), 404, /model/i);
      const { key: broke } = await harness.paidKey(0);
      expectErrorOf(pathname, await both(pathname, body(), { token: broke }), 403, /credit/i);
    });

    it.each(routes)('%s: maps upstream failures alike, streamed or not', async (pathname, _, body) => {
      for (const stream of [false, true]) {
        const busy = await both(pathname, body({ model: 'test/upstream-429', stream }));
        expectErrorOf(pathname, busy, 429, /^Too Many Requests$/);
        expect(busy.headers['retry-after']).toBe('1');
        expectErrorOf(pathname, await both(pathname, body({ model: 'test/upstream-500', stream })), 502, /^Bad Gateway: the upstream provider openai failed \(500\)/);
        expectErrorOf(pathname, await both(pathname, body({ model: 'test/upstream-400', stream })), 400, /^Upstream provider openai rejected the request: /);
        expectErrorOf(pathname, await both(pathname, body({ model: 'test/upstream-timeout', stream })), 504, /^Gateway Timeout: openai did not answer within 1000 ms/);
        expectErrorOf(pathname, await both(pathname, body({ model: 'test/upstream-unreachable', stream })), 503, /cannot be reached/);
      }
    });

    it.each(routes)('%s: refuses a body over the limit alike (Express answers both: the direct route leaves it)', async (pathname, _, body) => {
      const answer = await both(pathname, body({ instructions: 'x'.repeat(70_000) }));
      expectErrorOf(pathname, answer, 413, /too large/);
    });
  });

  it('bills alike: the same ledger rows for each API, a client that leaves a stream included', async () => {
    const bill = async (contentType: string) => {
      const { accountId, key: own } = await harness.paidKey(1_000_000);
      const post = (pathname: string, body: string, signal?: AbortSignal) =>
        fetch(`${harness.gateway}${pathname}`, { method: 'POST', headers: { authorization: `Bearer ${own}`, 'content-type': contentType }, body, signal });
      expect((await post('/v1/responses', responses())).status).toBe(200);
      expect((await post('/v1/messages', messages())).status).toBe(200);
      await (await post('/v1/messages', messages({ stream: true }))).text();
      // A client that leaves a slow stream after its first events.
      const leaving = new AbortController();
      const slow = await post('/v1/responses', responses({ model: 'test/slow', stream: true }), leaving.signal);
      expect(slow.status).toBe(200);
      await slow.body!.getReader().read();
      leaving.abort();
      await eventually(async () => (await harness.usageEntries(accountId, 10)).length === 4, 15_000, 100);
      return (await harness.usageEntries(accountId, 10)).map(({ model, endpoint, units, credits }) => ({ model, endpoint, units, credits }));
    };
    const [direct, express] = await Promise.all(WAYS.map(bill));
    expect(direct).toEqual(express);
    expect(direct.map(({ endpoint }) => endpoint).sort()).toEqual(['messages', 'messages', 'responses', 'responses']);
    expect(direct.every(({ credits }) => Number(credits) > 0)).toBe(true);
  });
});
