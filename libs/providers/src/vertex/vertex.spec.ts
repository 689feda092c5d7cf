import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
// The registry first, as the library's index loads it: it builds every adapter, this one included.
import '../registry';
// The emulator plays Vertex AI's token endpoint and routes for the adapters' round trips.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startEmulator, type RunningEmulator } from '../../../../tools/emulator/src/emulator';
// eslint-disable-next-line @nx/enforce-module-boundaries
import type { ServiceAccountKey } from '../../../../tools/emulator/src/vertex';
import type { CloudSettingsContext } from '../connections/cloud';
import { readProvidersFile } from '../connections/providers-file';
import { vertexToolSchema } from '../google/gemini.translate';
import type { ProviderTarget, UpstreamChatChunk } from '../provider.types';
import { chunksOf } from '../transport/chunk-stream.testing';
import { UpstreamUnavailableError } from '../upstream.errors';
import { VertexChatAdapter } from './vertex.chat';
import { fromVertexPredictResponse, toVertexPredictRequest, VertexEmbeddingsAdapter } from './vertex.embeddings';
import { vertexGeminiUrl } from './vertex.gemini';
import { vertexMessagesCall } from './vertex.messages';
import { environmentVertexSettings, PROJECT_FROM_CREDENTIALS, readVertexSettings, vertexAuthorizer, vertexBaseUrl, type VertexSettings } from './vertex.settings';

const CLAUDE = 'claude-sonnet-4-5@20250929';
const GEMINI = 'gemini-2.5-flash';
const OPTIONS = { timeoutMs: 10_000 };

/** A providers-file reading context: files from a map, failures thrown as the providers file does. */
function context(files: Record<string, string> = {}, environment: Record<string, string> = {}): CloudSettingsContext {
  const fail = (field: string, problem: string): never => {
    throw new Error(`${field}: ${problem}`);
  };
  return {
    fail,
    expand: (_field, value) => value,
    readFile: (field, path) => files[path] ?? fail(field, `cannot read ${path} (ENOENT)`),
    environment,
  };
}

// Should any path ask for the GCE metadata server, it stays on this machine and is told there is none.
process.env.GCE_METADATA_HOST = '127.0.0.1:9';
process.env.METADATA_SERVER_DETECTION = 'none';

describe('Vertex AI settings', () => {
  it('reads project, location and a service-account credentials file', () => {
    const key = JSON.stringify({ type: 'service_account', project_id: 'key-project', client_email: 'a@key-project.iam.gserviceaccount.com', private_key: '-----BEGIN PRIVATE KEY-----\nsecret\n-----END PRIVATE KEY-----\n' });
    const settings = readVertexSettings({ location: 'europe-west4', project: 'my-project', credentialsFile: '/keys/sa.json' }, context({ '/keys/sa.json': key }));
    expect(settings).toMatchObject({ kind: 'vertex', location: 'europe-west4', project: 'my-project' });
    expect(settings.credentials?.project).toBe('key-project');
    // The key never prints, whatever logs the settings.
    expect(JSON.stringify(settings)).not.toContain('secret');
  });

  it.each([
    [{ location: 'Mars' }, {}, 'location: expected a Vertex AI location'],
    [{ location: 'global', project: 'A!' }, {}, 'project: expected a Google Cloud project id'],
    [{ location: 'global', credentialsFile: '/missing.json' }, {}, 'credentialsFile: cannot read /missing.json'],
    [{ location: 'global', credentialsFile: '/f' }, { '/f': 'not json: -----BEGIN PRIVATE KEY-----' }, 'credentialsFile: the file is not JSON'],
    [{ location: 'global', credentialsFile: '/f' }, { '/f': '{"type":"api_key"}' }, 'credentialsFile: expected "type" to be one of service_account, external_account, authorized_user'],
    [{ location: 'global', credentialsFile: '/f' }, { '/f': '{"type":"service_account","client_email":"a@b"}' }, 'credentialsFile: the service_account credential lacks private_key'],
  ])('refuses %j with a message naming the field', (entry, files, message) => {
    let error: Error | undefined;
    try {
      readVertexSettings(entry, context(files));
    } catch (thrown) {
      error = thrown as Error;
    }
    expect(error?.message).toContain(message);
    expect(error?.message).not.toContain('BEGIN PRIVATE KEY');
  });

  it('is a providers-file connection needing no key or address, its credentials file polled with the file', () => {
    const key = JSON.stringify({ type: 'external_account', audience: '//iam.googleapis.com/projects/1/locations/global/workloadIdentityPools/p/providers/q', subject_token_type: 'urn:ietf:params:oauth:token-type:jwt', token_url: 'https://sts.googleapis.com/v1/token', credential_source: { file: '/var/run/token' } });
    const files: Record<string, string> = { 'providers.yaml': 'connections:\n  - { name: vertex-eu, kind: vertex, location: europe-west4, project: my-project, credentialsFile: /keys/wif.json }\n', '/keys/wif.json': key };
    const content = readProvidersFile('providers.yaml', {}, (file) => files[file]);
    expect(content.connections[0]).toMatchObject({ name: 'vertex-eu', kind: 'vertex', baseUrl: 'https://europe-west4-aiplatform.googleapis.com', cloud: { kind: 'vertex', location: 'europe-west4', project: 'my-project' } });
    expect((content.connections[0].cloud as VertexSettings).credentials?.type).toBe('external_account');
    expect(content.connections[0].authorize).toEqual(expect.any(Function));
    expect(content.keyFiles).toEqual(['/keys/wif.json']);
  });

  it('takes GOOGLE_CLOUD_PROJECT for the project a file entry and its credential leave out', () => {
    expect(readVertexSettings({ location: 'us-east5' }, context({}, { GOOGLE_CLOUD_PROJECT: 'env-project' }))).toEqual({ kind: 'vertex', location: 'us-east5', environmentProject: 'env-project' });
  });

  it('builds the built-in connection from VERTEX_LOCATION and VERTEX_PROJECT, else GOOGLE_CLOUD_PROJECT', () => {
    expect(environmentVertexSettings({})).toBeUndefined();
    expect(environmentVertexSettings({ VERTEX_LOCATION: 'global', VERTEX_PROJECT: 'p-one', GOOGLE_CLOUD_PROJECT: 'p-two' })).toEqual({ kind: 'vertex', location: 'global', project: 'p-one' });
    expect(environmentVertexSettings({ VERTEX_LOCATION: 'us-central1', GOOGLE_CLOUD_PROJECT: 'p-two' })).toEqual({ kind: 'vertex', location: 'us-central1', project: 'p-two' });
  });
});

describe('Vertex AI URLs', () => {
  const target = (location: string, project?: string, model = GEMINI): ProviderTarget => ({
    provider: 'vertex',
    model,
    baseUrl: vertexBaseUrl(location),
    cloud: { kind: 'vertex', location, ...(project && { project }) },
  });

  it('puts a regional location in the host and the path, and the global one in the path only', () => {
    expect(vertexGeminiUrl(target('europe-west4', 'my-project'), 'generateContent')).toBe('https://europe-west4-aiplatform.googleapis.com/v1/projects/my-project/locations/europe-west4/publishers/google/models/gemini-2.5-flash:generateContent');
    expect(vertexGeminiUrl(target('global', 'my-project'), 'streamGenerateContent')).toBe('https://aiplatform.googleapis.com/v1/projects/my-project/locations/global/publishers/google/models/gemini-2.5-flash:streamGenerateContent');
  });

  it('leaves the project for the authorizer to fill in when the connection names none', () => {
    expect(vertexGeminiUrl(target('us-central1'), 'generateContent')).toContain(`/projects/${PROJECT_FROM_CREDENTIALS}/locations/us-central1/`);
  });

  it('sends Claude the Messages body without its model, with Vertex\'s anthropic_version, to rawPredict or streamRawPredict', () => {
    const claude = target('us-east5', 'my-project', CLAUDE);
    const whole = vertexMessagesCall(claude, { body: { model: CLAUDE, max_tokens: 10, messages: [], stream: false }, stream: false });
    expect(whole.url).toBe('https://us-east5-aiplatform.googleapis.com/v1/projects/my-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict');
    expect(whole.body).toEqual({ anthropic_version: 'vertex-2023-10-16', max_tokens: 10, messages: [], stream: false });
    const streamed = vertexMessagesCall(claude, { body: { model: CLAUDE, messages: [], stream: true }, stream: true, beta: 'context-1m-2025-08-07' });
    expect(streamed.url).toMatch(/:streamRawPredict$/);
    expect(streamed.headers).toEqual({ 'anthropic-beta': 'context-1m-2025-08-07' });
  });
});

describe('tool schemas for Vertex AI', () => {
  it('drops additionalProperties and $schema at every depth and says nullable for anyOf [X, null] and [T, null] types', () => {
    const schema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      additionalProperties: false,
      properties: {
        city: { type: 'string', description: 'The city' },
        unit: { anyOf: [{ type: 'string', enum: ['c', 'f'] }, { type: 'null' }], description: 'Optional unit' },
        days: { type: ['integer', 'null'] },
        stops: { type: 'array', items: { type: 'object', additionalProperties: false, properties: { name: { type: 'string' } } } },
        either: { anyOf: [{ type: 'string' }, { type: 'number' }, { type: 'null' }] },
      },
      required: ['city'],
    };
    const original = structuredClone(schema);
    expect(vertexToolSchema(schema)).toEqual({
      type: 'object',
      properties: {
        city: { type: 'string', description: 'The city' },
        unit: { type: 'string', enum: ['c', 'f'], description: 'Optional unit', nullable: true },
        days: { type: 'integer', nullable: true },
        stops: { type: 'array', items: { type: 'object', properties: { name: { type: 'string' } } } },
        either: { anyOf: [{ type: 'string' }, { type: 'number' }], nullable: true },
      },
      required: ['city'],
    });
    expect(schema).toEqual(original);
  });
});

describe('Vertex AI embeddings translation', () => {
  it('sends texts as instances with their task type and the dimensions as outputDimensionality', () => {
    expect(toVertexPredictRequest({ model: 'text-embedding-005', input: ['a', 'b'], dimensions: 256 })).toEqual({
      instances: [{ content: 'a', task_type: 'RETRIEVAL_DOCUMENT' }, { content: 'b', task_type: 'RETRIEVAL_DOCUMENT' }],
      parameters: { outputDimensionality: 256 },
    });
    expect(() => toVertexPredictRequest({ model: 'text-embedding-005', input: [[1, 2]] })).toThrow('not token arrays');
  });

  it('reads the vectors and sums the token counts; no usage when a count is missing', () => {
    const answer = { predictions: [{ embeddings: { values: [0.1, 0.2], statistics: { token_count: 3 } } }, { embeddings: { values: [0.3, 0.4], statistics: { token_count: 2 } } }] };
    expect(fromVertexPredictResponse('vertex', 'm', answer, 2)).toEqual({ model: 'm', embeddings: [[0.1, 0.2], [0.3, 0.4]], usage: { prompt_tokens: 5, total_tokens: 5 } });
    expect(fromVertexPredictResponse('vertex', 'm', { predictions: [{ embeddings: { values: [1] } }] }, 1).usage).toBeUndefined();
    expect(() => fromVertexPredictResponse('vertex', 'm', answer, 3)).toThrow('2 embeddings for 3 inputs');
  });
});

describe('Vertex AI against the emulator', () => {
  let emulator: RunningEmulator;
  let key: ServiceAccountKey;

  beforeAll(async () => {
    emulator = await startEmulator({ vertex: { tokenLifetimeSeconds: 3600 } });
    key = emulator.vertex.serviceAccount();
  });

  afterAll(async () => {
    await emulator.close();
  });

  const settingsOf = (credential: object, project?: string): VertexSettings =>
    readVertexSettings({ location: 'us-east5', ...(project && { project }), credentialsFile: '/sa.json' }, context({ '/sa.json': JSON.stringify(credential) }));

  function targetOf(model: string, settings = settingsOf(key), authorize = vertexAuthorizer(settings, 'vertex-test')): ProviderTarget {
    return { provider: 'vertex-test', model, baseUrl: emulator.url, cloud: settings, authorize };
  }

  const request = { method: 'POST' as const, url: 'https://x.test/v1/projects/p/locations/l/publishers/google/models/m:generateContent', headers: { 'content-type': 'application/json' }, body: '{}' };

  it('fetches one token for many calls, and a new one once the cached one is within five minutes of expiry', async () => {
    // google-auth-library replaces a token 5 minutes before it expires: one that lives 301 s is fresh for 1 s.
    emulator.vertex.tokens.setTokenLifetime(301);
    try {
      const authorize = vertexAuthorizer(settingsOf(key));
      const before = emulator.vertex.tokens.issued;
      const first = await Promise.all(Array.from({ length: 5 }, () => authorize(request)));
      const again = await authorize(request);
      expect(emulator.vertex.tokens.issued).toBe(before + 1);
      expect(new Set([...first, again].map((signed) => signed.headers.authorization)).size).toBe(1);
      expect(again.headers.authorization).toMatch(/^Bearer ya29\./);
      expect(again.headers['content-type']).toBe('application/json');
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const refreshed = await authorize(request);
      expect(emulator.vertex.tokens.issued).toBe(before + 2);
      expect(refreshed.headers.authorization).not.toBe(again.headers.authorization);
    } finally {
      emulator.vertex.tokens.setTokenLifetime(3600);
    }
  });

  it('puts the credential\'s project in a URL the connection left it out of', async () => {
    const signed = await vertexAuthorizer(settingsOf(key))({ ...request, url: `${emulator.url}/v1/projects/${PROJECT_FROM_CREDENTIALS}/locations/us-east5/publishers/google/models/m:generateContent` });
    expect(signed.url).toBe(`${emulator.url}/v1/projects/emulated-project/locations/us-east5/publishers/google/models/m:generateContent`);
    expect((await vertexAuthorizer(settingsOf(key))(request)).url).toBeUndefined();
  });

  it('takes Application Default Credentials (GOOGLE_APPLICATION_CREDENTIALS) and their project when the connection names no file', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'vertex-adc-'));
    const saved = process.env.GOOGLE_APPLICATION_CREDENTIALS;
    try {
      process.env.GOOGLE_APPLICATION_CREDENTIALS = path.join(folder, 'adc.json');
      await writeFile(process.env.GOOGLE_APPLICATION_CREDENTIALS, JSON.stringify(key));
      const before = emulator.vertex.tokens.issued;
      const signed = await vertexAuthorizer({ kind: 'vertex', location: 'us-east5' })({ ...request, url: `${emulator.url}/v1/projects/${PROJECT_FROM_CREDENTIALS}/locations/us-east5/x` });
      expect(signed.url).toBe(`${emulator.url}/v1/projects/emulated-project/locations/us-east5/x`);
      expect(signed.headers.authorization).toMatch(/^Bearer ya29\./);
      expect(emulator.vertex.tokens.issued).toBe(before + 1);
    } finally {
      if (saved === undefined) delete process.env.GOOGLE_APPLICATION_CREDENTIALS;
      else process.env.GOOGLE_APPLICATION_CREDENTIALS = saved;
      await rm(folder, { recursive: true, force: true });
    }
  });

  it('fails with a clear error, holding no secret, when no project is known', async () => {
    const { project_id: _project, ...withoutProject } = key;
    const call = vertexAuthorizer(settingsOf(withoutProject))({ ...request, url: `${emulator.url}/v1/projects/${PROJECT_FROM_CREDENTIALS}/locations/us-east5/x` });
    await expect(call).rejects.toThrow(UpstreamUnavailableError);
    await expect(call).rejects.toThrow(/set the connection's project \(VERTEX_PROJECT for the built-in connection\) or GOOGLE_CLOUD_PROJECT/);
  });

  it('fails as the connection\'s problem, holding no secret, when the token endpoint refuses the credential', async () => {
    const untrusted = { ...key, client_email: 'stranger@emulated-project.iam.gserviceaccount.com' };
    const error = (await vertexAuthorizer(settingsOf(untrusted))(request).catch((thrown: unknown) => thrown)) as Error;
    expect(error).toBeInstanceOf(UpstreamUnavailableError);
    expect(error.message).toContain('cannot get a Google access token (the token endpoint answered 400: invalid_grant)');
    expect(error.message).not.toContain('PRIVATE KEY');
    // Named after the connection that made the call, through the adapter.
    const through = (await new VertexChatAdapter().chat(targetOf(GEMINI, settingsOf(untrusted)), { model: GEMINI, messages: [{ role: 'user', content: 'Hi' }] }, OPTIONS).catch((thrown: unknown) => thrown)) as UpstreamUnavailableError;
    expect(through).toBeInstanceOf(UpstreamUnavailableError);
    expect(through.provider).toBe('vertex-test');
  });

  it('chats with Claude through rawPredict, a scripted tool call included', async () => {
    emulator.script(CLAUDE, [{ toolCall: { name: 'get_weather', arguments: { city: 'Paris' } } }]);
    const tools = [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, additionalProperties: false } } }];
    const completion = await new VertexChatAdapter().chat(targetOf(CLAUDE), { model: CLAUDE, max_tokens: 100, messages: [{ role: 'user', content: 'Weather in Paris?' }], tools }, OPTIONS);
    expect(completion.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { tool_calls: [{ function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] } });
    const upstream = emulator.requests.at(-1)!;
    expect(upstream.path).toBe('/v1/projects/emulated-project/locations/us-east5/publishers/anthropic/models/claude-sonnet-4-5@20250929:rawPredict');
    expect(upstream.body).toMatchObject({ anthropic_version: 'vertex-2023-10-16' });
    expect(upstream.body).not.toHaveProperty('model');
  });

  it('streams Gemini through streamGenerateContent, the tools\' schemas cleaned, usage on the last chunk', async () => {
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { $schema: 'x', type: 'object', additionalProperties: false, properties: { q: { anyOf: [{ type: 'string' }, { type: 'null' }] } } } } }];
    const stream = await new VertexChatAdapter().stream(targetOf(GEMINI, settingsOf(key, 'my-project')), { model: GEMINI, messages: [{ role: 'user', content: 'Say hello' }], tools }, OPTIONS);
    const chunks: UpstreamChatChunk[] = [];
    for await (const chunk of chunksOf(stream)) chunks.push(chunk);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe('Hello from the emulator. You said: Say hello');
    expect(chunks.at(-1)?.usage?.completion_tokens).toBeGreaterThan(0);
    const upstream = emulator.requests.at(-1)!;
    expect(upstream.path).toBe('/v1/projects/my-project/locations/us-east5/publishers/google/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(upstream.headers.authorization).toMatch(/^Bearer ya29\./);
    expect((upstream.body as { tools: Array<{ functionDeclarations: Array<{ parameters: unknown }> }> }).tools[0].functionDeclarations[0].parameters).toEqual({ type: 'object', properties: { q: { type: 'string', nullable: true } } });
  });

  it('sends partner models to the OpenAI-compatible endpoint', async () => {
    const model = 'meta/llama-3.3-70b-instruct-maas';
    const completion = await new VertexChatAdapter().chat(targetOf(model), { model, messages: [{ role: 'user', content: 'Say hello' }] }, OPTIONS);
    expect(completion.choices[0].message.content).toBe('Hello from the emulator. You said: Say hello');
    expect(emulator.requests.at(-1)!.path).toBe('/v1/projects/emulated-project/locations/us-east5/endpoints/openapi/chat/completions');
  });

  it('embeds through predict, usage from the token counts', async () => {
    const result = await new VertexEmbeddingsAdapter().embed(targetOf('text-embedding-005'), { model: 'text-embedding-005', input: ['one two three', 'four'], dimensions: 16 }, OPTIONS);
    expect(result.embeddings.map((vector) => vector.length)).toEqual([16, 16]);
    expect(result.usage).toEqual({ prompt_tokens: 4, total_tokens: 4 });
  });
});
