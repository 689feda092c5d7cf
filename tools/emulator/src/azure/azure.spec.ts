import { startEmulator, type RunningEmulator } from '../emulator';
import { emulatedAudio } from '../openai/audio';
import { MISSING_API_VERSION } from './index';

const countWords = (text: string): number => text.split(/\s+/).filter((w) => w !== '').length;
const PREFIX = 'Hello from the emulator. You said:';
const KEY = 'azure-test-key';
const API_VERSION = '2024-10-21';

interface ChatResponse {
  id: string;
  object: string;
  model: string;
  choices: { index: number; message: { role: string; content: string }; finish_reason: string }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
}

interface Chunk {
  object: string;
  model: string;
  choices: { index: number; delta: { role?: string; content?: string }; finish_reason: string | null }[];
  usage?: ChatResponse['usage'] | null;
}

interface AzureError {
  error: { code: string; message: string; param?: string };
}

let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, apiKey: KEY });
});

afterAll(async () => {
  await emulator.close();
});

function post(path: string, body: unknown, headers: Record<string, string> = { 'api-key': KEY }): Promise<Response> {
  return fetch(`${emulator.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

const chatPath = (deployment: string, query = `?api-version=${API_VERSION}`): string => `/openai/deployments/${deployment}/chat/completions${query}`;
const messages = [
  { role: 'system', content: 'Be brief.' },
  { role: 'user', content: 'Hello Azure' },
];
const REPLY = `${PREFIX} Hello Azure`;
const PROMPT = 2 + (2 + 4) + (2 + 4);

describe('Azure OpenAI chat completions', () => {
  it('answers like the OpenAI route, with the deployment as the model', async () => {
    const res = await post(chatPath('my-gpt4o'), { messages, model: 'ignored' });
    expect(res.status).toBe(200);
    const body = (await res.json()) as ChatResponse;
    expect(body).toMatchObject({
      object: 'chat.completion',
      model: 'my-gpt4o',
      choices: [{ index: 0, message: { role: 'assistant', content: REPLY }, finish_reason: 'stop' }],
      usage: { prompt_tokens: PROMPT, completion_tokens: countWords(REPLY), total_tokens: PROMPT + countWords(REPLY) },
    });
    expect(body.id).toMatch(/^chatcmpl-/);
  });

  it('streams like the OpenAI route, usage last when asked for', async () => {
    const res = await post(chatPath('my-gpt4o'), { messages, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const events = (await res.text()).split('\n\n').filter((event) => event !== '');
    expect(events[events.length - 1]).toBe('data: [DONE]');
    const chunks = events.slice(0, -1).map((event) => JSON.parse(event.slice(6)) as Chunk);
    expect(chunks.every((chunk) => chunk.model === 'my-gpt4o' && chunk.object === 'chat.completion.chunk')).toBe(true);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(REPLY);
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: PROMPT, completion_tokens: countWords(REPLY) });
  });

  it('speaks the reply when asked for audio output, as the OpenAI route does', async () => {
    const res = await post(chatPath('my-gpt4o-audio'), { messages, modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { choices: { message: { content: string | null; audio: { data: string; transcript: string } } }[] };
    expect(body.choices[0].message.content).toBeNull();
    expect(body.choices[0].message.audio.transcript).toBe(REPLY);
    expect(Buffer.from(body.choices[0].message.audio.data, 'base64')).toEqual(emulatedAudio(REPLY, 'wav'));
  });

  it('URL-decodes the deployment, which may contain slashes', async () => {
    const res = await post(chatPath('org%2Fmodel-1'), { messages });
    expect(((await res.json()) as ChatResponse).model).toBe('org/model-1');
    const raw = await post(chatPath('org/model-2'), { messages });
    expect(((await raw.json()) as ChatResponse).model).toBe('org/model-2');
  });

  it.each([
    ['no query', ''],
    ['another parameter', '?foo=bar'],
    ['an empty api-version', '?api-version='],
  ])('answers 400 in Azure shape without api-version (%s)', async (_label, query) => {
    const res = await post(chatPath('my-gpt4o', query), { messages });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: MISSING_API_VERSION.code, message: MISSING_API_VERSION.message } });
  });

  it('reports validation errors of the OpenAI handler in Azure shape', async () => {
    const res = await post(chatPath('my-gpt4o'), { max_tokens: 5 });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: { code: '400', message: "Missing required parameter: 'messages'.", param: 'messages' } });
  });

  it('takes the key from api-key only', async () => {
    const missing = await post(chatPath('d'), { messages }, { authorization: `Bearer ${KEY}` });
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as AzureError).error.code).toBe('401');
    const wrong = await post(chatPath('d'), { messages }, { 'api-key': 'nope' });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as AzureError).error.message).toMatch(/^Access denied due to invalid subscription key/);
  });

  it('honours x-emulator-status with Azure error bodies', async () => {
    const res = await post(chatPath('d'), { messages }, { 'api-key': KEY, 'x-emulator-status': '429' });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    expect(((await res.json()) as AzureError).error.code).toBe('429');
  });

  it('answers unknown /openai/ paths 404 "Resource not found"', async () => {
    const res = await post('/openai/deployments/d/completions?api-version=1', { prompt: 'x' });
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: { code: '404', message: 'Resource not found' } });
  });
});

describe('POST /openai/deployments/{deployment}/embeddings', () => {
  const url = (deployment: string) => `/openai/deployments/${deployment}/embeddings?api-version=${API_VERSION}`;
  type Embeddings = { object: string; model: string; data: { object: string; index: number; embedding: number[] | string }[]; usage?: { prompt_tokens: number; total_tokens: number } };

  it('answers in the OpenAI shape, the length following the deployment name, usage = words', async () => {
    const res = await post(url('my-large-embedder'), { input: ['hello there world', 'bye'] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Embeddings;
    expect(body).toMatchObject({ object: 'list', model: 'my-large-embedder', usage: { prompt_tokens: 4, total_tokens: 4 } });
    expect(body.data.map((item) => [item.object, item.index, (item.embedding as number[]).length])).toEqual([
      ['embedding', 0, 3072],
      ['embedding', 1, 3072],
    ]);
    const small = (await (await post(url('embedder'), { input: 'hello', dimensions: 64, encoding_format: 'base64' })).json()) as Embeddings;
    expect(Buffer.from(small.data[0].embedding as string, 'base64').length).toBe(64 * 4);
  });

  it('gives the same vector as the OpenAI route for the same text', async () => {
    const azure = (await (await post(url('embedder'), { input: 'same text', dimensions: 16 })).json()) as Embeddings;
    const openai = await fetch(`${emulator.url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ model: 'x', input: 'same text', dimensions: 16 }),
    });
    expect(azure.data[0].embedding).toEqual(((await openai.json()) as Embeddings).data[0].embedding);
  });

  it('needs api-version and the api-key, and honours model-name controls in the deployment', async () => {
    expect((await post('/openai/deployments/embedder/embeddings', { input: 'x' })).status).toBe(400);
    expect((await post(url('embedder'), { input: 'x' }, { 'api-key': 'wrong' })).status).toBe(401);
    const failed = await post(url('embedder@status=503'), { input: 'x' });
    expect(failed.status).toBe(503);
    expect(((await failed.json()) as AzureError).error.message).toMatch(/@status=/);
    const quiet = (await (await post(url('embedder@no-usage'), { input: 'x' })).json()) as Embeddings;
    expect(quiet.model).toBe('embedder');
    expect(quiet).not.toHaveProperty('usage');
  });
});
