import path from 'node:path';
import { OpenAI } from 'openai';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/** 2024-07-18T00:00:00Z, the release date of `acme/chat-mini` in the fixture. */
const CHAT_MINI_CREATED = 1721260800;

type Entry = OpenAI.Model & { aliases: string[]; type: string; info: Record<string, unknown>; tags: string[]; apis: string[]; pricing?: unknown };

const CHAT_APIS = ['chat.completions', 'responses', 'messages', 'generateContent'];

/**
 * The catalogue as the official `openai` package reads it (`models.list()`, `models.retrieve(id)`):
 * OpenAI's `object`, `created` and `owned_by` on every entry, `/v1/models/{id}` unwrapped, and
 * its 404 read into `NotFoundError`. The other clients are in clients.e2e-spec.ts.
 */
describe("the catalogue in OpenAI's shape, through the official openai package", () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let baseURL: string;
  let client: OpenAI;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/clients-catalogue.yaml'), ...emulatedProviders(emulator.url) });
    baseURL = `${harness.gateway}/v1`;
    // The catalogue needs no key; the SDK insists on one.
    client = new OpenAI({ baseURL, apiKey: 'no-key-needed', maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  it("lists every entry with OpenAI's object, created and owned_by beside the spec's fields", async () => {
    const entries: Entry[] = [];
    for await (const model of client.models.list()) entries.push(model as Entry);
    expect(entries.map((entry) => entry.id)).toEqual(['acme/chat-mini', 'acme/embed-small', 'anthropic/claude-test', 'google/gemini-test', 'plain']);
    for (const entry of entries) {
      expect(Object.keys(entry)).toEqual(['id', 'object', 'created', 'owned_by', 'aliases', 'type', 'info', 'tags', 'apis']);
      expect(entry.object).toBe('model');
      expect(Number.isInteger(entry.created)).toBe(true);
    }
    expect(entries.map((entry) => [entry.id, entry.created, entry.owned_by])).toEqual([
      ['acme/chat-mini', CHAT_MINI_CREATED, 'acme'],
      ['acme/embed-small', Date.UTC(2024, 0, 25) / 1000, 'acme'],
      ['anthropic/claude-test', Date.UTC(2025, 4, 22) / 1000, 'anthropic'],
      ['google/gemini-test', Date.UTC(2025, 5, 17) / 1000, 'google'],
      ['plain', 0, 'Plain Co'],
    ]);
  });

  it('says which APIs each model can be called through, and a chat model answers each of them', async () => {
    const entries: Entry[] = [];
    for await (const model of client.models.list()) entries.push(model as Entry);
    expect(entries.map((entry) => [entry.id, entry.apis])).toEqual([
      ['acme/chat-mini', CHAT_APIS],
      ['acme/embed-small', ['embeddings', 'embedContent']],
      ['anthropic/claude-test', CHAT_APIS],
      ['google/gemini-test', CHAT_APIS],
      ['plain', CHAT_APIS],
    ]);
    // What the list promises is served: a chat model through the Responses and Messages fronts, the embedding model through neither.
    const { key } = await harness.paidKey(1_000_000);
    const responses = await call<{ object: string }>(`${baseURL}/responses`, { method: 'POST', token: key, body: { model: 'claude', input: 'Say hi', max_output_tokens: 16 } });
    const messages = await call<{ type: string }>(`${baseURL}/messages`, { method: 'POST', token: key, body: { model: 'gemini', max_tokens: 16, messages: [{ role: 'user', content: 'Say hi' }] } });
    expect([responses.status, responses.body.object, messages.status, messages.body.type]).toEqual([200, 'response', 200, 'message']);
    const refused = await call(`${baseURL}/responses`, { method: 'POST', token: key, body: { model: 'embed', input: 'Say hi' } });
    expect(refused.status).toBe(400);

    const document = (await call<{ components: { schemas: Record<string, { properties: Record<string, unknown>; required?: string[] }> } }>(`${harness.gateway}/docs-json`)).body;
    expect(document.components.schemas.ModelEntryDto.required).toEqual(expect.arrayContaining(['id', 'object', 'created', 'owned_by', 'aliases', 'type', 'info', 'tags', 'apis']));
  });

  it.each([
    ['a canonical id with a slash', 'acme/chat-mini'],
    ['the canonical id in another case', 'ACME/Chat-Mini'],
    ['an alias', 'mini'],
    ['an alias stored mixed-case, asked lower-case', 'chat-latest'],
  ])('retrieves one model by %s, unwrapped as OpenAI answers it', async (_name, id) => {
    const model = (await client.models.retrieve(id)) as Entry;
    expect(model).toEqual({
      id: 'acme/chat-mini',
      object: 'model',
      created: CHAT_MINI_CREATED,
      owned_by: 'acme',
      aliases: ['mini', 'Chat-Latest'],
      type: 'openai/chat-completions',
      info: { name: 'Chat mini', developer: 'Acme Labs', description: 'OpenAI format', releasedAt: '2024-07-18', contextLength: 8000, outputMax: 1000 },
      tags: ['playground:chat'],
      apis: CHAT_APIS,
    });
  });

  it('serves /v1/models/{id} without a key, with include, the /models alias, its ETag, and the spec route unchanged', async () => {
    const withPricing = await call<Entry>(`${baseURL}/models/gemini?include=pricing`);
    expect(withPricing.status).toBe(200);
    expect(Object.keys(withPricing.body)).toEqual(['id', 'object', 'created', 'owned_by', 'aliases', 'type', 'info', 'tags', 'apis', 'pricing']);
    expect(withPricing.body).toMatchObject({ id: 'google/gemini-test', object: 'model', owned_by: 'google' });

    const unversioned = await call<Entry>(`${harness.gateway}/models/anthropic/claude-test`);
    expect(unversioned.body).toMatchObject({ id: 'anthropic/claude-test', object: 'model', owned_by: 'anthropic' });

    const etag = withPricing.headers.get('etag');
    expect(etag).toBeTruthy();
    const notModified = await fetch(`${baseURL}/models/acme/chat-mini`, { headers: { 'if-none-match': etag! } });
    expect([notModified.status, await notModified.text()]).toEqual([304, '']);

    const spec = await call<{ object: string; data: Entry }>(`${harness.gateway}/model/mini`);
    expect(spec.body).toEqual({ object: 'model', data: (await call<Entry>(`${baseURL}/models/mini`)).body });
  });

  it("answers an unknown model with a 404 the SDK reads (code, type, param) and the spec's error body", async () => {
    const error = await client.models.retrieve('acme/nope').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(OpenAI.NotFoundError);
    const notFound = error as InstanceType<typeof OpenAI.NotFoundError>;
    expect([notFound.status, notFound.code, notFound.type, notFound.param]).toEqual([404, 'model_not_found', 'not_found_error', null]);
    expect(notFound.message).toContain("Not Found: no model named 'acme/nope' in the catalogue.");

    expectErrorBody(await call(`${baseURL}/models/acme/nope`), 404, '/v1/models/acme/nope', /^Not Found: no model named 'acme\/nope' in the catalogue\.$/);
    expectErrorBody(await call(`${baseURL}/models/acme/chat-mini/extra`), 404, '/v1/models/acme/chat-mini/extra');
  });
});
