import { parseModelControls, requestControls } from './controls';
import { startEmulator, type RunningEmulator } from './emulator';

// Expected numbers are computed from the documented rule: a token is a
// whitespace-separated word; prompt = 2 + sum(words(message) + 4); completion = reply words.
const countWords = (text: string): number => text.split(/\s+/).filter((w) => w !== '').length;
const PREFIX = 'Hello from the emulator. You said:';

interface ChatResponse {
  id: string;
  object: string;
  created: number;
  model: string;
  choices: {
    index: number;
    message: { role: string; content: string; refusal: null; annotations: unknown[] };
    logprobs: null;
    finish_reason: string;
  }[];
  usage: {
    prompt_tokens: number;
    completion_tokens: number;
    total_tokens: number;
    prompt_tokens_details: Record<string, number>;
    completion_tokens_details: Record<string, number>;
  };
  service_tier: string;
  system_fingerprint: string;
}

interface Chunk {
  id: string;
  object: string;
  created: number;
  model: string;
  system_fingerprint: string;
  choices: { index: number; delta: { role?: string; content?: string; refusal?: null }; logprobs: null; finish_reason: string | null }[];
  usage?: ChatResponse['usage'] | null;
}

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
}

interface EmbeddingsResponse {
  object: string;
  data: { object: string; index: number; embedding: number[] }[];
  model: string;
  usage: { prompt_tokens: number; total_tokens: number };
}

let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
});

afterAll(async () => {
  await emulator.close();
});

function post(path: string, body: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${emulator.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

/** Polls until the check passes, for at most `timeoutMs`; answers whether it did. */
async function until(check: () => boolean, timeoutMs = 5_000): Promise<boolean> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

/** The newest recorded request whose body has this first message. */
const recordedWith = (content: string) => emulator.requests.findLast((r) => (r.body as { messages?: Array<{ content?: string }> } | undefined)?.messages?.[0]?.content === content);

async function chat(body: unknown, headers?: Record<string, string>): Promise<ChatResponse> {
  const res = await post('/v1/chat/completions', body, headers);
  expect(res.status).toBe(200);
  return (await res.json()) as ChatResponse;
}

/** The `data:` payloads of an SSE body, in order. */
function sseData(text: string): string[] {
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .split('\n\n')
    .filter((event) => event !== '')
    .map((event) => {
      expect(event.startsWith('data: ')).toBe(true);
      return event.slice('data: '.length);
    });
}

async function stream(body: Record<string, unknown>, headers?: Record<string, string>): Promise<{ chunks: Chunk[]; last: string }> {
  const res = await post('/v1/chat/completions', { ...body, stream: true }, headers);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const data = sseData(await res.text());
  return { chunks: data.slice(0, -1).map((d) => JSON.parse(d) as Chunk), last: data[data.length - 1] };
}

describe('POST /v1/chat/completions', () => {
  it('returns the OpenAI chat.completion shape with deterministic content and usage', async () => {
    const messages = [
      { role: 'system', content: 'You are a terse assistant.' },
      { role: 'user', content: 'What is the   capital of France?' },
    ];
    const res = await post('/v1/chat/completions', { model: 'gpt-4o-mini', messages });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('application/json');
    const body = (await res.json()) as ChatResponse;

    const content = 'Hello from the emulator. You said: What is the capital of France?';
    const prompt = 2 + (countWords('You are a terse assistant.') + 4) + (countWords('What is the capital of France?') + 4);
    expect(prompt).toBe(2 + 9 + 10);
    expect(body.id).toMatch(/^chatcmpl-[A-Za-z0-9]+$/);
    expect(body.created).toBeGreaterThan(Date.now() / 1000 - 60);
    expect(Number.isInteger(body.created)).toBe(true);
    expect(body).toEqual({
      id: body.id,
      object: 'chat.completion',
      created: body.created,
      model: 'gpt-4o-mini',
      choices: [
        {
          index: 0,
          message: { role: 'assistant', content, refusal: null, annotations: [] },
          logprobs: null,
          finish_reason: 'stop',
        },
      ],
      usage: {
        prompt_tokens: prompt,
        completion_tokens: countWords(content),
        total_tokens: prompt + countWords(content),
        prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
        completion_tokens_details: {
          reasoning_tokens: 0,
          audio_tokens: 0,
          accepted_prediction_tokens: 0,
          rejected_prediction_tokens: 0,
        },
      },
      service_tier: 'default',
      system_fingerprint: 'fp_emulator',
    });
    expect(body.usage.completion_tokens).toBe(12);
  });

  it('echoes the last user message, joining array text parts with a space', async () => {
    const messages = [
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer here' },
      {
        role: 'user',
        content: [
          { type: 'text', text: 'describe' },
          { type: 'image_url', image_url: { url: 'https://example.com/a.png' } },
          { type: 'text', text: 'this picture please' },
        ],
      },
    ];
    const body = await chat({ model: 'm', messages });
    const userText = 'describe this picture please';
    expect(body.choices[0].message.content).toBe(`${PREFIX} ${userText}`);
    const prompt = 2 + (2 + 4) + (3 + 4) + (countWords(userText) + 4);
    expect(body.usage.prompt_tokens).toBe(prompt);
    expect(body.usage.completion_tokens).toBe(countWords(PREFIX) + countWords(userText));
    expect(body.usage.total_tokens).toBe(body.usage.prompt_tokens + body.usage.completion_tokens);
  });

  it('gives unique ids per response', async () => {
    const request = { model: 'm', messages: [{ role: 'user', content: 'hi' }] };
    const [a, b] = await Promise.all([chat(request), chat(request)]);
    expect(a.id).not.toBe(b.id);
    expect(a.choices[0].message.content).toBe(b.choices[0].message.content);
  });

  it('truncates to max_tokens / max_completion_tokens words with finish_reason "length"', async () => {
    const messages = [{ role: 'user', content: 'one two three four five' }];
    const truncated = await chat({ model: 'm', messages, max_tokens: 4 });
    expect(truncated.choices[0].message.content).toBe('Hello from the emulator.');
    expect(truncated.choices[0].finish_reason).toBe('length');
    expect(truncated.usage.completion_tokens).toBe(4);

    const viaNewName = await chat({ model: 'm', messages, max_completion_tokens: 7 });
    expect(viaNewName.choices[0].message.content).toBe(`${PREFIX} one`);
    expect(viaNewName.choices[0].finish_reason).toBe('length');
    expect(viaNewName.usage.completion_tokens).toBe(7);

    // A limit equal to (or above) the reply length does not truncate.
    const exact = await chat({ model: 'm', messages, max_tokens: 11 });
    expect(exact.choices[0].finish_reason).toBe('stop');
    expect(exact.usage.completion_tokens).toBe(11);
  });

  it('returns n identical choices and bills each', async () => {
    const body = await chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }], n: 2 });
    expect(body.choices.map((c) => c.index)).toEqual([0, 1]);
    expect(body.usage.completion_tokens).toBe(2 * 7);
  });

  it.each([
    [{ messages: [{ role: 'user', content: 'hi' }] }, 'model'],
    [{ model: '', messages: [{ role: 'user', content: 'hi' }] }, 'model'],
    [{ model: 'm' }, 'messages'],
    [{ model: 'm', messages: 'hi' }, 'messages'],
    [{ model: 'm', messages: [{ role: 'user', content: 'hi' }], max_tokens: 0 }, 'max_tokens'],
  ])('rejects an invalid request %j with a 400 invalid_request_error', async (body, param) => {
    const res = await post('/v1/chat/completions', body);
    expect(res.status).toBe(400);
    const error = (await res.json()) as ErrorBody;
    expect(error).toEqual({ error: { message: expect.any(String), type: 'invalid_request_error', param, code: null } });
  });
});

describe('streaming chat completions', () => {
  const messages = [{ role: 'user', content: 'stream me some words' }];

  it('streams role, one chunk per word, finish chunk and [DONE]', async () => {
    const expected = await chat({ model: 'gpt-4o', messages });
    const { chunks, last } = await stream({ model: 'gpt-4o', messages });

    expect(last).toBe('[DONE]');
    const ids = new Set(chunks.map((c) => c.id));
    expect(ids.size).toBe(1);
    expect([...ids][0]).toMatch(/^chatcmpl-/);
    for (const chunk of chunks) {
      expect(chunk.object).toBe('chat.completion.chunk');
      expect(chunk.model).toBe('gpt-4o');
      expect(chunk.system_fingerprint).toBe('fp_emulator');
      expect(chunk.created).toBe(chunks[0].created);
      expect(chunk).not.toHaveProperty('usage');
      expect(chunk.choices).toHaveLength(1);
      expect(chunk.choices[0].index).toBe(0);
      expect(chunk.choices[0].logprobs).toBeNull();
    }

    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '', refusal: null });
    expect(chunks[0].choices[0].finish_reason).toBeNull();

    const wordChunks = chunks.slice(1, -1);
    const content = expected.choices[0].message.content;
    expect(wordChunks).toHaveLength(countWords(content));
    expect(wordChunks[0].choices[0].delta.content).toBe('Hello');
    expect(wordChunks[1].choices[0].delta.content).toBe(' from');
    expect(wordChunks.every((c) => c.choices[0].finish_reason === null)).toBe(true);
    expect(chunks.map((c) => c.choices[0].delta.content ?? '').join('')).toBe(content);

    const final = chunks[chunks.length - 1];
    expect(final.choices[0].delta).toEqual({});
    expect(final.choices[0].finish_reason).toBe('stop');
  });

  it('sends usage only in a trailing chunk when include_usage is true', async () => {
    const expected = await chat({ model: 'm', messages, max_tokens: 3 });
    const { chunks, last } = await stream({ model: 'm', messages, max_tokens: 3, stream_options: { include_usage: true } });
    expect(last).toBe('[DONE]');

    const usageChunk = chunks[chunks.length - 1];
    expect(usageChunk.choices).toEqual([]);
    expect(usageChunk.usage).toEqual(expected.usage);
    expect(usageChunk.usage?.completion_tokens).toBe(3);
    for (const chunk of chunks.slice(0, -1)) expect(chunk.usage).toBeNull();

    const finish = chunks[chunks.length - 2];
    expect(finish.choices[0].finish_reason).toBe('length');
    expect(chunks.map((c) => c.choices[0]?.delta.content ?? '').join('')).toBe('Hello from the');

    const withoutUsage = await stream({ model: 'm', messages, stream_options: { include_usage: false } });
    expect(withoutUsage.chunks.every((c) => c.choices.length === 1 && !('usage' in c))).toBe(true);
  });

  it('flushes each event immediately (x-emulator-chunk-delay-ms)', async () => {
    const started = Date.now();
    const res = await post(
      '/v1/chat/completions',
      { model: 'm', messages: [{ role: 'user', content: 'hi' }], stream: true },
      { 'x-emulator-chunk-delay-ms': '80' },
    );
    const reader = res.body!.getReader();
    const first = await reader.read();
    const firstAt = Date.now() - started;
    expect(new TextDecoder().decode(first.value)).toContain('"role":"assistant"');
    let rest = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      rest += new TextDecoder().decode(value);
    }
    const total = Date.now() - started;
    // 1 role + 7 words + finish + [DONE] = 10 events, 9 gaps of 80 ms; the first event must
    // arrive long before the last (no buffering), with room for a loaded CI machine.
    expect(total).toBeGreaterThanOrEqual(9 * 80 - 10);
    expect(firstAt).toBeLessThan(total / 2);
    expect(rest.endsWith('data: [DONE]\n\n')).toBe(true);
  });

  it('applies x-emulator-delay-ms before the first chunk only', async () => {
    const started = Date.now();
    const { last } = await stream({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { 'x-emulator-delay-ms': '150' });
    const elapsed = Date.now() - started;
    expect(last).toBe('[DONE]');
    expect(elapsed).toBeGreaterThanOrEqual(145);
    expect(elapsed).toBeLessThan(1500);
  });
});

describe('POST /v1/embeddings', () => {
  const norm = (v: number[]): number => Math.sqrt(v.reduce((sum, x) => sum + x * x, 0));

  async function embed(body: Record<string, unknown>): Promise<EmbeddingsResponse> {
    const res = await post('/v1/embeddings', body);
    expect(res.status).toBe(200);
    return (await res.json()) as EmbeddingsResponse;
  }

  it('returns 1536-long unit vectors by default, with the OpenAI list shape', async () => {
    const body = await embed({ model: 'text-embedding-3-small', input: ['hello world', 'a b c'] });
    expect(body.object).toBe('list');
    expect(body.model).toBe('text-embedding-3-small');
    expect(body.usage).toEqual({ prompt_tokens: 5, total_tokens: 5 });
    expect(body.data.map((d) => [d.object, d.index])).toEqual([
      ['embedding', 0],
      ['embedding', 1],
    ]);
    for (const item of body.data) {
      expect(item.embedding).toHaveLength(1536);
      expect(norm(item.embedding)).toBeCloseTo(1, 5);
    }
    expect(body.data[0].embedding).not.toEqual(body.data[1].embedding);
  });

  it('uses 3072 for "large" models and honours dimensions', async () => {
    const large = await embed({ model: 'text-embedding-3-large', input: 'hello' });
    expect(large.data[0].embedding).toHaveLength(3072);
    expect(norm(large.data[0].embedding)).toBeCloseTo(1, 5);

    const small = await embed({ model: 'text-embedding-3-large', input: 'hello', dimensions: 256 });
    expect(small.data[0].embedding).toHaveLength(256);
    expect(norm(small.data[0].embedding)).toBeCloseTo(1, 5);
  });

  it('is deterministic: the same text gives the same vector', async () => {
    const a = await embed({ model: 'text-embedding-3-small', input: 'the same text' });
    const b = await embed({ model: 'text-embedding-3-small', input: ['other', 'the same text'] });
    expect(b.data[1].embedding).toEqual(a.data[0].embedding);
    expect(b.data[0].embedding).not.toEqual(a.data[0].embedding);
  });

  it('supports encoding_format base64 (float32 little-endian, same values)', async () => {
    const floats = await embed({ model: 'text-embedding-3-small', input: 'x y', dimensions: 8 });
    const res = await post('/v1/embeddings', { model: 'text-embedding-3-small', input: 'x y', dimensions: 8, encoding_format: 'base64' });
    const body = (await res.json()) as { data: { embedding: string }[] };
    const bytes = Buffer.from(body.data[0].embedding, 'base64');
    const decoded = Array.from(new Float32Array(bytes.buffer, bytes.byteOffset, bytes.byteLength / 4));
    expect(decoded).toEqual(floats.data[0].embedding);
  });

  it('rejects a missing input with 400', async () => {
    const res = await post('/v1/embeddings', { model: 'text-embedding-3-small' });
    expect(res.status).toBe(400);
    expect(((await res.json()) as ErrorBody).error).toMatchObject({ type: 'invalid_request_error', param: 'input' });
  });
});

describe('GET /v1/models', () => {
  it('lists a few models owned by the emulator', async () => {
    const res = await fetch(`${emulator.url}/v1/models`);
    expect(res.status).toBe(200);
    const body = (await res.json()) as { object: string; data: { id: string; object: string; created: number; owned_by: string }[] };
    expect(body.object).toBe('list');
    expect(body.data.length).toBeGreaterThanOrEqual(3);
    for (const model of body.data) {
      expect(model).toEqual({ id: expect.any(String), object: 'model', created: expect.any(Number), owned_by: 'emulator' });
    }
    const one = await fetch(`${emulator.url}/v1/models/${body.data[0].id}`);
    expect(await one.json()).toEqual(body.data[0]);
  });
});

describe('errors and control headers', () => {
  it('answers x-emulator-status: 429 with a rate_limit_error and retry-after', async () => {
    const res = await post('/v1/chat/completions', { model: 'm', messages: [] }, { 'x-emulator-status': '429' });
    expect(res.status).toBe(429);
    expect(res.headers.get('retry-after')).toBe('1');
    const body = (await res.json()) as ErrorBody;
    expect(body.error.type).toBe('rate_limit_error');
    expect(body.error.message).toEqual(expect.any(String));
    expect(body.error).toHaveProperty('param', null);
  });

  it.each([
    [500, 'server_error'],
    [503, 'server_error'],
    [400, 'invalid_request_error'],
  ])('answers x-emulator-status: %d with type %s', async (status, type) => {
    const res = await post('/v1/embeddings', { model: 'm', input: 'x' }, { 'x-emulator-status': String(status) });
    expect(res.status).toBe(status);
    expect(res.headers.get('retry-after')).toBeNull();
    expect(((await res.json()) as ErrorBody).error.type).toBe(type);
  });

  it('waits x-emulator-delay-ms before responding', async () => {
    const started = Date.now();
    await chat({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }, { 'x-emulator-delay-ms': '200' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(195);
  });

  it('survives clients that disconnect during a delay or mid-stream', async () => {
    const during = new AbortController();
    const aborted = fetch(`${emulator.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-emulator-delay-ms': '5000' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'leaving during the delay' }] }),
      signal: during.signal,
    });
    // Recorded, so the delay has begun.
    expect(await until(() => recordedWith('leaving during the delay') !== undefined)).toBe(true);
    during.abort();
    await expect(aborted).rejects.toThrow();

    const midStream = new AbortController();
    const res = await fetch(`${emulator.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-emulator-chunk-delay-ms': '50' },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'a b c d e f g h' }], stream: true }),
      signal: midStream.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    midStream.abort();
    await expect(reader.read()).rejects.toThrow();

    // Both exchanges are over on the emulator's side too before it is asked again.
    expect(await until(() => recordedWith('leaving during the delay')!.ended && recordedWith('a b c d e f g h')!.ended)).toBe(true);
    const after = await chat({ model: 'm', messages: [{ role: 'user', content: 'still alive?' }] });
    expect(after.choices[0].message.content).toBe(`${PREFIX} still alive?`);
  });

  it('returns 404 with an OpenAI error body for unknown paths and methods', async () => {
    const unknown = await post('/v1/nope', {});
    expect(unknown.status).toBe(404);
    expect(await unknown.json()).toEqual({
      error: { message: 'Invalid URL (POST /v1/nope)', type: 'invalid_request_error', param: null, code: null },
    });
    const wrongMethod = await fetch(`${emulator.url}/v1/chat/completions`);
    expect(wrongMethod.status).toBe(404);
  });

  it('returns 400 with an OpenAI error body for malformed JSON', async () => {
    const res = await post('/v1/chat/completions', '{"model": "m", "messages": [');
    expect(res.status).toBe(400);
    const body = (await res.json()) as ErrorBody;
    expect(body.error.type).toBe('invalid_request_error');
    expect(body.error.message).toMatch(/JSON/);
  });
});

describe('model-name controls', () => {
  const messages = [{ role: 'user', content: 'a b c d e' }];

  /** Reads a body until it ends or fails; the text received and whether it failed. */
  async function readAll(res: Response): Promise<{ text: string; failed: boolean }> {
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return { text, failed: false };
        text += decoder.decode(value, { stream: true });
      }
    } catch {
      return { text, failed: true };
    }
  }

  const lastRecorded = (model: string) => emulator.requests.findLast((r) => (r.body as { model?: string } | undefined)?.model === model);

  it('parseModelControls splits off every control suffix, in any order', () => {
    expect(parseModelControls('gpt-4o')).toEqual({ model: 'gpt-4o' });
    expect(parseModelControls('gpt-4o@status=500@delay=10')).toEqual({ model: 'gpt-4o', status: 500, delayMs: 10 });
    expect(parseModelControls('m@no-usage@chunk-delay=25@fail-after=3')).toEqual({ model: 'm', noUsage: true, chunkDelayMs: 25, failAfter: 3 });
    expect(parseModelControls('m@fail-after=0')).toEqual({ model: 'm', failAfter: 0 });
    expect(parseModelControls('whisper-1@heard-seconds=5000')).toEqual({ model: 'whisper-1', heardSeconds: 5000 });
    // Names with their own '@' keep it; only trailing known keys are controls.
    expect(parseModelControls('claude-3-5-sonnet@20240620@status=529')).toEqual({ model: 'claude-3-5-sonnet@20240620', status: 529 });
    expect(parseModelControls('claude-3-5-sonnet@20240620')).toEqual({ model: 'claude-3-5-sonnet@20240620' });
    expect(parseModelControls('m@status=200@delay=x@status=abc')).toEqual({ model: 'm' });
    expect(parseModelControls('m@delay=999999')).toEqual({ model: 'm', delayMs: 60000 });
    expect(parseModelControls('m@status=500@status=429')).toEqual({ model: 'm', status: 429 });
  });

  it('requestControls strips the suffixes from the body model and from Gemini/Azure path segments', () => {
    const body = { model: 'gpt-4o@status=503', messages: [] };
    const fromBody = requestControls('/v1/chat/completions', body);
    expect(fromBody).toEqual({ path: '/v1/chat/completions', body: { model: 'gpt-4o', messages: [] }, controls: { status: 503 } });
    expect(body.model).toBe('gpt-4o@status=503');

    expect(requestControls('/v1beta/models/gemini-2.0-flash@delay=5@no-usage:streamGenerateContent', undefined)).toEqual({
      path: '/v1beta/models/gemini-2.0-flash:streamGenerateContent',
      body: undefined,
      controls: { delayMs: 5, noUsage: true },
    });
    expect(requestControls('/v1beta/models/gemini%40status%3D500:generateContent', {}).path).toBe('/v1beta/models/gemini:generateContent');
    expect(requestControls('/openai/deployments/team/mini@fail-after=2/chat/completions', { messages: [] })).toEqual({
      path: '/openai/deployments/team/mini/chat/completions',
      body: { messages: [] },
      controls: { failAfter: 2 },
    });
    // The path wins over the body for a control present in both.
    expect(requestControls('/openai/deployments/d@status=500/chat/completions', { model: 'x@status=429@delay=3' }).controls).toEqual({ status: 500, delayMs: 3 });
    const untouched = '/v1/models/ft:gpt-4o-mini:org::abc';
    expect(requestControls(untouched, undefined).path).toBe(untouched);
    expect(requestControls('/v1/models/ft:gpt-4o-mini:org::abc@status=500', undefined)).toMatchObject({ path: untouched, controls: { status: 500 } });
  });

  it('@status answers with the format error body, 429 with retry-after', async () => {
    const failed = await post('/v1/chat/completions', { model: 'broken@status=500', messages });
    expect(failed.status).toBe(500);
    const body = (await failed.json()) as ErrorBody;
    expect(body.error.type).toBe('server_error');
    expect(body.error.message).toMatch(/model name/);

    const limited = await post('/v1/embeddings', { model: 'busy@status=429', input: 'x' });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('retry-after')).toBe('1');
    expect(((await limited.json()) as ErrorBody).error.type).toBe('rate_limit_error');

    // Invalid statuses are ignored; the header, when valid, overrides the suffix.
    expect((await post('/v1/chat/completions', { model: 'm@status=200', messages })).status).toBe(200);
    expect((await post('/v1/chat/completions', { model: 'm@status=500', messages }, { 'x-emulator-status': '503' })).status).toBe(503);
  });

  it('@delay waits before responding', async () => {
    const started = Date.now();
    const body = await chat({ model: 'sleepy@delay=200', messages });
    expect(Date.now() - started).toBeGreaterThanOrEqual(195);
    expect(body.model).toBe('sleepy');
  });

  it('@chunk-delay spaces stream events (measured)', async () => {
    const res = await post('/v1/chat/completions', { model: 'slow@chunk-delay=60', messages, stream: true });
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const arrivals: number[] = [];
    let buffer = '';
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      buffer += decoder.decode(value, { stream: true });
      const events = buffer.split('\n\n');
      buffer = events.pop()!;
      for (let i = 0; i < events.length; i++) arrivals.push(Date.now());
    }
    // role + 11 words + finish + [DONE]
    expect(arrivals).toHaveLength(14);
    // The emulator spaces events; what a client sees jitters on a loaded machine (a late read
    // shortens the next gap), so check the typical gap and the whole span, not every gap.
    const gaps = arrivals.slice(1).map((at, i) => at - arrivals[i]).sort((a, b) => a - b);
    expect(gaps[Math.floor(gaps.length / 2)]).toBeGreaterThanOrEqual(50);
    expect(arrivals[arrivals.length - 1] - arrivals[0]).toBeGreaterThanOrEqual(13 * 60 - 10);
  });

  it('@fail-after=n destroys the stream after n content chunks (not counted as closedEarly)', async () => {
    const res = await post('/v1/chat/completions', { model: 'flaky@fail-after=2', messages, stream: true, stream_options: { include_usage: true } });
    expect(res.status).toBe(200);
    const { text, failed } = await readAll(res);
    expect(failed).toBe(true);
    const events = text.split('\n\n').filter((event) => event !== '');
    expect(events).toHaveLength(3);
    const chunks = events.map((event) => JSON.parse(event.slice('data: '.length)) as Chunk);
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(chunks.slice(1).map((chunk) => chunk.choices[0].delta.content)).toEqual(['Hello', ' from']);
    expect(text).not.toContain('[DONE]');
    expect(chunks[0].model).toBe('flaky');
    const cut = lastRecorded('flaky@fail-after=2')!;
    // Once the emulator has seen its own cut close the connection, the record is final.
    expect(await until(() => cut.ended)).toBe(true);
    expect(cut.closedEarly).toBe(false);

    const zero = await readAll(await post('/v1/chat/completions', { model: 'flaky@fail-after=0', messages, stream: true }));
    expect(zero.failed).toBe(true);
    expect(zero.text.split('\n\n').filter((event) => event !== '')).toHaveLength(1);

    // A stream with exactly n content chunks is cut before its finish chunk.
    const exact = await readAll(await post('/v1/chat/completions', { model: 'flaky@fail-after=11', messages, stream: true }));
    expect(exact.failed).toBe(true);
    expect(exact.text).not.toContain('"finish_reason":"stop"');

    // Non-streaming responses are not affected; the emulator keeps serving.
    const whole = await chat({ model: 'flaky@fail-after=1', messages });
    expect(whole.choices[0].message.content).toBe(`${PREFIX} a b c d e`);
  });

  it('@no-usage omits usage, even when a stream asks for it', async () => {
    const body = (await (await post('/v1/chat/completions', { model: 'quiet@no-usage', messages })).json()) as Record<string, unknown>;
    expect(body).not.toHaveProperty('usage');
    expect(body.model).toBe('quiet');

    const { chunks, last } = await stream({ model: 'quiet@no-usage', messages, stream_options: { include_usage: true } });
    expect(last).toBe('[DONE]');
    expect(chunks.every((chunk) => chunk.choices.length === 1 && !('usage' in chunk))).toBe(true);
    expect(chunks[chunks.length - 1].choices[0].finish_reason).toBe('stop');

    const embedding = (await (await post('/v1/embeddings', { model: 'text-embedding-3-small@no-usage', input: 'x' })).json()) as Record<string, unknown>;
    expect(embedding).not.toHaveProperty('usage');
    expect(embedding.model).toBe('text-embedding-3-small');
  });

  it('reports the model without suffixes while recording the request as sent', async () => {
    const body = await chat({ model: 'gpt-4o-mini@delay=1@chunk-delay=1', messages });
    expect(body.model).toBe('gpt-4o-mini');
    const { chunks } = await stream({ model: 'gpt-4o-mini@chunk-delay=1', messages });
    expect(chunks.every((chunk) => chunk.model === 'gpt-4o-mini')).toBe(true);
    expect(lastRecorded('gpt-4o-mini@chunk-delay=1')).toBeDefined();
  });

  it('applies to the Anthropic, Gemini and Azure formats too', async () => {
    const anthropic = await post('/v1/messages', { model: 'claude@status=529', max_tokens: 10, messages }, { 'x-api-key': 'k' });
    expect(anthropic.status).toBe(529);
    const gemini = await post('/v1beta/models/gemini-2.0-flash@status=503:generateContent', { contents: [{ parts: [{ text: 'hi' }] }] });
    expect(gemini.status).toBe(503);
    const azure = await post('/openai/deployments/my-deployment@status=500/chat/completions?api-version=2024-10-21', { messages });
    expect(azure.status).toBe(500);

    const started = Date.now();
    const delayed = await post('/openai/deployments/my-deployment@delay=100@no-usage/chat/completions?api-version=2024-10-21', { messages });
    expect(Date.now() - started).toBeGreaterThanOrEqual(95);
    expect(delayed.status).toBe(200);
    const azureBody = (await delayed.json()) as Record<string, unknown>;
    expect(azureBody.model).toBe('my-deployment');
    expect(azureBody).not.toHaveProperty('usage');
  });
});

describe('closedEarly', () => {
  it('is false for completed responses and becomes true when the client leaves mid-stream', async () => {
    await chat({ model: 'complete-me', messages: [{ role: 'user', content: 'hi' }] });
    const done = emulator.requests.findLast((r) => (r.body as { model?: string } | undefined)?.model === 'complete-me')!;
    expect(done.closedEarly).toBe(false);

    const abort = new AbortController();
    const res = await fetch(`${emulator.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'leave-me@chunk-delay=50', messages: [{ role: 'user', content: 'a b c d e f' }], stream: true }),
      signal: abort.signal,
    });
    const reader = res.body!.getReader();
    await reader.read();
    const entry = emulator.requests.findLast((r) => (r.body as { model?: string } | undefined)?.model === 'leave-me@chunk-delay=50')!;
    expect(entry.closedEarly).toBe(false);
    abort.abort();
    await expect(reader.read()).rejects.toThrow();
    for (let i = 0; i < 50 && !entry.closedEarly; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(entry.closedEarly).toBe(true);
  });

  it('is true when the client leaves during a delay', async () => {
    const abort = new AbortController();
    const pending = fetch(`${emulator.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-emulator-delay-ms': '5000' },
      body: JSON.stringify({ model: 'impatient', messages: [{ role: 'user', content: 'x' }] }),
      signal: abort.signal,
    });
    const recorded = () => emulator.requests.findLast((r) => (r.body as { model?: string } | undefined)?.model === 'impatient');
    // Recorded, so the delay has begun.
    expect(await until(() => recorded() !== undefined)).toBe(true);
    abort.abort();
    await expect(pending).rejects.toThrow();
    const entry = recorded()!;
    for (let i = 0; i < 50 && !entry.closedEarly; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(entry.closedEarly).toBe(true);
  });
});

describe('apiKey option', () => {
  let secured: RunningEmulator;
  beforeAll(async () => {
    secured = await startEmulator({ apiKey: 'sk-test' });
  });
  afterAll(() => secured.close());

  const request = (headers: Record<string, string>): Promise<Response> =>
    fetch(`${secured.url}/v1/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...headers },
      body: JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }),
    });

  it('rejects requests without the key, or with a wrong one, with 401', async () => {
    const missing = await request({});
    expect(missing.status).toBe(401);
    expect(((await missing.json()) as ErrorBody).error.type).toBe('invalid_request_error');

    const wrong = await request({ authorization: 'Bearer sk-wrong' });
    expect(wrong.status).toBe(401);
    expect(((await wrong.json()) as ErrorBody).error.code).toBe('invalid_api_key');
  });

  it('accepts requests with the right bearer key', async () => {
    const ok = await request({ authorization: 'Bearer sk-test' });
    expect(ok.status).toBe(200);
  });
});

describe('request recording', () => {
  it('records method, path, lower-cased headers and the parsed body, newest last', async () => {
    await post('/v1/chat/completions?api-version=1', { model: 'rec', messages: [{ role: 'user', content: 'hi' }] }, { 'X-Custom-Header': 'Yes' });
    const last = emulator.requests[emulator.requests.length - 1];
    expect(last.method).toBe('POST');
    expect(last.path).toBe('/v1/chat/completions?api-version=1');
    expect(last.headers['x-custom-header']).toBe('Yes');
    expect(last.headers['content-type']).toBe('application/json');
    expect(last.body).toEqual({ model: 'rec', messages: [{ role: 'user', content: 'hi' }] });

    await fetch(`${emulator.url}/v1/models`);
    const get = emulator.requests[emulator.requests.length - 1];
    expect(get).toMatchObject({ method: 'GET', path: '/v1/models', body: undefined });
  });

  it('keeps only the last 1000 requests', async () => {
    for (let batch = 0; batch < 21; batch++) {
      await Promise.all(
        Array.from({ length: 50 }, (_, i) => fetch(`${emulator.url}/v1/models?n=${batch * 50 + i}`).then((r) => r.arrayBuffer())),
      );
    }
    expect(emulator.requests).toHaveLength(1000);
    const paths = new Set(emulator.requests.map((r) => r.path));
    expect(paths.has('/v1/models?n=1049')).toBe(true);
    expect(paths.has('/v1/models?n=49')).toBe(false);
  });
});

describe('close()', () => {
  it('resolves promptly even with idle keep-alive connections', async () => {
    const local = await startEmulator();
    const res = await fetch(`${local.url}/v1/models`);
    await res.arrayBuffer();
    const started = Date.now();
    await local.close();
    expect(Date.now() - started).toBeLessThan(1000);
  });
});

describe('an emulator without some routes', () => {
  it('answers a route it was started without as an unknown path, and still serves the others', async () => {
    const emulator = await startEmulator({ withoutRoutes: ['POST /v1/responses'] });
    try {
      const post = (path: string, body: unknown) => fetch(`${emulator.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
      const responses = await post('/v1/responses', { model: 'm', input: 'hi' });
      expect(responses.status).toBe(404);
      expect(await responses.json()).toEqual({ error: { message: 'Invalid URL (POST /v1/responses)', type: 'invalid_request_error', param: null, code: null } });
      const chat = await post('/v1/chat/completions', { model: 'm', messages: [{ role: 'user', content: 'hi' }] });
      expect(chat.status).toBe(200);
      expect(emulator.requests.map((request) => request.path)).toEqual(['/v1/responses', '/v1/chat/completions']);
    } finally {
      await emulator.close();
    }
  });
});
