import path from 'node:path';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody, type JsonResponse } from './support/http';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/**
 * The chat route is served two ways: straight from Node's server (the direct route, for
 * `application/json` bodies with a content-length) and through Express and Nest (every other
 * request). The same request must get the same answer either way. `application/vnd.igw+json`
 * is a JSON type body-parser accepts and the direct route leaves to Express (see its unit test).
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
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/chat-catalogue.yaml'),
      OPENAI_API_KEY: 'k',
      OPENAI_BASE_URL: `${emulator.url}/v1`,
      RATE_LIMIT_RPM: '100000',
      BODY_LIMIT: '64kb',
    });
    key = (await harness.paidKey(10_000)).key;
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  const both = async (pathname: string, rawBody: string, headers: Record<string, string> = {}, token: string | null = key) => {
    const send = (contentType: string) => call(`${harness.gateway}${pathname}`, { token: token ?? undefined, rawBody, headers: { ...headers, 'content-type': contentType } });
    return { direct: await send(DIRECT), express: await send(THROUGH_EXPRESS) };
  };

  const expectSameError = (answers: { direct: JsonResponse; express: JsonResponse }, status: number, pathname: string) => {
    expectErrorBody(answers.direct, status, pathname);
    expectErrorBody(answers.express, status, pathname);
    expect((answers.direct.body as { message: string }).message).toBe((answers.express.body as { message: string }).message);
    for (const header of ['retry-after', 'content-type']) expect(answers.direct.headers.get(header)).toBe(answers.express.headers.get(header));
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
});
