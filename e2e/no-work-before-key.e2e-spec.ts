import { request as httpRequest, type IncomingHttpHeaders } from 'node:http';
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { ErrorMessages } from '@igw/contracts';
import { generateApiKey } from '@igw/http';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody, type JsonResponse } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/** What the body would be, declared but never all sent: the server may answer only from the headers. */
const DECLARED_BYTES = 1_000_000;
/** How long the answer may take: on a server that reads the body first it never comes. */
const ANSWER_WITHIN_MS = 5_000;

/**
 * Sends the headers and the first bytes of a body that never ends (`content-length` of a
 * megabyte, or chunked), and returns the answer the server gives meanwhile.
 */
function answerToUnfinishedBody(
  url: string,
  method: string,
  headers: Record<string, string>,
  framing: 'content-length' | 'chunked',
  firstBytes: Buffer = Buffer.from('{"model":"test/mini","messages":[{"role":"user","content":"'),
): Promise<JsonResponse> {
  return new Promise((resolve, reject) => {
    const request = httpRequest(url, {
      method,
      headers: { 'content-type': 'application/json', ...headers, ...(framing === 'content-length' ? { 'content-length': String(DECLARED_BYTES) } : { 'transfer-encoding': 'chunked' }) },
    });
    const timer = setTimeout(() => {
      request.destroy();
      reject(new Error(`no answer within ${ANSWER_WITHIN_MS} ms while the body was unfinished: the server waited for the body`));
    }, ANSWER_WITHIN_MS);
    request.on('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
    request.on('response', (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        clearTimeout(timer);
        request.destroy();
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: response.statusCode!, headers: new Headers(flatHeaders(response.headers)), body: text ? JSON.parse(text) : undefined });
      });
    });
    request.flushHeaders();
    request.write(firstBytes);
  });
}

function flatHeaders(headers: IncomingHttpHeaders): Record<string, string> {
  return Object.fromEntries(Object.entries(headers).map(([name, value]) => [name, Array.isArray(value) ? value.join(', ') : String(value ?? '')]));
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const unknownKey = () => generateApiKey().key;

describe('no work for a caller without a key', () => {
  let emulator: RunningEmulator;
  let app: StandaloneHarness;

  beforeAll(async () => {
    emulator = await startEmulator();
    app = await startStandaloneHarness({
      ...emulatedProviders(emulator.url),
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/money-catalogue.yaml'),
      RATE_LIMIT_RPM: '100000',
      RATE_LIMIT_CONCURRENCY: '1000',
      // The test's requests come through "a proxy" on loopback naming their client.
      TRUSTED_PROXIES: '127.0.0.1, ::1',
      KEY_LOOKUP_MISS_BURST: '10',
      KEY_LOOKUP_MISSES_PER_MINUTE: '6',
    });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await emulator?.close();
  });

  describe('a key is checked from the headers before a byte of the body is read', () => {
    const keyRoutes = () => [
      { name: 'chat, the direct route', url: `${app.gateway}/v1/chat/completions`, method: 'POST', framing: 'content-length' as const },
      { name: 'chat through Express (chunked)', url: `${app.gateway}/v1/chat/completions`, method: 'POST', framing: 'chunked' as const },
      { name: 'embeddings', url: `${app.gateway}/v1/embeddings`, method: 'POST', framing: 'content-length' as const },
      { name: "billing's balance", url: `${app.billing}/v1/billing/balance`, method: 'GET', framing: 'content-length' as const },
    ];
    const credentials: Array<[string, () => Record<string, string>]> = [
      ['no key', () => ({})],
      ['a malformed key', () => bearer('igw_not-a-key')],
      ['an unknown well-formed key', () => ({ ...bearer(unknownKey()), 'x-forwarded-for': '192.0.2.1' })],
    ];

    it.each(credentials)('answers %s with 401 on every key route while the body is still coming', async (_name, credential) => {
      for (const route of keyRoutes()) {
        const answer = await answerToUnfinishedBody(route.url, route.method, credential(), route.framing);
        expectErrorBody(answer, 401, new URL(route.url).pathname, new RegExp(escape(ErrorMessages.invalidApiKey)));
      }
    });

    it('answers a missing or wrong admin token with 401 on the admin routes of billing and catalogue while the body is still coming', async () => {
      const adminRoutes = [
        { url: `${app.billing}/admin/v1/accounts`, method: 'POST' },
        { url: `${app.catalogue}/admin/v1/catalogue/models/test/new`, method: 'PUT' },
      ];
      for (const route of adminRoutes) {
        for (const credential of [{}, bearer('not-the-admin-token')]) {
          for (const framing of ['content-length', 'chunked'] as const) {
            const answer = await answerToUnfinishedBody(route.url, route.method, credential, framing, Buffer.from('{"credits":'));
            expectErrorBody(answer, 401, new URL(route.url).pathname, new RegExp(escape(ErrorMessages.invalidAdminToken)));
          }
        }
      }
    });

    it('still reads the body of a request with a valid key', async () => {
      const { key } = await app.paidKey(1_000_000);
      const answer = await call(`${app.gateway}/v1/chat/completions`, { token: key, body: { model: 'test/mini', messages: [{ role: 'user', content: 'hi' }], max_tokens: 5 } });
      expect(answer.status).toBe(200);
    });
  });

  describe('compressed request bodies', () => {
    const message = /^Unsupported body encoding: request bodies must not be compressed \(Content-Encoding: gzip\)\. Send the JSON uncompressed\.$/;

    it('refuses a gzip body with 415 on every service, before reading it', async () => {
      const { key } = await app.paidKey(1_000_000);
      const routes = [
        { url: `${app.gateway}/v1/chat/completions`, method: 'POST', credential: bearer(key) },
        { url: `${app.gateway}/v1/embeddings`, method: 'POST', credential: bearer(key) },
        { url: `${app.billing}/admin/v1/accounts`, method: 'POST', credential: bearer(app.adminToken) },
        { url: `${app.catalogue}/admin/v1/catalogue/models/test/new`, method: 'PUT', credential: bearer(app.adminToken) },
      ];
      for (const route of routes) {
        for (const framing of ['content-length', 'chunked'] as const) {
          const answer = await answerToUnfinishedBody(route.url, route.method, { ...route.credential, 'content-encoding': 'gzip' }, framing, gzipSync('{"model":'));
          expectErrorBody(answer, 415, new URL(route.url).pathname, message);
        }
      }
    });

    it('does not inflate a small body that would inflate to megabytes', async () => {
      const { key } = await app.paidKey(1_000_000);
      const bomb = gzipSync(`{"model":"test/mini","messages":[${'{},'.repeat(3_000_000)}{}]}`);
      expect(bomb.length).toBeLessThan(16_384);
      const response = await fetch(`${app.gateway}/v1/chat/completions`, {
        method: 'POST',
        headers: { ...bearer(key), 'content-type': 'application/json', 'content-encoding': 'gzip' },
        body: bomb,
      });
      expectErrorBody({ status: response.status, headers: response.headers, body: await response.json() }, 415, '/v1/chat/completions', message);
    });
  });

  describe('bodies not sent as JSON', () => {
    it('answers 415 naming Content-Type: application/json on every service, and 401 first without a credential', async () => {
      const { key } = await app.paidKey(1_000_000);
      const routes = [
        { url: `${app.gateway}/v1/chat/completions`, method: 'POST', credential: bearer(key) },
        { url: `${app.gateway}/v1/responses`, method: 'POST', credential: bearer(key) },
        { url: `${app.billing}/admin/v1/accounts`, method: 'POST', credential: bearer(app.adminToken) },
        { url: `${app.catalogue}/admin/v1/catalogue/models/test/new`, method: 'PUT', credential: bearer(app.adminToken) },
      ];
      // What curl -d sends without -H "Content-Type: application/json".
      const form = { 'content-type': 'application/x-www-form-urlencoded' };
      const message = /^Unsupported Media Type: the body must be JSON sent with the header Content-Type: application\/json \(it was application\/x-www-form-urlencoded\)\.$/;
      for (const route of routes) {
        const body = '{"model":"test/mini","messages":[{"role":"user","content":"hi"}]}';
        const refused = await fetch(route.url, { method: route.method, headers: { ...route.credential, ...form }, body });
        expectErrorBody({ status: refused.status, headers: refused.headers, body: await refused.json() }, 415, new URL(route.url).pathname, message);
        const anonymous = await fetch(route.url, { method: route.method, headers: form, body });
        expect(anonymous.status).toBe(401);
        await anonymous.body?.cancel();
      }
    });
  });

  describe('holds count the body as read', () => {
    it('refuses a chunked chat body whose tool schemas do not fit the balance (403), where only its messages would', async () => {
      // 20,000 credits; an input token holds 2: the 60 KB schema alone holds 120,000.
      const { key } = await app.paidKey(20_000);
      const marker = 'chunked tools marker';
      const body = JSON.stringify({
        model: 'test/mini',
        max_tokens: 1,
        messages: [{ role: 'user', content: marker }],
        tools: [{ type: 'function', function: { name: 'lookup', description: 'x'.repeat(60_000), parameters: { type: 'object', properties: {} } } }],
      });
      const chunked = (payload: string) => {
        // A stream body: fetch sends it chunked, with no content-length.
        const stream = new ReadableStream<Uint8Array>({
          start(controller) {
            controller.enqueue(new TextEncoder().encode(payload));
            controller.close();
          },
        });
        return fetch(`${app.gateway}/v1/chat/completions`, {
          method: 'POST',
          headers: { ...bearer(key), 'content-type': 'application/json' },
          body: stream,
          duplex: 'half',
        } as RequestInit);
      };
      const refused = await chunked(body);
      expectErrorBody({ status: refused.status, headers: refused.headers, body: await refused.json() }, 403, '/v1/chat/completions', new RegExp(escape(ErrorMessages.creditsExhausted)));
      expect(emulator.requests.filter((request) => JSON.stringify(request.body ?? {}).includes(marker))).toEqual([]);
      // Without the schema the same chunked request fits and is served.
      const small = await chunked(JSON.stringify({ model: 'test/mini', max_tokens: 1, messages: [{ role: 'user', content: marker }] }));
      expect(small.status).toBe(200);
    });
  });

  describe("billing's balance route and made-up keys", () => {
    it('answers hundreds of made-up keys from one address with 401 or 429, looking only a budget of them up, and serves a real key from another address', async () => {
      const { key } = await app.paidKey(1_000);
      const statuses: number[] = [];
      let retryAfter: string | null = null;
      for (let index = 0; index < 300; index++) {
        const answer = await call(`${app.billing}/v1/billing/balance`, { token: unknownKey(), headers: { 'x-forwarded-for': '203.0.113.7' } });
        statuses.push(answer.status);
        if (answer.status === 429) retryAfter ??= answer.headers.get('retry-after');
      }
      expect(statuses.filter((status) => status !== 401 && status !== 429)).toEqual([]);
      // Each 401 was a look-up: the burst, plus what the budget earned back during the run (6 a minute).
      expect(statuses.filter((status) => status === 401).length).toBeLessThanOrEqual(10 + 6);
      expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
      const served = await call<{ balance: number }>(`${app.billing}/v1/billing/balance`, { token: key, headers: { 'x-forwarded-for': '198.51.100.9' } });
      expect(served.status).toBe(200);
      expect(served.body.balance).toBe(1_000);
    });
  });

  describe('the admin token and guesses', () => {
    it("refuses an address's Bearer tokens with 429 after ten wrong ones (the right one too), while the right token works from another address", async () => {
      const guesser = { 'x-forwarded-for': '203.0.113.50' };
      for (let guess = 0; guess < 10; guess++) {
        expectErrorBody(await call(`${app.billing}/admin/v1/accounts`, { token: `wrong-admin-token-${guess}`, headers: guesser }), 401, '/admin/v1/accounts', /a valid admin token is required/);
      }
      for (const token of ['wrong-admin-token-10', app.adminToken]) {
        const refused = await call(`${app.billing}/admin/v1/accounts`, { token, headers: guesser });
        expectErrorBody(refused, 429, '/admin/v1/accounts', /^Too Many Requests: too many wrong admin tokens from this address\. Retry in \d+ s\.$/);
        expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(800);
      }
      // The sign-in form is the same door: it counts the same guesses.
      const signIn = await call(`${app.billing}/console/api/login`, { body: { token: app.adminToken }, headers: { ...guesser, 'x-igw-console': '1' } });
      expect(signIn.status).toBe(429);
      const served = await call(`${app.billing}/admin/v1/accounts`, { token: app.adminToken, headers: { 'x-forwarded-for': '198.51.100.20' } });
      expect(served.status).toBe(200);
    });
  });
});

function escape(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
