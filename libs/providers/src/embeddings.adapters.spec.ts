import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { ProviderTarget, UpstreamEmbeddingRequest } from './provider.types';
import { findProvider, providerKind } from './registry';
import { GEMINI_MAX_BATCH } from './google/gemini.embeddings';
import { RequestTranslationError, UpstreamHttpError, UpstreamProtocolError } from './upstream.errors';

// Every provider's embeddings adapter against its golden exchange (`<kind>/__fixtures__/embeddings*.json`):
// what the gateway hands the adapter, the exact HTTP request it must send, the upstream's answer,
// and the normalised result it must return.

interface Fixture {
  description: string;
  target: ProviderTarget;
  request: UpstreamEmbeddingRequest;
  wire: { method: string; path: string; headers: Record<string, string>; body: unknown };
  upstream: unknown;
  result: unknown;
}

interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: unknown;
}

const OPTIONS = { timeoutMs: 5_000 };
let server: Server;
let base: string;
let received: Received[] = [];
/** What the fake upstream answers: status and JSON body, from the request's body. */
let answer: (body: unknown) => { status: number; body: unknown; headers?: Record<string, string> } = () => ({ status: 500, body: {} });

beforeAll(async () => {
  server = createServer((req, res) => {
    let text = '';
    req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
    req.on('end', () => {
      const body: unknown = text ? JSON.parse(text) : undefined;
      received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body });
      const reply = answer(body);
      res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
      res.end(JSON.stringify(reply.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  received = [];
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function load(file: string): Fixture {
  return JSON.parse(readFileSync(path.join(__dirname, file), 'utf8')) as Fixture;
}

function adapterOf(provider: string) {
  const adapter = providerKind(findProvider(provider)!.kind).embeddings;
  if (!adapter) throw new Error(`${provider} has no embeddings adapter`);
  return adapter;
}

describe.each([
  'openai/__fixtures__/embeddings-texts.json',
  'openai/__fixtures__/embeddings-tokens-base64.json',
  'azure/__fixtures__/embeddings.json',
  'google/__fixtures__/embeddings.gemini.json',
])('golden exchange %s', (file) => {
  const fixture = load(file);

  it(`${fixture.description}`, async () => {
    answer = () => ({ status: 200, body: fixture.upstream });
    const target = { ...fixture.target, baseUrl: fixture.target.baseUrl.replace('{base}', base) };
    const result = await adapterOf(target.provider).embed(target, fixture.request, OPTIONS);
    expect(result).toEqual(fixture.result);
    expect(received).toHaveLength(1);
    const [sent] = received;
    expect({ method: sent.method, path: sent.path, body: sent.body }).toEqual({ method: fixture.wire.method, path: fixture.wire.path, body: fixture.wire.body });
    expect(sent.headers).toMatchObject(fixture.wire.headers);
    // Only the provider's own auth header is sent.
    for (const header of ['authorization', 'api-key', 'x-goog-api-key']) {
      if (!(header in fixture.wire.headers)) expect(sent.headers[header]).toBeUndefined();
    }
  });
});

describe('embeddings adapters', () => {
  const openai = (): ProviderTarget => ({ provider: 'openai', model: 'm', baseUrl: `${base}/v1`, apiKey: 'k' });
  const google = (): ProviderTarget => ({ provider: 'google', model: 'models/gemini-embedding-001', baseUrl: `${base}/v1beta`, apiKey: 'k' });

  it('has none for Anthropic, which offers no embeddings API', () => {
    expect(providerKind('anthropic').embeddings).toBeUndefined();
    for (const kind of ['openai', 'azure-openai', 'google'] as const) expect(providerKind(kind).embeddings).toBeDefined();
  });

  it('refuses answers that do not give one vector per input', async () => {
    const request = { model: 'm', input: ['a', 'b'] };
    answer = () => ({ status: 200, body: { data: [{ index: 0, embedding: [1] }] } });
    await expect(adapterOf('openai').embed(openai(), request, OPTIONS)).rejects.toBeInstanceOf(UpstreamProtocolError);
    answer = () => ({ status: 200, body: { data: [{ index: 0, embedding: [1] }, { index: 0, embedding: [2] }] } });
    await expect(adapterOf('openai').embed(openai(), request, OPTIONS)).rejects.toThrow(/repeated/);
    answer = () => ({ status: 200, body: { data: [{ index: 0, embedding: [1] }, { index: 1, embedding: ['x'] }] } });
    await expect(adapterOf('openai').embed(openai(), request, OPTIONS)).rejects.toThrow(/not an array of numbers/);
    answer = () => ({ status: 200, body: { embeddings: [{ values: [1] }] } });
    await expect(adapterOf('google').embed(google(), request, OPTIONS)).rejects.toBeInstanceOf(UpstreamProtocolError);
  });

  it('passes an upstream error status on with its reason and retry-after', async () => {
    answer = () => ({ status: 429, body: { error: { message: 'slow down' } }, headers: { 'retry-after': '3' } });
    const failed = adapterOf('openai').embed(openai(), { model: 'm', input: ['a'] }, OPTIONS);
    await expect(failed).rejects.toBeInstanceOf(UpstreamHttpError);
    await expect(failed).rejects.toMatchObject({ status: 429, upstreamMessage: 'slow down', retryAfterSeconds: 3 });
  });

  it('cannot send token arrays to Gemini: a translation error before any request', async () => {
    await expect(adapterOf('google').embed(google(), { model: 'm', input: [[1, 2]] }, OPTIONS)).rejects.toBeInstanceOf(RequestTranslationError);
    expect(received).toHaveLength(0);
  });

  it(`splits more than ${GEMINI_MAX_BATCH} Gemini inputs into batches and keeps their order`, async () => {
    answer = (body) => ({
      status: 200,
      body: { embeddings: (body as { requests: Array<{ content: { parts: Array<{ text: string }> } }> }).requests.map((r) => ({ values: [Number(r.content.parts[0].text)] })) },
    });
    const input = Array.from({ length: 2 * GEMINI_MAX_BATCH + 5 }, (_, i) => String(i));
    const result = await adapterOf('google').embed(google(), { model: 'gemini-embedding-001', input }, OPTIONS);
    expect(result.embeddings).toEqual(input.map((text) => [Number(text)]));
    expect(result.model).toBe('gemini-embedding-001');
    expect(received.map((r) => (r.body as { requests: unknown[] }).requests.length).sort((a, b) => a - b)).toEqual([5, GEMINI_MAX_BATCH, GEMINI_MAX_BATCH]);
    expect(received.every((r) => r.path === '/v1beta/models/gemini-embedding-001:batchEmbedContents')).toBe(true);
  });
});
