import path from 'node:path';
import { AzureOpenAI, OpenAI } from 'openai';
import { countTokens } from '@igw/tokenizer';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { embeddingVector } from '../tools/emulator/src/openai/embeddings';
import { call, expectErrorBody } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

type Meta = { meta?: { usage?: { credits_used: number; usd_spent: number } } };
type Embeddings = OpenAI.CreateEmbeddingResponse & Meta;
/** Credits of input tokens at $20 per million tokens and 2,000,000 credits per USD (output, priced in the fixture, is never charged). */
const creditsFor = (tokens: number) => tokens * 40;
/** The emulator's vector for a text, as the JSON numbers it sends. */
const expectedVector = (text: string, dimensions: number) => Array.from(embeddingVector(text, dimensions));
const words = (text: string) => text.split(/\s+/).filter((word) => word !== '').length;

/**
 * POST /v1/embeddings through the official `openai` package (both clients), against the
 * standalone gateway with every upstream played by the emulator.
 */
describe('embeddings, end to end with the official OpenAI SDK', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let client: OpenAI;
  let key: string;
  let accountId: string;
  /** Every successful response of `key`'s account, by request id. */
  const answered = new Map<string, Embeddings>();

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/embeddings-catalogue.yaml'),
      UPSTREAM_TIMEOUT_MS: '2000',
      ...emulatedProviders(emulator.url),
    });
    ({ key, accountId } = await harness.paidKey(1_000_000));
    client = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: key, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  /** Creates embeddings with the SDK and keeps the answer for the ledger check. */
  async function embed(params: OpenAI.EmbeddingCreateParams, sdk: OpenAI = client): Promise<Embeddings> {
    const { data, response } = await sdk.embeddings.create(params).withResponse();
    const requestId = response.headers.get('x-request-id')!;
    expect(requestId).toBeTruthy();
    answered.set(requestId, data as Embeddings);
    return data as Embeddings;
  }

  const url = () => `${harness.gateway}/v1/embeddings`;

  /** A raw POST /v1/embeddings; a 200 is kept for the ledger check. */
  async function post<T = Record<string, unknown>>(body: Record<string, unknown>) {
    const response = await call<T>(url(), { token: key, body });
    if (response.status === 200) answered.set(response.headers.get('x-request-id')!, response.body as Embeddings);
    return response;
  }

  it('answers floats in the spec shape, priced from the catalogue by input tokens', async () => {
    const text = 'The food was delicious and the waiter friendly';
    const result = await embed({ model: 'small', input: text, encoding_format: 'float' });
    expect(result.object).toBe('list');
    expect(result.model).toBe('test/small');
    expect(result.data).toHaveLength(1);
    expect(result.data[0]).toEqual({ object: 'embedding', index: 0, embedding: expectedVector(text, 1536) });
    expect(result.usage).toEqual({ prompt_tokens: words(text), total_tokens: words(text) });
    expect(result.meta!.usage!.credits_used).toBe(creditsFor(words(text)));
    expect(result.meta!.usage!.usd_spent).toBe((words(text) * 20) / 1e6);
    // The gateway asks the upstream for floats and forwards no field of its own.
    expect(emulator.requests.at(-1)!.body).toEqual({ model: 'text-embedding-3-small', input: [text] });
  });

  it("answers base64 (the SDK's default), which the SDK decodes to the very same floats", async () => {
    const text = 'same text both ways';
    const floats = await embed({ model: 'test/small', input: text, encoding_format: 'float' });
    const raw = await post<{ data: Array<{ embedding: string }> }>({ model: 'small', input: text, encoding_format: 'base64' });
    expect(raw.status).toBe(200);
    const bytes = Buffer.from(raw.body.data[0].embedding, 'base64');
    expect(bytes.length).toBe(1536 * 4);
    expect(bytes.readFloatLE(0)).toBe(floats.data[0].embedding[0]);
    const decoded = await embed({ model: 'test/small', input: text });
    expect(decoded.data[0].embedding).toEqual(floats.data[0].embedding);
  });

  it('takes arrays of texts and token arrays, one vector each in input order', async () => {
    const texts = ['first text', 'the second one', 'three'];
    const result = await embed({ model: 'large', input: texts });
    expect(result.data.map((item) => item.index)).toEqual([0, 1, 2]);
    result.data.forEach((item, index) => expect(item.embedding).toEqual(expectedVector(texts[index], 3072)));
    expect(result.usage.prompt_tokens).toBe(6);

    const tokens = await embed({ model: 'small', input: [[1, 2, 3], [4]] });
    expect(tokens.data).toHaveLength(2);
    expect(tokens.usage.prompt_tokens).toBe(4);
    const single = await embed({ model: 'small', input: [5, 6] });
    expect(single.data).toHaveLength(1);
    expect(emulator.requests.at(-1)!.body).toMatchObject({ input: [[5, 6]] });
  });

  it('shortens the vectors with dimensions, up to the model length', async () => {
    const result = await embed({ model: 'large', input: 'short please', dimensions: 256 });
    expect(result.data[0].embedding).toEqual(expectedVector('short please', 256));
    expect((await embed({ model: 'small', input: 'x', dimensions: 1536 })).data[0].embedding).toHaveLength(1536);
    expectErrorBody(
      await call(url(), { token: key, body: { model: 'small', input: 'x', dimensions: 1537 } }),
      400,
      '/v1/embeddings',
      /^Body validation error! dimensions: Expected an integer from 1 to 1536 for test\/small \(its vector length\)\. Received 1537$/,
    );
  });

  it.each([
    [{ model: undefined }, /^Body validation error! model: Expected a non-empty string\. Received nothing$/],
    [{ input: undefined }, /^Body validation error! input: Expected .* Received nothing$/],
    [{ input: '' }, /^Body validation error! input: Expected .* Received ''$/],
    [{ input: [] }, /^Body validation error! input: Expected .* Received an empty array$/],
    [{ input: ['ok', 7] }, /^Body validation error! input\[1\]: Expected a non-empty string.* Received number 7$/],
    [{ input: [[1], [-1]] }, /^Body validation error! input\[1\]\[0\]: Expected a token id.* Received number -1$/],
    [{ dimensions: 0 }, /^Body validation error! dimensions: Expected an integer of at least 1\. Received 0$/],
    [{ dimensions: 2.5 }, /^Body validation error! dimensions: Expected an integer\. Received 2\.5$/],
    [{ encoding_format: 'int8' }, /^Body validation error! encoding_format: Expected one of 'float', 'base64'\. Received 'int8'$/],
    [{ user: 42 }, /^Body validation error! user: Expected a string\. Received number 42$/],
    [{ input: 'word '.repeat(60) }, /^Body validation error! input: Expected at most 50 tokens per input \(the context of test\/small\)\. Received about 6\d tokens$/],
  ])('refuses %j with a 400 naming the field, before any upstream call', async (change, message) => {
    const before = emulator.requests.length;
    expectErrorBody(await call(url(), { token: key, body: { model: 'small', input: 'x', ...change } }), 400, '/v1/embeddings', message);
    expect(emulator.requests.length).toBe(before);
  });

  it('answers 404 for an unknown model and 400 for a model that is not an embeddings model', async () => {
    expectErrorBody(await call(url(), { token: key, body: { model: 'nope', input: 'x' } }), 404, '/v1/embeddings');
    expectErrorBody(await call(url(), { token: key, body: { model: 'chatty', input: 'x' } }), 400, '/v1/embeddings', /^Body validation error! model: 'test\/chat' is an openai\/chat-completions model, not an embeddings model\.$/);
    await expect(client.embeddings.create({ model: 'nope', input: 'x' })).rejects.toMatchObject({ status: 404 });
  });

  it('needs a valid API key', async () => {
    expectErrorBody(await call(url(), { body: { model: 'small', input: 'x' } }), 401, '/v1/embeddings');
    expectErrorBody(await call(url(), { token: 'igw_wrong', body: { model: 'small', input: 'x' } }), 401, '/v1/embeddings');
  });

  it('falls back to the next source when the first answers 500', async () => {
    const before = emulator.requests.length;
    const result = await embed({ model: 'test/embed-fallback', input: 'fall back' });
    expect(result.data[0].embedding).toEqual(expectedVector('fall back', 1536).map((value) => Math.fround(value)));
    const upstream = emulator.requests.slice(before).map((request) => (request.body as { model: string }).model);
    expect(upstream).toEqual(['broken@status=500', 'text-embedding-3-small']);
  });

  it('runs exactly the pinned source, with no fallback', async () => {
    const pinned = (provider: string) => post({ model: 'test/embed-fallback', input: 'x', provider });
    expectErrorBody(await pinned('groq'), 502, '/v1/embeddings', /Bad Gateway/);
    expect((await pinned('TOGETHER')).status).toBe(200);
    expectErrorBody(await pinned('openai'), 400, '/v1/embeddings', /^Body validation error! provider: Expected one of 'auto', 'fallback', 'groq', 'together'\. Received 'openai'/);
  });

  it('maps upstream failures like chat, and refuses a model routed only to a provider without embeddings', async () => {
    const limited = await call(url(), { token: key, body: { model: 'test/embed-rate-limited', input: 'x' } });
    expectErrorBody(limited, 429, '/v1/embeddings', /^Too Many Requests$/);
    expect(limited.headers.get('retry-after')).toBe('1');
    const before = emulator.requests.length;
    expectErrorBody(await call(url(), { token: key, body: { model: 'test/embed-anthropic', input: 'x' } }), 503, '/v1/embeddings', /anthropic has no embeddings API/);
    expect(emulator.requests.length).toBe(before);
  });

  it('embeds through a Gemini-format source, counting the tokens itself', async () => {
    const texts = ['Gemini reports no token counts', 'so the gateway counts them'];
    const result = await embed({ model: 'test/embed-gemini', input: texts, dimensions: 128 });
    expect(result.model).toBe('test/embed-gemini');
    result.data.forEach((item, index) => expect(item.embedding).toEqual(expectedVector(texts[index], 128).map((value) => Math.fround(value))));
    const tokens = countTokens(texts[0]) + countTokens(texts[1]);
    expect(result.usage).toEqual({ prompt_tokens: tokens, total_tokens: tokens });
    expect(result.meta!.usage!.credits_used).toBe(creditsFor(tokens));
    const upstream = emulator.requests.at(-1)!;
    expect(upstream.path).toBe('/v1beta/models/gemini-embedding-large:batchEmbedContents');
    expect(upstream.headers['x-goog-api-key']).toBe('gemini-key');
    expect(upstream.body).toEqual({
      requests: texts.map((text) => ({ model: 'models/gemini-embedding-large', content: { parts: [{ text }] }, outputDimensionality: 128 })),
    });
  });

  it('routes to an Azure deployment, and works with the AzureOpenAI client on the Azure-style path', async () => {
    const viaAzure = await embed({ model: 'test/embed-azure', input: 'hello azure' });
    expect(viaAzure.data[0].embedding).toHaveLength(3072);
    const upstream = emulator.requests.at(-1)!;
    expect(upstream.path).toMatch(/^\/openai\/deployments\/my-large-embedder\/embeddings\?api-version=/);
    expect(upstream.headers['api-key']).toBe('azure-key');

    for (const deployment of ['small', 'test/small']) {
      const azure = new AzureOpenAI({ endpoint: harness.gateway, apiKey: key, apiVersion: '2024-10-21', deployment, maxRetries: 0 });
      const { data, response } = await azure.embeddings.create({ model: 'ignored-by-the-gateway', input: 'hello azure' }).withResponse();
      answered.set(response.headers.get('x-request-id')!, data as Embeddings);
      expect(data.model).toBe('test/small');
      expect(data.data[0].embedding).toEqual(expectedVector('hello azure', 1536).map((value) => Math.fround(value)));
    }
    expectErrorBody(
      await call(`${harness.gateway}/openai/deployments/small/embeddings`, { headers: { 'api-key': key }, body: { input: 'x' } }),
      400,
      '/openai/deployments/small/embeddings',
      /api-version/,
    );
  });

  it('is described in the Swagger document with its request and response', async () => {
    type Schema = { properties: Record<string, { description?: string }>; required?: string[] };
    const doc = await call<{ paths: Record<string, unknown>; components: { schemas: Record<string, Schema> } }>(`${harness.gateway}/docs-json`);
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(['/v1/embeddings', '/openai/deployments/{deployment}/embeddings']));
    const { EmbeddingRequestDto: request, EmbeddingListDto: list } = doc.body.components.schemas;
    expect(request.required).toEqual(expect.arrayContaining(['model', 'input']));
    for (const field of ['input', 'dimensions', 'encoding_format']) expect(request.properties[field].description).toBeTruthy();
    expect(Object.keys(list.properties)).toEqual(expect.arrayContaining(['object', 'data', 'model', 'usage', 'meta']));
  });

  it("writes one ledger row per request, equal to the response's meta.usage, charging input tokens only", async () => {
    const ledger = () => harness.usageEntries(accountId, 200);
    await eventually(async () => (await ledger()).length >= answered.size, 10_000);
    const rows = await ledger();
    expect(rows).toHaveLength(answered.size);
    let charged = 0;
    for (const row of rows) {
      const response = answered.get(row.requestId!);
      expect(response).toBeDefined();
      expect(row.endpoint).toBe('embeddings');
      expect(row.model).toBe(response!.model);
      expect(row.units).toEqual({ input_tokens: response!.usage.prompt_tokens });
      expect(row.credits).toBe(String(response!.meta!.usage!.credits_used));
      expect(Number(row.usd)).toBe(response!.meta!.usage!.usd_spent);
      expect(row.credits).toBe(String(creditsFor(response!.usage.prompt_tokens)));
      expect(row.prices).toEqual(expect.arrayContaining([{ unit: 'output_tokens', price: 100, per: 1_000_000 }]));
      charged += response!.meta!.usage!.credits_used;
    }
    await eventually(async () => Math.abs((await harness.balance(key)) - (1_000_000 - charged)) < 1e-6, 10_000);
  });
});
