import { createSign, generateKeyPairSync } from 'node:crypto';
import { startEmulator, type RunningEmulator } from '../emulator';
import type { ServiceAccountKey } from './tokens';

const PROJECT = 'emulated-project';
const CLAUDE = 'claude-sonnet-4-5@20250929';
const GEMINI = 'gemini-2.5-flash';
const SCOPE = 'https://www.googleapis.com/auth/cloud-platform';

let emulator: RunningEmulator;
let account: ServiceAccountKey;

beforeAll(async () => {
  // An API key on the emulator must not stand in the way of Vertex AI's routes: they take tokens.
  emulator = await startEmulator({ apiKey: 'sk-other-formats', vertex: { tokenLifetimeSeconds: 600 } });
  account = emulator.vertex.serviceAccount();
});

afterAll(async () => {
  await emulator.close();
});

const base64url = (value: object) => Buffer.from(JSON.stringify(value)).toString('base64url');

/** A JWT-bearer assertion as Google's client libraries sign it. */
function assertion(claims: Record<string, unknown> = {}, privateKey = account.private_key): string {
  const now = Math.floor(Date.now() / 1000);
  const unsigned = `${base64url({ alg: 'RS256', typ: 'JWT', kid: account.private_key_id })}.${base64url({ iss: account.client_email, scope: SCOPE, aud: 'https://oauth2.googleapis.com/token', iat: now, exp: now + 3600, ...claims })}`;
  return `${unsigned}.${createSign('RSA-SHA256').update(unsigned).sign(privateKey, 'base64url')}`;
}

async function tokenRequest(jwt: string, grant = 'urn:ietf:params:oauth:grant-type:jwt-bearer'): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(account.token_uri, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams({ grant_type: grant, assertion: jwt }).toString() });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

async function token(): Promise<string> {
  const { status, body } = await tokenRequest(assertion());
  expect(status).toBe(200);
  return body.access_token as string;
}

const modelUrl = (publisher: string, model: string, method: string) => `${emulator.url}/v1/projects/${PROJECT}/locations/us-east5/publishers/${publisher}/models/${model}:${method}`;

async function post(url: string, body: unknown, accessToken?: string): Promise<Response> {
  return fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...(accessToken && { authorization: `Bearer ${accessToken}` }) }, body: JSON.stringify(body) });
}

describe('the token endpoint', () => {
  it('issues a bearer token for a service account assertion, for the lifetime the test set', async () => {
    const before = emulator.vertex.tokens.issued;
    const { status, body } = await tokenRequest(assertion());
    expect(status).toBe(200);
    expect(body).toMatchObject({ token_type: 'Bearer', expires_in: 600 });
    expect(body.access_token).toEqual(expect.stringMatching(/^ya29\./));
    expect(emulator.vertex.tokens.issued).toBe(before + 1);
  });

  it.each([
    ['signed by another key', () => assertion({}, generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()), 'Invalid JWT Signature.'],
    ['for another audience', () => assertion({ aud: 'https://example.test/token' }), 'aud must be'],
    ['expired', () => assertion({ iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 }), 'short-lived'],
    ['for an unknown account', () => assertion({ iss: 'someone@else.iam.gserviceaccount.com' }), 'account not found'],
    ['without the cloud-platform scope', () => assertion({ scope: 'https://www.googleapis.com/auth/userinfo.email' }), 'cloud-platform'],
  ])('refuses an assertion %s with an OAuth error', async (_case, jwt, reason) => {
    const { status, body } = await tokenRequest(jwt());
    expect(status).toBe(400);
    expect(body.error).toMatch(/^invalid_(grant|scope)$/);
    expect(body.error_description).toContain(reason);
  });

  it('refuses another grant type', async () => {
    expect(await tokenRequest(assertion(), 'client_credentials')).toMatchObject({ status: 400, body: { error: 'unsupported_grant_type' } });
  });
});

describe('the Vertex AI routes', () => {
  it.each([
    ['no token', undefined, 'missing required authentication credential'],
    ['a token it never issued', 'ya29.forged', 'invalid authentication credentials'],
  ])('answer 401 in Google\'s shape to %s', async (_case, accessToken, message) => {
    const response = await post(modelUrl('google', GEMINI, 'generateContent'), { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }, accessToken);
    expect(response.status).toBe(401);
    const body = (await response.json()) as { error: { code: number; status: string; message: string } };
    expect(body.error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED' });
    expect(body.error.message).toContain(message);
  });

  it('refuses a token once it has expired', async () => {
    emulator.vertex.tokens.setTokenLifetime(0);
    try {
      const expired = await token();
      const response = await post(modelUrl('google', GEMINI, 'generateContent'), { contents: [{ role: 'user', parts: [{ text: 'Hi' }] }] }, expired);
      expect(response.status).toBe(401);
      expect(((await response.json()) as { error: { message: string } }).error.message).toContain('expired');
    } finally {
      emulator.vertex.tokens.setTokenLifetime(600);
    }
  });

  it('answer Gemini generateContent and its SSE stream with the Gemini format', async () => {
    const accessToken = await token();
    const whole = await post(modelUrl('google', GEMINI, 'generateContent'), { contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }] }, accessToken);
    expect(whole.status).toBe(200);
    const answer = (await whole.json()) as { candidates: Array<{ content: { parts: Array<{ text: string }> } }>; usageMetadata: { candidatesTokenCount: number } };
    expect(answer.candidates[0].content.parts[0].text).toBe('Hello from the emulator. You said: Say hello');
    const streamed = await post(`${modelUrl('google', GEMINI, 'streamGenerateContent')}?alt=sse`, { contents: [{ role: 'user', parts: [{ text: 'Say hello' }] }] }, accessToken);
    expect(streamed.headers.get('content-type')).toContain('text/event-stream');
    const events = (await streamed.text()).split('\n').filter((line) => line.startsWith('data: ')).map((line) => JSON.parse(line.slice(6)) as { candidates?: Array<{ finishReason?: string }> });
    expect(events.at(-1)?.candidates?.[0].finishReason).toBe('STOP');
  });

  it('answer Claude rawPredict with the Messages body, the model from the path, and stream it through streamRawPredict', async () => {
    const accessToken = await token();
    const messages = [{ role: 'user', content: 'Say hello' }];
    const whole = await post(modelUrl('anthropic', CLAUDE, 'rawPredict'), { anthropic_version: 'vertex-2023-10-16', max_tokens: 100, messages }, accessToken);
    expect(whole.status).toBe(200);
    expect(await whole.json()).toMatchObject({ type: 'message', model: CLAUDE, content: [{ type: 'text', text: 'Hello from the emulator. You said: Say hello' }], stop_reason: 'end_turn' });
    const streamed = await post(modelUrl('anthropic', CLAUDE, 'streamRawPredict'), { anthropic_version: 'vertex-2023-10-16', max_tokens: 100, messages, stream: true }, accessToken);
    const text = await streamed.text();
    expect(text).toContain('event: message_start');
    expect(text).toContain('event: message_stop');
  });

  it.each([
    ['without anthropic_version', { max_tokens: 100 }, 'anthropic_version'],
    ['with a model in the body', { anthropic_version: 'vertex-2023-10-16', model: CLAUDE, max_tokens: 100 }, 'model'],
  ])('refuse a Claude request %s in Anthropic\'s error shape', async (_case, fields, reason) => {
    const response = await post(modelUrl('anthropic', CLAUDE, 'rawPredict'), { ...fields, messages: [{ role: 'user', content: 'Hi' }] }, await token());
    expect(response.status).toBe(400);
    const body = (await response.json()) as { type: string; error: { type: string; message: string } };
    expect(body).toMatchObject({ type: 'error', error: { type: 'invalid_request_error' } });
    expect(body.error.message).toContain(reason);
  });

  it('answer a scripted tool call on Claude', async () => {
    emulator.script(CLAUDE, [{ toolCall: { name: 'get_weather', arguments: { city: 'Paris' } } }]);
    const tools = [{ name: 'get_weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } }];
    const response = await post(modelUrl('anthropic', CLAUDE, 'rawPredict'), { anthropic_version: 'vertex-2023-10-16', max_tokens: 100, tools, messages: [{ role: 'user', content: 'Weather?' }] }, await token());
    expect(await response.json()).toMatchObject({ stop_reason: 'tool_use', content: [{ type: 'tool_use', name: 'get_weather', input: { city: 'Paris' } }] });
  });

  it('answer text embeddings through predict, with a token count per instance', async () => {
    const response = await post(modelUrl('google', 'text-embedding-005', 'predict'), { instances: [{ content: 'one two three', task_type: 'RETRIEVAL_DOCUMENT' }, { content: 'four' }], parameters: { outputDimensionality: 8 } }, await token());
    expect(response.status).toBe(200);
    const body = (await response.json()) as { predictions: Array<{ embeddings: { values: number[]; statistics: { token_count: number } } }> };
    expect(body.predictions.map((prediction) => prediction.embeddings.statistics.token_count)).toEqual([3, 1]);
    expect(body.predictions[0].embeddings.values).toHaveLength(8);
  });

  it('answer partner models on the OpenAI-compatible endpoint', async () => {
    const response = await post(`${emulator.url}/v1/projects/${PROJECT}/locations/us-central1/endpoints/openapi/chat/completions`, { model: 'meta/llama-3.3-70b-instruct-maas', messages: [{ role: 'user', content: 'Say hello' }] }, await token());
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ object: 'chat.completion', model: 'meta/llama-3.3-70b-instruct-maas', choices: [{ message: { content: 'Hello from the emulator. You said: Say hello' } }] });
  });
});
