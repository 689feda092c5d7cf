import path from 'node:path';
import fc from 'fast-check';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/**
 * Property: whatever a client puts in any one field of a valid request, the answer is a 2xx
 * or a 4xx with the spec's error body, never a 5xx. Each endpoint's valid request gets one
 * field (or the whole body) replaced by a random value: fractions, 1e300, -0, numbers JSON
 * can write but a double cannot hold, NaN-like strings, nested objects and arrays, null, long
 * strings, or nothing at all. One standalone app with the emulator serves every run.
 *
 * Every field first gets each of a few values most likely to slip through (SWEEP_VALUES), then
 * random ones. The seed is fixed so a failure replays; fast-check prints it with the counterexample.
 * FUZZ_SEED and FUZZ_RUNS override it and the number of runs per endpoint.
 */
const SEED = Number(process.env.FUZZ_SEED ?? 20_261_124);
const RUNS = Number(process.env.FUZZ_RUNS ?? 100);
const THROUGH_EXPRESS = 'application/vnd.igw+json';

/** A JSON number written as is, for values JSON.stringify cannot write (-0, 1e400, 30 digits). */
class RawJson {
  constructor(readonly text: string) {}
}

const RAW_MARK = '\u0000raw:';

function toJson(value: unknown): string {
  const text = JSON.stringify(value, (_key, item: unknown) => (item instanceof RawJson ? `${RAW_MARK}${item.text}` : item));
  // JSON.stringify writes the mark's NUL as \u0000; the raw text has no quote or backslash.
  return text === undefined ? '' : text.replace(/"\\u0000raw:([^"\\]*)"/g, '$1');
}

const LONG_STRING = 'long '.repeat(20_000);

/** Values every field gets once, before the random runs: the ones most likely to reach arithmetic unchecked. */
const SWEEP_VALUES: unknown[] = [40.5, 1e300, -1, 0, new RawJson('-0'), new RawJson('1e400'), 2 ** 53, 'NaN', '', null, { nested: [{}] }, [1, 'x']];

/** Anything a client might send in a field. */
const anyValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom<unknown>(40.5, 0.5, 1e300, -1e300, -1, 0, 1, 2 ** 31, 2 ** 53, 2 ** 64, Number.MAX_VALUE, Number.MIN_VALUE, 1e-7, 4096.000001),
  fc.constantFrom<unknown>(new RawJson('-0'), new RawJson('1e400'), new RawJson('-1e400'), new RawJson('123456789012345678901234567890'), new RawJson('1E2'), new RawJson('0.0000000000000000000001')),
  fc.integer({ min: -1_000_000, max: 1_000_000 }),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom<unknown>('NaN', 'Infinity', '-Infinity', '1e300', '40.5', '0x10', '', ' ', 'null', 'true', '__proto__', 'constructor', LONG_STRING),
  fc.string({ maxLength: 40 }),
  fc.boolean(),
  fc.constant(null),
  fc.constant(undefined),
  fc.jsonValue({ maxDepth: 4 }),
  fc.array(fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.string({ maxLength: 8 }), fc.constant(null)), { maxLength: 6 }),
  fc.dictionary(fc.constantFrom('type', 'name', 'role', 'content', 'max_tokens', 'x', '__proto__', 'constructor'), fc.jsonValue({ maxDepth: 2 }), { maxKeys: 4 }),
);

/** A copy of `base` with the value at `path` (dot-separated, '' for the whole body) replaced; undefined removes it. */
function withField(base: unknown, fieldPath: string, value: unknown): unknown {
  if (fieldPath === '') return value;
  const copy = structuredClone(base) as Record<string, unknown>;
  const keys = fieldPath.split('.');
  let target: Record<string, unknown> = copy;
  for (const key of keys.slice(0, -1)) target = target[key] as Record<string, unknown>;
  const last = keys[keys.length - 1];
  if (value === undefined) delete target[last];
  else target[last] = value;
  return copy;
}

interface Answer {
  status: number;
  contentType: string;
  body: unknown;
}

interface Endpoint {
  name: string;
  method: string;
  url: () => string;
  token: () => string;
  /** A request the endpoint accepts. */
  base: () => Record<string, unknown>;
  /** The fields (dot paths) to replace; '' is the whole body. */
  fields: string[];
  /**
   * The fields the sweep keeps beside the one it replaces (all when absent): alone, a field
   * cannot hide behind another (max_completion_tokens would take over from max_tokens).
   */
  required?: string[];
  contentType?: string;
}

describe('every field of every endpoint, random values: 2xx or 4xx with the spec body, never 5xx', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let catalogue: string;
  let key: string;
  let accountId: string;
  /** A key of its own for the key rule endpoints, so what they set never touches `key`. */
  let fuzzedKeyId: string;
  const keyRules = () => ({
    name: 'fuzz key',
    metadata: { team: 'fuzz' },
    budget: { limit: '1000', unit: 'credits', period: 'month' },
    models: ['test/*', 'mini'],
    rpm: 1000,
    concurrency: 10,
    expiresAt: '2099-01-01T00:00:00Z',
  });
  const keyRuleFields = ['', 'name', 'metadata', 'metadata.team', 'budget', 'budget.limit', 'budget.unit', 'budget.period', 'models', 'models.0', 'rpm', 'concurrency', 'expiresAt'];

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/chat-catalogue.yaml'),
      RATE_LIMIT_RPM: '1000000',
      // The valid chat request carries metadata, which reaches the upstream only when allowed.
      ALLOW_UPSTREAM_METADATA: 'true',
      ...emulatedProviders(emulator.url),
    });
    catalogue = harness.catalogue;
    ({ key, accountId } = await harness.paidKey(100_000_000));
    fuzzedKeyId = (await harness.paidKey(1)).keyId;
    const fuzzModel = await send('PUT', `${catalogue}/admin/v1/catalogue/models/fuzz/model`, harness.adminToken, toJson(catalogueEntry()));
    expect(fuzzModel.status).toBe(200);
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  async function send(method: string, url: string, token: string, body: string | undefined, contentType = 'application/json'): Promise<Answer> {
    const response = await fetch(url, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': contentType }) },
      body,
    });
    const text = await response.text();
    const type = response.headers.get('content-type') ?? '';
    return { status: response.status, contentType: type, body: type.includes('json') && text ? (JSON.parse(text) as unknown) : text };
  }

  function expectSpecAnswer(answer: Answer, url: string, described: string): void {
    if (answer.status >= 500 || (answer.status >= 400 && !isSpecErrorBody(answer.body, answer.status, new URL(url).pathname))) {
      throw new Error(`${described} -> ${answer.status} ${typeof answer.body === 'string' ? answer.body.slice(0, 300) : JSON.stringify(answer.body).slice(0, 300)}`);
    }
    expect(answer.status).toBeGreaterThanOrEqual(200);
  }

  const chatRequest = () => ({
    model: 'mini',
    messages: [
      { role: 'system', content: 'be brief' },
      { role: 'user', content: [{ type: 'text', text: 'hello' }] },
    ],
    max_tokens: 20,
    max_completion_tokens: 20,
    temperature: 1,
    top_p: 0.9,
    n: 1,
    seed: 7,
    stop: ['END'],
    logit_bias: { '50256': -100 },
    logprobs: true,
    top_logprobs: 2,
    presence_penalty: 0,
    frequency_penalty: 0,
    user: 'fuzz',
    stream: false,
    tools: [{ type: 'function', function: { name: 'lookup', description: 'd', parameters: { type: 'object', properties: { q: { type: 'string', maxLength: 10 } } } } }],
    tool_choice: 'auto',
    parallel_tool_calls: true,
    normalize_tool_schemas: false,
    reasoning: { max_tokens: 100 },
    response_format: { type: 'text' },
    metadata: { run: 'fuzz' },
    provider: 'auto',
  });
  const chatFields = [
    '',
    'model',
    'messages',
    'messages.0',
    'messages.0.role',
    'messages.1.content',
    'messages.1.content.0',
    'messages.1.content.0.text',
    'max_tokens',
    'max_completion_tokens',
    'temperature',
    'top_p',
    'n',
    'seed',
    'stop',
    'logit_bias',
    'logit_bias.50256',
    'logprobs',
    'top_logprobs',
    'presence_penalty',
    'frequency_penalty',
    'user',
    'stream',
    'stream_options',
    'tools',
    'tools.0.function.parameters',
    'tools.0.function.parameters.properties.q.maxLength',
    'tool_choice',
    'parallel_tool_calls',
    'normalize_tool_schemas',
    'reasoning',
    'reasoning.max_tokens',
    'reasoning_effort',
    'response_format',
    'metadata',
    'provider',
    'enable_search',
    'search_options',
    'modalities',
    'audio',
    'prediction',
    'verbosity',
    'service_tier',
    'store',
  ];
  const embeddingRequest = () => ({ model: 'embed', input: ['hello', 'world'], dimensions: 256, encoding_format: 'float', user: 'fuzz', provider: 'auto' });
  const embeddingFields = ['', 'model', 'input', 'input.0', 'dimensions', 'encoding_format', 'user', 'provider'];
  const catalogueEntry = () => ({
    id: 'fuzz/model',
    aliases: ['fuzz-alias'],
    type: 'openai/chat-completions',
    info: { name: 'Fuzz', developer: 'Test', description: 'fuzzed', contextLength: 2000, outputMax: 500 },
    tags: [],
    pricing: { kind: 'fixed', currency: 'USD', units: [{ unit: 'input_tokens', price: 0.15, per: 1_000_000 }] },
    routing: { sources: [{ provider: 'openai', model: 'gpt-4o-mini' }] },
  });
  const catalogueFields = ['', 'aliases', 'type', 'info', 'info.contextLength', 'info.outputMax', 'info.name', 'tags', 'pricing', 'pricing.kind', 'pricing.units', 'pricing.units.0.price', 'pricing.units.0.per', 'pricing.units.0.unit', 'routing', 'routing.sources', 'routing.sources.0.provider'];

  const endpoints: Endpoint[] = [
    { name: 'chat (direct route)', method: 'POST', url: () => `${harness.gateway}/v1/chat/completions`, token: () => key, base: chatRequest, fields: chatFields, required: ['model', 'messages'] },
    {
      name: 'chat (through Express)',
      method: 'POST',
      url: () => `${harness.gateway}/v1/chat/completions`,
      token: () => key,
      base: chatRequest,
      fields: chatFields,
      required: ['model', 'messages'],
      contentType: THROUGH_EXPRESS,
    },
    {
      name: 'Azure-style chat',
      method: 'POST',
      url: () => `${harness.gateway}/openai/deployments/mini/chat/completions?api-version=2024-10-21`,
      token: () => key,
      base: () => {
        const { model: _model, ...rest } = chatRequest();
        return rest;
      },
      fields: ['model', ...chatFields.filter((field) => field !== 'model')],
      required: ['messages'],
    },
    { name: 'embeddings', method: 'POST', url: () => `${harness.gateway}/v1/embeddings`, token: () => key, base: embeddingRequest, fields: embeddingFields, required: ['model', 'input'] },
    {
      name: 'Azure-style embeddings',
      method: 'POST',
      url: () => `${harness.gateway}/openai/deployments/embed/embeddings?api-version=2024-10-21`,
      token: () => key,
      base: () => ({ input: ['hello'], dimensions: 256, provider: 'auto' }),
      fields: embeddingFields,
    },
    {
      name: "Gemini's generateContent (direct route)",
      method: 'POST',
      url: () => `${harness.gateway}/v1beta/models/mini:generateContent`,
      token: () => key,
      base: () => ({
        contents: [{ role: 'user', parts: [{ text: 'hello' }] }],
        systemInstruction: { parts: [{ text: 'Be brief.' }] },
        tools: [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'OBJECT', properties: { city: { type: 'STRING' } } } }] }],
        toolConfig: { functionCallingConfig: { mode: 'AUTO' } },
        generationConfig: { temperature: 0.5, maxOutputTokens: 50, candidateCount: 1, thinkingConfig: { thinkingBudget: 0 }, responseMimeType: 'text/plain' },
      }),
      fields: [
        '',
        'contents',
        'contents.0',
        'contents.0.role',
        'contents.0.parts',
        'contents.0.parts.0',
        'contents.0.parts.0.text',
        'systemInstruction',
        'tools',
        'tools.0.functionDeclarations',
        'tools.0.functionDeclarations.0.parameters',
        'toolConfig.functionCallingConfig.mode',
        'generationConfig',
        'generationConfig.temperature',
        'generationConfig.maxOutputTokens',
        'generationConfig.candidateCount',
        'generationConfig.thinkingConfig.thinkingBudget',
        'generationConfig.responseMimeType',
        'cachedContent',
        'safetySettings',
      ],
      required: ['contents'],
    },
    {
      name: 'billing: create account',
      method: 'POST',
      url: () => `${harness.billing}/admin/v1/accounts`,
      token: () => harness.adminToken,
      base: () => ({ name: 'fuzz', credits: 10, plan: 'paid', lowBalanceThreshold: 5 }),
      fields: ['', 'name', 'credits', 'plan', 'lowBalanceThreshold'],
    },
    {
      name: 'billing: update account',
      method: 'PATCH',
      url: () => `${harness.billing}/admin/v1/accounts/${accountId}`,
      token: () => harness.adminToken,
      base: () => ({ name: 'fuzz', plan: 'paid', status: 'active', autoDebitStatus: 'enabled', lowBalanceThreshold: 10, requestsPerMinute: 1_000_000, concurrentRequests: 1000 }),
      fields: ['', 'name', 'plan', 'autoDebitStatus', 'lowBalanceThreshold', 'requestsPerMinute', 'concurrentRequests'],
    },
    {
      name: 'billing: add credits',
      method: 'POST',
      url: () => `${harness.billing}/admin/v1/accounts/${accountId}/credits`,
      token: () => harness.adminToken,
      base: () => ({ credits: 5, reason: 'fuzz' }),
      fields: ['', 'credits', 'reason'],
    },
    {
      name: 'billing: create key',
      method: 'POST',
      url: () => `${harness.billing}/admin/v1/accounts/${accountId}/keys`,
      token: () => harness.adminToken,
      base: keyRules,
      fields: keyRuleFields,
    },
    {
      name: 'billing: update key',
      method: 'PATCH',
      url: () => `${harness.billing}/admin/v1/keys/${fuzzedKeyId}`,
      token: () => harness.adminToken,
      base: keyRules,
      fields: keyRuleFields,
    },
    {
      name: 'catalogue: amend a model',
      method: 'PATCH',
      url: () => `${catalogue}/admin/v1/catalogue/models/fuzz/model`,
      token: () => harness.adminToken,
      base: () => ({ aliases: ['fuzz-more'], pricing: catalogueEntry().pricing }),
      fields: ['', 'aliases', 'aliases.0', 'pricing', 'pricing.kind', 'pricing.currency', 'pricing.units', 'pricing.units.0', 'pricing.units.0.price', 'pricing.units.0.per'],
    },
    { name: 'catalogue: replace a model', method: 'PUT', url: () => `${catalogue}/admin/v1/catalogue/models/fuzz/model`, token: () => harness.adminToken, base: catalogueEntry, fields: catalogueFields },
  ];

  it.each(endpoints.map((endpoint) => [endpoint.name, endpoint] as const))('%s', async (_name, endpoint) => {
    for (const field of endpoint.fields) {
      const base = endpoint.base();
      const kept = endpoint.required ? Object.fromEntries(Object.entries(base).filter(([name]) => endpoint.required!.includes(name) || name === field.split('.')[0])) : base;
      for (const value of SWEEP_VALUES) {
        const body = toJson(withField(kept, field, value));
        const answer = await send(endpoint.method, endpoint.url(), endpoint.token(), body, endpoint.contentType);
        expectSpecAnswer(answer, endpoint.url(), `${endpoint.method} ${endpoint.url()} with ${field || 'the body'} = ${body.slice(0, 300)}`);
      }
    }
    await fc.assert(
      fc.asyncProperty(fc.constantFrom(...endpoint.fields), anyValue, async (field, value) => {
        const body = toJson(withField(endpoint.base(), field, value));
        const answer = await send(endpoint.method, endpoint.url(), endpoint.token(), body, endpoint.contentType);
        expectSpecAnswer(answer, endpoint.url(), `${endpoint.method} ${endpoint.url()} with ${field || 'the body'} = ${body.slice(0, 300)}`);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });

  it('usage queries: any query string value', async () => {
    const usage = () => `${harness.billing}/admin/v1/accounts/${accountId}/usage`;
    await fc.assert(
      fc.asyncProperty(fc.boolean(), fc.constantFrom('limit', 'from', 'to', 'kind', 'cursor', 'model', 'key'), fc.oneof(fc.string({ maxLength: 40 }), fc.constantFrom('40.5', '1e300', '-0', '9007199254740993', 'NaN', '2025-13-45', '[]', '{}')), async (summary, name, value) => {
        const url = `${usage()}${summary ? '/summary' : ''}?${new URLSearchParams({ [name]: value }).toString()}`;
        expectSpecAnswer(await send('GET', url, harness.adminToken, undefined), url, `GET ${url}`);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });

  it('model listing queries: any value, repeated or not', async () => {
    const names = fc.constantFrom('include', 'details', 'id', 'tags', 'capabilities', 'output_modalities', 'input_modalities', 'modalities', 'type', 'unknown', '__proto__', 'include[]', 'tags[0]');
    const values = fc.array(fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('all', 'true', '1e300', '40.5', ',,,', 'pricing,all', 'CHAT-COMPLETIONS')), { minLength: 1, maxLength: 3 });
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('/v1/models', '/model/mini'), names, values, async (route, name, repeated) => {
        const query = new URLSearchParams(repeated.map((value): [string, string] => [name, value]));
        const url = `${harness.gateway}${route}?${query.toString()}`;
        expectSpecAnswer(await send('GET', url, key, undefined), url, `GET ${url}`);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });

  it('Azure-style api-version and deployment: any value, repeated or not', async () => {
    const versions = fc.array(fc.oneof(fc.string({ maxLength: 30 }), fc.constantFrom('2024-10-21', '1e300', '', '[]')), { minLength: 0, maxLength: 3 });
    const deployments = fc.oneof(fc.constantFrom('mini', 'embed', 'test%2Fmini', '..', '%00', 'a'.repeat(300)), fc.string({ minLength: 1, maxLength: 20 }).map(encodeURIComponent));
    await fc.assert(
      fc.asyncProperty(fc.constantFrom('chat/completions', 'embeddings'), deployments, versions, async (operation, deployment, repeated) => {
        const query = new URLSearchParams(repeated.map((value): [string, string] => ['api-version', value]));
        const url = `${harness.gateway}/openai/deployments/${deployment}/${operation}?${query.toString()}`;
        const body = operation === 'embeddings' ? { input: 'hello' } : { messages: [{ role: 'user', content: 'hello' }] };
        expectSpecAnswer(await send('POST', url, key, toJson(body)), url, `POST ${url}`);
      }),
      { seed: SEED, numRuns: RUNS, endOnFailure: true },
    );
  });
});

/** The spec's error body `{message, path, requestId, statusCode, timestamp}` and OpenAI's `error` beside it (Google's `{code, message, status}` on the Gemini routes). */
function isSpecErrorBody(body: unknown, status: number, pathname: string): boolean {
  if (typeof body !== 'object' || body === null) return false;
  const fields = body as Record<string, unknown>;
  const error = fields.error as Record<string, unknown> | undefined;
  return (
    Object.keys(fields).sort().join() === 'error,message,path,requestId,statusCode,timestamp' &&
    typeof fields.message === 'string' &&
    fields.message !== '' &&
    fields.path === pathname &&
    typeof fields.requestId === 'string' &&
    fields.statusCode === status &&
    !Number.isNaN(Date.parse(String(fields.timestamp))) &&
    error?.message === fields.message &&
    (typeof error.type === 'string' || (pathname.startsWith('/v1beta/') && error.code === status && typeof error.status === 'string'))
  );
}
