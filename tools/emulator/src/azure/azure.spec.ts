import { startEmulator, type RunningEmulator } from '../emulator';
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
