import path from 'node:path';
import { OpenAI } from 'openai';
import { ErrorMessages } from '@igw/contracts';
import { MAX_JSON_DEPTH } from '@igw/json';
import { PIPE_CHECKED_MEMBERS, PIPE_CHECKED_VALUES } from '@igw/validation';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody, type JsonResponse } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

const TOO_DEEP = `Body validation error! JSON body nested too deeply: at most ${MAX_JSON_DEPTH} levels of objects and arrays are accepted.`;
/** A JSON type body-parser accepts and the chat direct route leaves to Express (see chat-direct-route.e2e-spec.ts). */
const THROUGH_EXPRESS = 'application/vnd.igw+json';

/** A JSON schema whose properties nest `levels` deep (two JSON levels each). */
function nestedSchema(levels: number): string {
  return `${'{"type":"object","properties":{"x":'.repeat(levels)}{"type":"string"}${'}}'.repeat(levels)}`;
}

function chatWithToolSchema(schema: string, extra = ''): string {
  return `{"model":"mini","messages":[{"role":"user","content":"hi"}],"tools":[{"type":"function","function":{"name":"f","parameters":${schema}}}]${extra}}`;
}

/**
 * Bad input of every kind gets a 4xx with the spec's body, on every service and both chat
 * routes: bodies nested tens of thousands of levels deep (which used to overflow the stack of
 * class-transformer and answer 500), and every error as the official SDK reads it.
 */
describe('input hardening, end to end', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let catalogue: string;
  let key: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/chat-catalogue.yaml'),
      ...emulatedProviders(emulator.url),
    });
    catalogue = harness.catalogue;
    key = (await harness.paidKey(1_000_000)).key;
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  describe('a JSON body nested 50,000 levels deep', () => {
    const deepSchema = nestedSchema(25_000);
    const deepArrays = `${'['.repeat(50_000)}1${']'.repeat(50_000)}`;

    it.each([
      ['chat, direct route', '/v1/chat/completions', 'application/json', () => chatWithToolSchema(deepSchema)],
      ['chat, through Express', '/v1/chat/completions', THROUGH_EXPRESS, () => chatWithToolSchema(deepSchema)],
      ['Azure-style chat', '/openai/deployments/mini/chat/completions?api-version=2024-10-21', 'application/json', () => chatWithToolSchema(deepSchema)],
      ['embeddings', '/v1/embeddings', 'application/json', () => `{"model":"embed","input":${deepArrays}}`],
    ])('is refused with a 400 that states the limit: %s', async (_route, url, contentType, body) => {
      const before = emulator.requests.length;
      const response = await call(`${harness.gateway}${url}`, { token: key, rawBody: body(), headers: { 'content-type': contentType } });
      expectErrorBody(response, 400, url.split('?')[0], /^Body validation error! /);
      expect(response.body.message).toBe(TOO_DEEP);
      expect(emulator.requests.length).toBe(before);
    });

    it('is refused by the billing and catalogue admin APIs too', async () => {
      const deepName = `{"name":"acme","extra":${deepArrays}}`;
      const billing = await call(`${harness.billing}/admin/v1/accounts`, { token: harness.adminToken, rawBody: deepName });
      expectErrorBody(billing, 400, '/admin/v1/accounts');
      expect(billing.body.message).toBe(TOO_DEEP);
      const amend = await call(`${catalogue}/admin/v1/catalogue/models/test/mini`, { method: 'PATCH', token: harness.adminToken, rawBody: `{"pricing":${deepSchema}}` });
      expectErrorBody(amend, 400, '/admin/v1/catalogue/models/test/mini');
      expect(amend.body.message).toBe(TOO_DEEP);
    });

    it('leaves a deep but reasonable tool schema alone, normalized or not, on both routes', async () => {
      // 60 nested properties: 125 levels with the request around it, just under the limit.
      const schema = nestedSchema(60);
      for (const contentType of ['application/json', THROUGH_EXPRESS]) {
        for (const extra of ['', ',"normalize_tool_schemas":true']) {
          const response = await call(`${harness.gateway}/v1/chat/completions`, { token: key, rawBody: chatWithToolSchema(schema, extra), headers: { 'content-type': contentType } });
          expect(response.status).toBe(200);
        }
      }
    });
  });

  describe('a body of hundreds of thousands of items (the validation pipe takes ~30 µs an item, in one turn of the event loop)', () => {
    const emptyMessages = JSON.stringify({ model: 'mini', messages: Array.from({ length: 200_000 }, () => ({})) });

    it.each([
      ['chat, direct route', 'application/json'],
      ['chat, through Express', THROUGH_EXPRESS],
    ])('200,000 empty messages: the first issues, by their paths, in a short answer: %s', async (_route, contentType) => {
      const before = emulator.requests.length;
      const response = await call<{ message: string }>(`${harness.gateway}/v1/chat/completions`, { token: key, rawBody: emptyMessages, headers: { 'content-type': contentType } });
      expectErrorBody(response, 400, '/v1/chat/completions', /^Body validation error! messages\[0\]\.role: Expected one of /);
      expect(response.body.message).toMatch(/; messages\[1\]\.role: .*; and more$/);
      expect(response.body.message.length).toBeLessThan(5_000);
      expect(emulator.requests.length).toBe(before);
    });

    const tooManyValues = `Body validation error! Expected at most ${PIPE_CHECKED_VALUES} objects, arrays and object members in the body. Received more`;
    const junk = Array.from({ length: PIPE_CHECKED_VALUES }, () => ({}));

    it('more objects and arrays than the pipe checks, in a field nobody reads: refused before they are copied', async () => {
      const embeddings = await call(`${harness.gateway}/v1/embeddings`, { token: key, body: { model: 'embed', input: 'hi', junk } });
      expectErrorBody(embeddings, 400, '/v1/embeddings');
      expect(embeddings.body.message).toBe(tooManyValues);
      const admin = await call(`${harness.billing}/admin/v1/accounts`, { token: harness.adminToken, body: { name: 'acme', junk } });
      expectErrorBody(admin, 400, '/admin/v1/accounts');
      expect(admin.body.message).toBe(tooManyValues);
    });

    it('an object of more members than the pipe checks (a logit_bias of 40,000 entries in a body the pipe words): refused before it is copied', async () => {
      const bias = Object.fromEntries(Array.from({ length: 40_000 }, (_, index) => [String(index), 1]));
      const response = await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { model: 'mini', temperature: 9, messages: [{ role: 'user', content: 'hi' }], logit_bias: bias } });
      expectErrorBody(response, 400, '/v1/chat/completions');
      expect(response.body.message).toBe(`Body validation error! Expected at most ${PIPE_CHECKED_MEMBERS} members in an object. Received one of 40000`);
    });
  });

  it('refuses a top-up that would take the balance past what its column holds, and keeps the ledger whole', async () => {
    const { accountId, key: accountKey } = await harness.paidKey(1000);
    const topUp = () => call<{ balance: number; message: string }>(`${harness.billing}/admin/v1/accounts/${accountId}/credits`, { token: harness.adminToken, body: { credits: 1e12 } });
    for (let index = 0; index < 9; index++) expect((await topUp()).status).toBe(200);
    const refused = await topUp();
    expectErrorBody(refused, 400, `/admin/v1/accounts/${accountId}/credits`);
    expect(refused.body.message).toBe('Body validation error! credits: Expected an amount that keeps the balance within ±9223372036854.775807 credits. Received 1000000000000');
    expect(await harness.balance(accountKey)).toBe(9e12 + 1000);
    const ledger = await call<{ data: Array<{ credits: string }> }>(`${harness.billing}/admin/v1/accounts/${accountId}/usage?kind=credit&limit=100`, { token: harness.adminToken });
    expect(ledger.body.data.map((entry) => BigInt(entry.credits)).reduce((sum, credits) => sum + credits, 0n)).toBe(9_000_000_001_000n);
  });

  describe('errors as the official SDK reads them', () => {
    const ask = { model: 'mini', messages: [{ role: 'user' as const, content: 'hello' }] };
    const clientFor = (apiKey: string) => new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey, maxRetries: 0 });

    async function failure(request: Promise<unknown>): Promise<InstanceType<typeof OpenAI.APIError>> {
      const error = await request.then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(OpenAI.APIError);
      return error as InstanceType<typeof OpenAI.APIError>;
    }

    /** The SDK's message is `<status> <our message>`; its type, code and param are ours too. */
    function expectGatewayError(error: InstanceType<typeof OpenAI.APIError>, expected: { status: number; message: string | RegExp; type: string; code: string | null; param?: string | null }): void {
      expect(error.status).toBe(expected.status);
      const message = (error.error as { message: string }).message;
      if (typeof expected.message === 'string') expect(message).toBe(expected.message);
      else expect(message).toMatch(expected.message);
      expect(error.message).toBe(`${expected.status} ${message}`);
      expect(error.type).toBe(expected.type);
      expect(error.code).toBe(expected.code);
      expect(error.param).toBe(expected.param ?? null);
      expect(error.requestID).toMatch(/^[0-9a-f-]{36}$/);
    }

    it('400: a validation error names the field', async () => {
      const error = await failure(clientFor(key).chat.completions.create({ ...ask, max_tokens: 40.5 }));
      expect(error).toBeInstanceOf(OpenAI.BadRequestError);
      expectGatewayError(error, { status: 400, message: 'Body validation error! max_tokens: Expected an integer. Received 40.5', type: 'invalid_request_error', code: null, param: 'max_tokens' });
      const nested = await failure(clientFor(key).chat.completions.create({ ...ask, messages: [{ role: 'robot' as 'user', content: 'x' }] }));
      expect(nested.param).toBe('messages[0].role');
      const embedding = await failure(clientFor(key).embeddings.create({ model: 'embed', input: 'x', dimensions: 1e300 }));
      expectGatewayError(embedding, { status: 400, message: 'Body validation error! dimensions: Expected an integer of at most 9007199254740991. Received 1e+300', type: 'invalid_request_error', code: null, param: 'dimensions' });
    });

    it('401: an unknown API key', async () => {
      const error = await failure(clientFor('sk-not-a-key').chat.completions.create(ask));
      expect(error).toBeInstanceOf(OpenAI.AuthenticationError);
      expectGatewayError(error, { status: 401, message: ErrorMessages.invalidApiKey, type: 'authentication_error', code: 'invalid_api_key' });
    });

    it('403: an account without credits', async () => {
      const broke = await harness.paidKey(0);
      const error = await failure(clientFor(broke.key).chat.completions.create(ask));
      expect(error).toBeInstanceOf(OpenAI.PermissionDeniedError);
      expectGatewayError(error, { status: 403, message: ErrorMessages.creditsExhausted, type: 'permission_error', code: 'insufficient_quota' });
    });

    it('404: an unknown model', async () => {
      const error = await failure(clientFor(key).chat.completions.create({ ...ask, model: 'acme/nothing' }));
      expect(error).toBeInstanceOf(OpenAI.NotFoundError);
      expectGatewayError(error, { status: 404, message: "Not Found: no model named 'acme/nothing' in the catalogue. GET /v1/models lists the model ids and aliases a request can use.", type: 'not_found_error', code: 'model_not_found' });
    });

    it('429: a key over its requests per minute', async () => {
      const limited = await harness.paidKey(1_000_000);
      const patched = await call(`${harness.billing}/admin/v1/accounts/${limited.accountId}`, { method: 'PATCH', token: harness.adminToken, body: { requestsPerMinute: 1 } });
      expect(patched.status).toBe(200);
      const client = clientFor(limited.key);
      await client.chat.completions.create(ask);
      const error = await failure(client.chat.completions.create(ask));
      expect(error).toBeInstanceOf(OpenAI.RateLimitError);
      expectGatewayError(error, { status: 429, message: ErrorMessages.tooManyRequests, type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    });

    it('5xx: an upstream that fails', async () => {
      const error = await failure(clientFor(key).chat.completions.create({ ...ask, model: 'test/broken' }));
      expect(error).toBeInstanceOf(OpenAI.InternalServerError);
      expectGatewayError(error, { status: 502, message: /^Bad Gateway: the upstream provider groq failed \(500\)\.$/, type: 'api_error', code: null });
    });

    it("is documented in every service's OpenAPI document", async () => {
      // In standalone the catalogue's document is served on billing's port, under /catalogue.
      for (const documentUrl of [`${harness.gateway}/docs-json`, `${harness.billing}/docs-json`, `${catalogue}/catalogue/docs-json`]) {
        const document = await call<{ components: { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }> } }>(documentUrl);
        const { schemas } = document.body.components;
        expect(JSON.stringify(schemas.ErrorBodyDto.properties.error)).toContain('"$ref":"#/components/schemas/ErrorDetailDto"');
        expect(schemas.ErrorBodyDto.required).toContain('error');
        expect(schemas.ErrorDetailDto.required?.sort()).toEqual(['code', 'message', 'param', 'type']);
      }
    });

    it('carries the same error object in bodies the SDK never sees (admin API)', async () => {
      const { accountId } = await harness.paidKey(1);
      const response: JsonResponse = await call(`${harness.billing}/admin/v1/accounts/${accountId}/credits`, { token: harness.adminToken, body: { credits: 1e300 } });
      expectErrorBody(response, 400, `/admin/v1/accounts/${accountId}/credits`);
      expect(response.body).toMatchObject({
        message: 'Body validation error! credits: Expected a number from -1000000000000 to 1000000000000. Received 1e+300',
        error: { type: 'invalid_request_error', code: null, param: 'credits' },
      });
    });
  });
});
