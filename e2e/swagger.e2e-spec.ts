import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { ErrorMessages } from '@igw/contracts';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

interface ErrorExample {
  message: string;
  path: string;
  statusCode: number;
  error: { message: string; type: string };
}
interface MediaType {
  schema?: { $ref?: string };
  example?: unknown;
  examples?: Record<string, { summary?: string; value: unknown }>;
}
interface Operation {
  summary?: string;
  security?: Array<Record<string, unknown>>;
  requestBody?: { content: Record<string, MediaType> };
  responses: Record<string, { description?: string; content?: Record<string, MediaType> }>;
}
interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  components: { securitySchemes?: Record<string, { type: string; scheme?: string; bearerFormat?: string }> };
}

const ERROR_STATUSES = ['400', '401', '403', '404', '413', '415', '429', '502', '503', '504'];

/** The model endpoints a newcomer tries first: Try it out sends the first request example as it is. */
const MODEL_ENDPOINTS = ['/v1/chat/completions', '/v1/embeddings', '/v1/decisions', '/images/generations', '/tts', '/stt', '/v1/moderations', '/v1/completions'];

function operations(document: OpenApiDocument): Array<[string, string, Operation]> {
  return Object.entries(document.paths).flatMap(([path, item]) => Object.entries(item).map(([method, operation]): [string, string, Operation] => [path, method, operation]));
}

/** The error bodies a status shows in the UI: its example, or each of its named examples. */
function errorExamples(operation: Operation, status: string): ErrorExample[] {
  const media = operation.responses[status]?.content?.['application/json'];
  if (!media) return [];
  return [media.example, ...Object.values(media.examples ?? {}).map((example) => example.value)].filter(Boolean) as ErrorExample[];
}

function defaultRequestExample(operation: Operation): Record<string, unknown> {
  const examples = operation.requestBody!.content['application/json'].examples!;
  return Object.values(examples)[0].value as Record<string, unknown>;
}

/**
 * The OpenAPI documents the Swagger UI is drawn from, against the standalone app with the
 * emulator playing every provider: what the UI offers must be what the services really do.
 */
describe('the OpenAPI documents (/docs-json)', () => {
  let emulator: RunningEmulator;
  let app: StandaloneHarness;
  let audio: Server;
  let audioOrigin: string;
  let key: string;
  let gatewayDoc: OpenApiDocument;
  let billingDoc: OpenApiDocument;

  beforeAll(async () => {
    emulator = await startEmulator();
    // CI has no internet: the STT example's public audio URL is served from here instead.
    const sample = Buffer.from(await (await fetch(`${emulator.url}/media/sample.wav`)).arrayBuffer());
    audio = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'audio/wav', 'content-length': String(sample.length) });
      response.end(sample);
    });
    await new Promise<void>((resolve) => audio.listen(0, '127.0.0.1', resolve));
    audioOrigin = `http://127.0.0.1:${(audio.address() as AddressInfo).port}`;
    app = await startStandaloneHarness({
      ...emulatedProviders(emulator.url),
      VLLM_BASE_URL: `${emulator.url}/v1`,
      TYPESAFE_API_KEY: 'typesafe-key',
      TYPESAFE_BASE_URL: `${emulator.url}/v1`,
      MEDIA_FETCH_ALLOWLIST: new URL(audioOrigin).host,
    });
    ({ key } = await app.paidKey(100_000_000));
    gatewayDoc = (await call<OpenApiDocument>(`${app.gateway}/docs-json`)).body;
    billingDoc = (await call<OpenApiDocument>(`${app.billing}/docs-json`)).body;
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await emulator?.close();
    await new Promise((resolve) => audio?.close(resolve));
  });

  it('gives every operation of the gateway and of billing a summary', () => {
    for (const document of [gatewayDoc, billingDoc]) {
      const missing = operations(document).filter(([, , operation]) => !operation.summary?.trim()).map(([path, method]) => `${method.toUpperCase()} ${path}`);
      expect(missing).toEqual([]);
    }
  });

  it("offers only the API-key scheme on the gateway, and no scheme claims to be a JWT", () => {
    expect(Object.keys(gatewayDoc.components.securitySchemes ?? {})).toEqual(['bearer']);
    expect(gatewayDoc.components.securitySchemes!.bearer).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const [, , operation] of operations(gatewayDoc)) for (const requirement of operation.security ?? []) expect(Object.keys(requirement)).toEqual(['bearer']);
    expect(Object.keys(billingDoc.components.securitySchemes ?? {}).sort()).toEqual(['admin', 'bearer']);
    for (const document of [gatewayDoc, billingDoc]) {
      for (const scheme of Object.values(document.components.securitySchemes ?? {})) expect(scheme.bearerFormat).toBeUndefined();
    }
  });

  it('documents every error status of the model endpoints with the error body and a body of that status', () => {
    const modelOperations = operations(gatewayDoc).filter(([path, method]) => method === 'post' && !path.startsWith('/health'));
    expect(modelOperations.length).toBeGreaterThanOrEqual(MODEL_ENDPOINTS.length);
    for (const [path, method, operation] of modelOperations) {
      for (const status of ERROR_STATUSES) {
        const where = `${method.toUpperCase()} ${path} ${status}`;
        const media = operation.responses[status]?.content?.['application/json'];
        expect([where, media?.schema?.$ref]).toEqual([where, '#/components/schemas/ErrorBodyDto']);
        const examples = errorExamples(operation, status);
        expect([where, examples.length > 0]).toEqual([where, true]);
        for (const example of examples) {
          expect([where, example.statusCode, example.path, example.error.message]).toEqual([where, Number(status), path, example.message]);
          expect(example.message.length).toBeGreaterThan(0);
        }
      }
    }
    // Billing's admin operations: the admin token's own 401, not a 400 body.
    for (const [path, , operation] of operations(billingDoc).filter(([path]) => path.startsWith('/admin'))) {
      expect([path, errorExamples(operation, '401').map((example) => example.message)]).toEqual([path, [ErrorMessages.invalidAdminToken]]);
    }
  });

  it("shows the chat endpoint's real 400, 401 and 404 messages", async () => {
    const chat = gatewayDoc.paths['/v1/chat/completions'].post;
    const url = `${app.gateway}/v1/chat/completions`;
    const unauthorized = await call<ErrorExample>(url, { body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] } });
    expect(unauthorized.status).toBe(401);
    expect(errorExamples(chat, '401').map((example) => example.message)).toEqual([unauthorized.body.message]);
    const unknownModel = await call<ErrorExample>(url, { token: key, body: { model: 'gpt-0', messages: [{ role: 'user', content: 'Hi' }] } });
    expect(unknownModel.status).toBe(404);
    expect(errorExamples(chat, '404').map((example) => example.message)).toEqual([unknownModel.body.message]);
    const noMessages = await call<ErrorExample>(url, { token: key, body: { model: 'gpt-4o-mini' } });
    const streamOptionsAlone = await call<ErrorExample>(url, { token: key, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }], stream_options: { include_usage: true } } });
    expect([noMessages.status, streamOptionsAlone.status]).toEqual([400, 400]);
    expect(errorExamples(chat, '400').map((example) => example.message)).toEqual([noMessages.body.message, streamOptionsAlone.body.message]);
  });

  it.each(MODEL_ENDPOINTS)('answers 200 to the default request example of %s, sent as it is', async (path) => {
    const example = defaultRequestExample(gatewayDoc.paths[path].post);
    const body = path === '/stt' ? { ...example, url: `${audioOrigin}${new URL(example.url as string).pathname}` } : example;
    const response = await fetch(`${app.gateway}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    const text = await response.text();
    expect([path, response.status, text.slice(0, 300)]).toEqual([path, 200, expect.any(String)]);
  });

  it("answers 200 to every example of the Gemini API's routes, on the path's example model and on a Gemini model, as Try it out sends them", async () => {
    type WithParameters = Operation & { parameters: Array<{ name: string; example?: string; schema?: { example?: string } }> };
    const geminiPaths = Object.keys(gatewayDoc.paths).filter((path) => path.startsWith('/v1beta/{model}:'));
    expect(geminiPaths.length).toBe(5);
    for (const path of geminiPaths) {
      const operation = gatewayDoc.paths[path].post as WithParameters;
      const model = operation.parameters.find((parameter) => parameter.name === 'model')!;
      const models = [model.example ?? model.schema!.example!, ...(/embed/i.test(path) ? [] : ['models/google/gemini-2.5-flash'])];
      for (const name of models) {
        for (const [example, { value }] of Object.entries(operation.requestBody!.content['application/json'].examples!)) {
          const url = `${app.gateway}${path.replace('{model}', encodeURIComponent(name))}${path.endsWith(':streamGenerateContent') ? '?alt=sse' : ''}`;
          const response = await fetch(url, { method: 'POST', headers: { 'x-goog-api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(value) });
          expect([path, name, example, response.status, (await response.text()).slice(0, 200)]).toEqual([path, name, example, 200, expect.any(String)]);
        }
      }
    }
  });

  it('offers streaming, tools and the Azure path as more chat examples, each accepted', async () => {
    const chatOperation = gatewayDoc.paths['/v1/chat/completions'].post;
    expect(chatOperation.responses['200'].content!['application/json'].example).toMatchObject({ object: 'chat.completion', choices: [{ message: { role: 'assistant' } }] });
    const chatExamples = chatOperation.requestBody!.content['application/json'].examples!;
    expect(Object.keys(chatExamples)).toEqual(expect.arrayContaining(['hello', 'streaming', 'tools']));
    for (const [name, { value }] of Object.entries(chatExamples)) {
      const response = await fetch(`${app.gateway}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(value) });
      await response.text();
      expect([name, response.status]).toEqual([name, 200]);
    }
    const azurePath = '/openai/deployments/{deployment}/chat/completions';
    const azure = gatewayDoc.paths[azurePath].post as Operation & { parameters: Array<{ name: string; example?: string; schema?: { example?: string } }> };
    const parameter = (name: string) => {
      const found = azure.parameters.find((candidate) => candidate.name === name)!;
      return found.example ?? found.schema!.example!;
    };
    const azureUrl = `${app.gateway}/openai/deployments/${parameter('deployment')}/chat/completions?api-version=${parameter('api-version')}`;
    const response = await fetch(azureUrl, { method: 'POST', headers: { 'api-key': key, 'content-type': 'application/json' }, body: JSON.stringify(defaultRequestExample(azure)) });
    expect([await response.text(), response.status]).toEqual([expect.any(String), 200]);
  });
});
