import path from 'node:path';
import { findFreePort } from '@igw/persistence';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody, type JsonResponse } from './support/http';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/**
 * The chat route is served two ways: straight from Node's server (the direct route, for
 * `application/json` bodies with a content-length) and through Express and Nest (every other
 * request). The same request must get the same answer either way. `application/vnd.igw+json`
 * is a JSON type the body reader accepts and the direct route leaves to Express (see its unit test).
 */
const DIRECT = 'application/json';
const THROUGH_EXPRESS = 'application/vnd.igw+json';

describe('chat completions: direct route and Express give the same answers', () => {
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
      // Nothing listens there: the unreachable upstream.
      MISTRAL_API_KEY: 'k',
      MISTRAL_BASE_URL: `http://127.0.0.1:${await findFreePort()}/v1`,
      UPSTREAM_TIMEOUT_MS: '1000',
      UPSTREAM_MAX_RESPONSE_BYTES: '65536',
      RATE_LIMIT_RPM: '100000',
      BODY_LIMIT: '64kb',
    });
    key = (await harness.paidKey(1_000_000)).key;
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  const both = async (pathname: string, rawBody: string, headers: Record<string, string> = {}, token: string | null = key) => {
    const send = (contentType: string) => call(`${harness.gateway}${pathname}`, { token: token ?? undefined, rawBody, headers: { ...headers, 'content-type': contentType } });
    return { direct: await send(DIRECT), express: await send(THROUGH_EXPRESS) };
  };

  /** What must match: the status, the headers a client reads, the error body but for its request id and time. */
  const comparable = (response: JsonResponse) => {
    const { requestId, timestamp, ...body } = response.body as Record<string, unknown>;
    expect(requestId).toBe(response.headers.get('x-request-id'));
    expect(typeof timestamp).toBe('string');
    const headers = Object.fromEntries(['retry-after', 'content-type', 'cache-control'].map((name) => [name, response.headers.get(name)]));
    return { status: response.status, headers, body };
  };

  const expectSameError = (answers: { direct: JsonResponse; express: JsonResponse }, status: number, pathname: string, message?: RegExp) => {
    expectErrorBody(answers.direct, status, pathname, message);
    expect(comparable(answers.direct)).toEqual(comparable(answers.express));
  };

  const ask = (extra: Record<string, unknown> = {}) => JSON.stringify({ model: 'mini', messages: [{ role: 'user', content: 'hello' }], ...extra });

  it('answers a valid request alike, usage and charge included', async () => {
    const { direct, express } = await both('/v1/chat/completions', ask({ max_tokens: 20 }));
    expect(direct.status).toBe(200);
    expect(express.status).toBe(200);
    const shape = (response: JsonResponse) => {
      const { id, created, ...rest } = response.body as Record<string, unknown>;
      expect(typeof id).toBe('string');
      expect(typeof created).toBe('number');
      return rest;
    };
    expect(shape(direct)).toEqual(shape(express));
    expect(direct.headers.get('content-type')).toBe(express.headers.get('content-type'));
    expect(direct.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/);
    // The shorter path also serves /chat/completions and keeps the query string out of the way.
    expect((await call(`${harness.gateway}/chat/completions?trace=1`, { token: key, rawBody: ask(), headers: { 'content-type': DIRECT } })).status).toBe(200);
  });

  it.each([
    ['malformed JSON', '{"model": "mini", "messages": ['],
    ['a JSON string instead of an object', '"hello"'],
    ['a number after white space', '  \n 42'],
    ['white space only', '   '],
    ['an empty body', ''],
    ['an array', '[]'],
    ['a wrong field type', ask({ temperature: 'hot' })],
    ['an out-of-range field', ask({ temperature: 5 })],
    ['a role the model refuses', JSON.stringify({ model: 'test/no-system', messages: [{ role: 'system', content: 'x' }, { role: 'user', content: 'y' }] })],
  ])('rejects %s with the same 400', async (_, rawBody) => {
    expectSameError(await both('/v1/chat/completions', rawBody), 400, '/v1/chat/completions');
  });

  it('reads a body that starts with a byte-order mark alike', async () => {
    const { direct, express } = await both('/v1/chat/completions', `\uFEFF${ask()}`);
    expect([direct.status, express.status]).toEqual([200, 200]);
  });

  it('refuses a missing or unknown key, and an unknown model, alike', async () => {
    expectSameError(await both('/v1/chat/completions', ask(), {}, null), 401, '/v1/chat/completions');
    expectSameError(await both('/v1/chat/completions', ask(), {}, 'sk-not-a-key'), 401, '/v1/chat/completions');
    expectSameError(await both('/v1/chat/completions', ask({ model: 'no/such-model' })), 404, '/v1/chat/completions');
  });

  it('streams alike', async () => {
    const stream = async (contentType: string) => {
      const response = await fetch(`${harness.gateway}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
        body: ask({ stream: true, stream_options: { include_usage: true } }),
      });
      const text = await response.text();
      const events = text.split('\n\n').filter(Boolean);
      const content = events
        .filter((event) => event !== 'data: [DONE]')
        .map((event) => JSON.parse(event.slice('data: '.length)) as { choices: Array<{ delta?: { content?: string } }>; usage?: unknown })
        .map((chunk) => chunk.choices[0]?.delta?.content ?? '')
        .join('');
      return { status: response.status, type: response.headers.get('content-type'), last: events.at(-1), content };
    };
    const [direct, express] = [await stream(DIRECT), await stream(THROUGH_EXPRESS)];
    expect(direct).toEqual(express);
    expect(direct.status).toBe(200);
    expect(direct.last).toBe('data: [DONE]');
    expect(direct.content.length).toBeGreaterThan(0);
  });

  it('refuses a key without credits with the same 403', async () => {
    const { key: broke } = await harness.paidKey(0);
    expectSameError(await both('/v1/chat/completions', ask(), {}, broke), 403, '/v1/chat/completions');
  });

  /** A paid account whose keys may have one request in flight at once, and a key of it. */
  const oneAtATime = async () => {
    const account = await call<{ id: string }>(`${harness.billing}/admin/v1/accounts`, { token: harness.adminToken, body: { credits: 10_000, plan: 'paid' } });
    const limits = await call(`${harness.billing}/admin/v1/accounts/${account.body.id}`, { method: 'PATCH', token: harness.adminToken, body: { concurrentRequests: 1 } });
    expect(limits.status).toBe(200);
    const created = await call<{ key: string }>(`${harness.billing}/admin/v1/accounts/${account.body.id}/keys`, { token: harness.adminToken, body: {} });
    return { accountId: account.body.id, key: created.body.key };
  };

  it('refuses a request over the concurrency limit with the same 429 and retry-after', async () => {
    const { key: single } = await oneAtATime();
    const seen = emulator.requests.length;
    const inFlight = call(`${harness.gateway}/v1/chat/completions`, { token: single, body: JSON.parse(ask({ model: 'test/unhurried' })) });
    // Its upstream call began: the request holds the key's one slot until the answer comes.
    await eventually(async () => emulator.requests.slice(seen).some((request) => (request.body as { model?: string }).model === 'unhurried@delay=800'), 10_000, 10);
    const answers = await both('/v1/chat/completions', ask(), {}, single);
    expectSameError(answers, 429, '/v1/chat/completions', /^Too Many Requests$/);
    expect(answers.direct.headers.get('retry-after')).toBe('1');
    expect((await inFlight).status).toBe(200);
  });

  it.each([
    ['429, with its retry-after', 'test/upstream-429', 429, /^Too Many Requests$/],
    ['500', 'test/upstream-500', 502, /^Bad Gateway: the upstream provider openai failed \(500\)/],
    ['503', 'test/upstream-503', 502, /^Bad Gateway: the upstream provider openai failed \(503\)/],
    ['401', 'test/upstream-401', 502, /refused the gateway's credentials/],
    ['403', 'test/upstream-403', 502, /refused the gateway's credentials/],
    ['400', 'test/upstream-400', 400, /^Upstream provider openai rejected the request: /],
    ['404', 'test/upstream-404', 404, /^Upstream provider openai rejected the request: /],
    ['422', 'test/upstream-422', 422, /^Upstream provider openai rejected the request: /],
    ['a timeout', 'test/upstream-timeout', 504, /^Gateway Timeout: openai did not answer within 1000 ms/],
    ['no connection', 'test/upstream-unreachable', 503, /^Service Unavailable: the upstream provider mistral cannot be reached/],
    // A stream reads events, not one body: only an answer in one piece has a size limit.
    ['an answer past the size limit', 'test/upstream-oversized', 502, /^Bad Gateway: the upstream answer from openai exceeded/, [false]],
  ])('maps an upstream %s alike, streamed or not', async (_, model, status, message, streamed = [false, true]) => {
    for (const stream of streamed) {
      const answers = await both('/v1/chat/completions', ask({ model, stream }));
      expectSameError(answers, status, '/v1/chat/completions', message);
      if (status === 429) expect(answers.direct.headers.get('retry-after')).toBe('1');
    }
  });

  it('refuses alike a request the upstream format cannot express (400)', async () => {
    const audio = { role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'AAAA', format: 'wav' } }] };
    expectSameError(await both('/v1/chat/completions', JSON.stringify({ model: 'test/claude', messages: [audio] })), 400, '/v1/chat/completions', /not supported for Anthropic/);
  });

  it('bills a client that leaves alike, and frees its slot', async () => {
    /** Leaves a stream after its first chunk, then an answer before it comes; waits each time until the key may send again. */
    const leaveTwice = async (contentType: string) => {
      const { accountId, key: single } = await oneAtATime();
      const post = (body: string, signal: AbortSignal) =>
        fetch(`${harness.gateway}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${single}`, 'content-type': contentType }, body, signal });
      const slotFreed = () => eventually(async () => (await call(`${harness.gateway}/v1/chat/completions`, { token: single, body: JSON.parse(ask()) })).status === 200, 10_000, 100);

      const leaving = new AbortController();
      const stream = await post(ask({ model: 'test/slow', stream: true }), leaving.signal);
      expect(stream.status).toBe(200);
      await stream.body!.getReader().read();
      leaving.abort();
      await slotFreed();

      const impatient = new AbortController();
      const unanswered = post(ask({ model: 'test/unhurried', user: contentType }), impatient.signal).catch((error: Error) => error.name);
      // It leaves once its upstream call began, before the answer comes.
      await eventually(async () => emulator.requests.some((request) => (request.body as { user?: string }).user === contentType), 10_000, 10);
      impatient.abort();
      expect(await unanswered).toBe('AbortError');
      await slotFreed();

      // The two left requests and the two that found the slot free.
      await eventually(async () => (await harness.usageEntries(accountId, 10)).length === 4, 15_000, 100);
      return (await harness.usageEntries(accountId, 10)).map(({ model, endpoint, units, credits }) => ({ model, endpoint, units, credits }));
    };
    const [direct, express] = await Promise.all([leaveTwice(DIRECT), leaveTwice(THROUGH_EXPRESS)]);
    expect(direct).toEqual(express);
    expect(direct.map(({ model }) => model)).toEqual(['test/mini', 'test/unhurried', 'test/mini', 'test/slow']);
    expect(direct.every(({ credits }) => Number(credits) > 0)).toBe(true);
  });
});
