import { startEmulator, type RunningEmulator } from '../emulator';

// Expected numbers follow the documented rule (generate.ts): a token is a whitespace-separated
// word; promptTokenCount = 2 + words(systemInstruction) + Σ(words(content) + 4).
const countWords = (text: string): number => text.split(/\s+/).filter((w) => w !== '').length;
const PREFIX = 'Hello from the emulator. You said:';
const MODEL = 'gemini-2.5-flash';
const KEY = 'AIza-test';

interface Candidate {
  content: { parts: Array<{ text?: string; functionCall?: { name: string; args: Record<string, unknown> } }>; role: string };
  finishReason?: string;
  index: number;
  groundingMetadata?: {
    webSearchQueries: string[];
    groundingChunks: Array<{ web: { uri: string; title: string } }>;
    groundingSupports: Array<{ segment: { startIndex?: number; endIndex: number; text: string }; groundingChunkIndices: number[] }>;
  };
}

interface GenerateResponse {
  candidates: Candidate[];
  usageMetadata: { promptTokenCount: number; candidatesTokenCount: number; totalTokenCount: number };
  modelVersion: string;
  responseId: string;
}

interface GeminiError {
  error: { code: number; message: string; status: string };
}

let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, apiKey: KEY });
});

afterAll(async () => {
  await emulator.close();
});

function post(path: string, body: unknown, headers: Record<string, string> = { 'x-goog-api-key': KEY }): Promise<Response> {
  return fetch(`${emulator.url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

async function generate(body: unknown, model = MODEL): Promise<GenerateResponse> {
  const res = await post(`/v1beta/models/${model}:generateContent`, body);
  expect(res.status).toBe(200);
  return (await res.json()) as GenerateResponse;
}

function streamEvents(body: unknown, headers?: Record<string, string>): Promise<GenerateResponse[]> {
  return streamEventsFor(MODEL, body, headers);
}

async function streamEventsFor(model: string, body: unknown, headers?: Record<string, string>): Promise<GenerateResponse[]> {
  const res = await post(`/v1beta/models/${model}:streamGenerateContent?alt=sse`, body, { 'x-goog-api-key': KEY, ...headers });
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const text = await res.text();
  expect(text.endsWith('\n\n')).toBe(true);
  return text
    .split('\n\n')
    .filter((event) => event !== '')
    .map((event) => {
      expect(event.startsWith('data: ')).toBe(true);
      return JSON.parse(event.slice(6)) as GenerateResponse;
    });
}

async function expectError(res: Response, status: number, rpcStatus: string): Promise<GeminiError> {
  expect(res.status).toBe(status);
  const body = (await res.json()) as GeminiError;
  expect(body).toEqual({ error: { code: status, message: expect.any(String), status: rpcStatus } });
  return body;
}

const user = (text: string): unknown => ({ role: 'user', parts: [{ text }] });
const weatherTools = [{ functionDeclarations: [{ name: 'get_weather', parameters: { type: 'OBJECT', properties: { location: { type: 'STRING' } }, required: ['location'] } }, { name: 'get_time' }] }];

describe('Gemini generateContent', () => {
  it('echoes the last user text with word-count usage', async () => {
    const body = {
      systemInstruction: { parts: [{ text: 'Be very brief.' }] },
      contents: [user('First  question?'), { role: 'model', parts: [{ text: 'An answer.' }] }, user('Hello   Gemini,\nhow are you?')],
    };
    const response = await generate(body);
    const reply = `${PREFIX} Hello Gemini, how are you?`;
    const prompt = 2 + 3 + (2 + 4) + (2 + 4) + (5 + 4);
    expect(response).toEqual({
      candidates: [{ content: { parts: [{ text: reply }], role: 'model' }, finishReason: 'STOP', index: 0 }],
      usageMetadata: { promptTokenCount: prompt, candidatesTokenCount: countWords(reply), totalTokenCount: prompt + countWords(reply) },
      modelVersion: MODEL,
      responseId: expect.stringMatching(/^[A-Za-z0-9]{22}$/),
    });
  });

  it('truncates at maxOutputTokens with MAX_TOKENS and returns candidateCount candidates', async () => {
    const response = await generate({ contents: [user('one two three')], generationConfig: { maxOutputTokens: 4, candidateCount: 2 } });
    expect(response.candidates).toEqual([0, 1].map((index) => ({ content: { parts: [{ text: 'Hello from the emulator.' }], role: 'model' }, finishReason: 'MAX_TOKENS', index })));
    expect(response.usageMetadata.candidatesTokenCount).toBe(8);
  });

  it('calls the first function when the user asks about the weather', async () => {
    const response = await generate({ contents: [user('What is the Weather like?')], tools: weatherTools });
    expect(response.candidates).toEqual([
      { content: { parts: [{ functionCall: { name: 'get_weather', args: { location: 'Paris' } } }], role: 'model' }, finishReason: 'STOP', index: 0 },
    ]);
    expect(response.usageMetadata.candidatesTokenCount).toBe(2);
  });

  it.each([
    ['ANY without weather calls the first allowed function', { mode: 'ANY', allowedFunctionNames: ['get_time'] }, 'hello', 'get_time'],
    ['ANY without names calls the first declaration', { mode: 'ANY' }, 'hello', 'get_weather'],
    ['NONE never calls', { mode: 'NONE' }, 'weather?', undefined],
    ['AUTO calls on weather', { mode: 'AUTO' }, 'weather?', 'get_weather'],
    ['AUTO answers otherwise', { mode: 'AUTO' }, 'hello', undefined],
  ])('functionCallingConfig: %s', async (_label, config, text, called) => {
    const response = await generate({ contents: [user(text)], tools: weatherTools, toolConfig: { functionCallingConfig: config } });
    expect(response.candidates[0].content.parts[0].functionCall?.name).toBe(called);
  });

  it('answers a functionResponse with "Tool said: <content>" and counts call and response parts', async () => {
    const contents = [
      user('weather in Paris?'),
      { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { location: 'Paris' } } }] },
      { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: '18C and sunny' } } }] },
    ];
    const response = await generate({ contents, tools: weatherTools });
    expect(response.candidates[0].content.parts).toEqual([{ text: 'Tool said: 18C and sunny' }]);
    // user 3 words; call: name + `{"location":"Paris"}` = 2; response: name + 3 words = 4.
    expect(response.usageMetadata.promptTokenCount).toBe(2 + (3 + 4) + (2 + 4) + (4 + 4));
    expect(response.usageMetadata.candidatesTokenCount).toBe(5);
  });

  it('adds grounding metadata covering the whole reply with a googleSearch tool', async () => {
    const response = await generate({ contents: [user('Café news')], tools: [{ googleSearch: {} }] });
    const reply = `${PREFIX} Café news`;
    expect(response.candidates[0].groundingMetadata).toEqual({
      webSearchQueries: ['Café news'],
      groundingChunks: [{ web: { uri: 'https://example.com/emulated', title: 'Emulated source' } }],
      groundingSupports: [{ segment: { endIndex: Buffer.byteLength(reply), text: reply }, groundingChunkIndices: [0] }],
    });
  });

  it('cuts at the earliest stop sequence (STOP) and at "trigger filter" (SAFETY, 3 words)', async () => {
    const stopped = await generate({ contents: [user('alpha beta gamma')], generationConfig: { stopSequences: ['gamma', ' beta'] } });
    expect(stopped.candidates[0]).toMatchObject({ content: { parts: [{ text: `${PREFIX} alpha` }] }, finishReason: 'STOP' });
    expect(stopped.usageMetadata.candidatesTokenCount).toBe(countWords(`${PREFIX} alpha`));
    const filtered = await generate({ contents: [user('please Trigger Filter now')], generationConfig: { maxOutputTokens: 10 } });
    expect(filtered.candidates[0]).toMatchObject({ content: { parts: [{ text: 'Hello from the' }] }, finishReason: 'SAFETY' });
    const both = await generate({ contents: [user('trigger filter')], generationConfig: { maxOutputTokens: 2 } });
    expect(both.candidates[0]).toMatchObject({ content: { parts: [{ text: 'Hello from' }] }, finishReason: 'MAX_TOKENS' });
  });

  it('returns logprobsResult with responseLogprobs', async () => {
    const response = await generate({ contents: [user('x')], generationConfig: { responseLogprobs: true, logprobs: 2, maxOutputTokens: 2 } });
    expect(response.candidates[0]).toMatchObject({
      logprobsResult: {
        chosenCandidates: [
          { token: 'Hello', logProbability: -0.01 },
          { token: ' from', logProbability: -0.11 },
        ],
        topCandidates: [
          {
            candidates: [
              { token: 'Hello', logProbability: -0.01 },
              { token: 'Hello_alt1', logProbability: -1.01 },
            ],
          },
          {
            candidates: [
              { token: ' from', logProbability: -0.11 },
              { token: ' from_alt1', logProbability: -1.11 },
            ],
          },
        ],
      },
    });
    const plain = await generate({ contents: [user('x')] });
    expect(plain.candidates[0]).not.toHaveProperty('logprobsResult');
  });

  it('forces a call in ANY mode even after a function response', async () => {
    const contents = [user('hi'), { role: 'user', parts: [{ functionResponse: { name: 'get_time', response: { content: 'noon' } } }] }];
    const response = await generate({ contents, tools: weatherTools, toolConfig: { functionCallingConfig: { mode: 'ANY' } } });
    expect(response.candidates[0].content.parts[0].functionCall?.name).toBe('get_weather');
  });

  it('honours model-name controls in the path: @status= and @no-usage', async () => {
    await expectError(await post(`/v1beta/models/${MODEL}%40status%3D503:generateContent`, { contents: [user('x')] }), 503, 'UNAVAILABLE');
    const res = await post(`/v1beta/models/${MODEL}@no-usage:generateContent`, { contents: [user('x')] });
    const body = (await res.json()) as GenerateResponse;
    expect(body.modelVersion).toBe(MODEL);
    expect(body).not.toHaveProperty('usageMetadata');
    const events = await streamEventsFor(`${MODEL}@no-usage`, { contents: [user('x')] });
    expect(events.every((event) => !('usageMetadata' in event))).toBe(true);
  });

  it('URL-decodes the model name into modelVersion', async () => {
    expect((await generate({ contents: [user('x')] }, 'gemini%2D2.0-flash')).modelVersion).toBe('gemini-2.0-flash');
  });
});

describe('Gemini streamGenerateContent', () => {
  it('sends one SSE event per word with running usage, the last with finishReason', async () => {
    const events = await streamEvents({ contents: [user('stream me')] });
    const reply = `${PREFIX} stream me`;
    const prompt = 2 + 2 + 4;
    expect(events).toHaveLength(countWords(reply));
    expect(events.map((event) => event.candidates[0].content.parts[0].text).join('')).toBe(reply);
    expect(new Set(events.map((event) => event.responseId)).size).toBe(1);
    events.forEach((event, i) => {
      expect(event.modelVersion).toBe(MODEL);
      expect(event.usageMetadata).toEqual({ promptTokenCount: prompt, candidatesTokenCount: i + 1, totalTokenCount: prompt + i + 1 });
      expect(event.candidates[0].finishReason).toBe(i === events.length - 1 ? 'STOP' : undefined);
    });
  });

  it('streams a function call as a single event', async () => {
    const events = await streamEvents({ contents: [user('weather?')], tools: weatherTools });
    expect(events).toEqual([
      {
        candidates: [{ content: { parts: [{ functionCall: { name: 'get_weather', args: { location: 'Paris' } } }], role: 'model' }, finishReason: 'STOP', index: 0 }],
        usageMetadata: { promptTokenCount: 2 + 1 + 4, candidatesTokenCount: 2, totalTokenCount: 9 },
        modelVersion: MODEL,
        responseId: expect.any(String),
      },
    ]);
  });

  it('puts MAX_TOKENS and grounding on the last event', async () => {
    const events = await streamEvents({ contents: [user('a b c')], tools: [{ google_search: {} }], generationConfig: { maxOutputTokens: 2 } });
    expect(events).toHaveLength(2);
    expect(events[1].candidates[0].finishReason).toBe('MAX_TOKENS');
    expect(events[1].candidates[0].groundingMetadata?.groundingSupports[0].segment).toEqual({ endIndex: 10, text: 'Hello from' });
    expect(events[0].candidates[0].groundingMetadata).toBeUndefined();
  });

  it('streams each word with its own logprobsResult entry', async () => {
    const events = await streamEvents({ contents: [user('x')], generationConfig: { responseLogprobs: true, maxOutputTokens: 3 } });
    expect(events.map((event) => (event.candidates[0] as Candidate & { logprobsResult: unknown }).logprobsResult)).toEqual([
      { topCandidates: [{ candidates: [] }], chosenCandidates: [{ token: 'Hello', logProbability: -0.01 }] },
      { topCandidates: [{ candidates: [] }], chosenCandidates: [{ token: ' from', logProbability: -0.11 }] },
      { topCandidates: [{ candidates: [] }], chosenCandidates: [{ token: ' the', logProbability: -0.21 }] },
    ]);
  });

  it('sends a single finishing event when a stop sequence leaves nothing', async () => {
    const events = await streamEvents({ contents: [user('x')], generationConfig: { stopSequences: ['Hello'] } });
    expect(events).toHaveLength(1);
    expect(events[0].candidates[0]).toMatchObject({ content: { parts: [{ text: '' }] }, finishReason: 'STOP' });
    expect(events[0].usageMetadata.candidatesTokenCount).toBe(0);
  });

  it('cuts the connection after n events with @fail-after=<n>', async () => {
    const res = await post(`/v1beta/models/${MODEL}@fail-after=2:streamGenerateContent?alt=sse`, { contents: [user('x')] });
    expect(res.status).toBe(200);
    await expect(res.text()).rejects.toThrow();
  });

  it('answers 400 without alt=sse', async () => {
    await expectError(await post(`/v1beta/models/${MODEL}:streamGenerateContent`, { contents: [user('x')] }), 400, 'INVALID_ARGUMENT');
    await expectError(await post(`/v1beta/models/${MODEL}:streamGenerateContent?alt=json`, { contents: [user('x')] }), 400, 'INVALID_ARGUMENT');
  });

  it('honours x-emulator-chunk-delay-ms between events', async () => {
    const started = Date.now();
    const events = await streamEvents({ contents: [user('x')] }, { 'x-emulator-chunk-delay-ms': '20' });
    expect(Date.now() - started).toBeGreaterThanOrEqual(20 * (events.length - 1) - 5);
  });
});

describe('Gemini errors and auth', () => {
  it.each<[unknown, string]>([
    [{}, 'missing contents'],
    [{ contents: [] }, 'empty contents'],
    [{ contents: [{ role: 'user', parts: [] }] }, 'empty parts'],
    [{ contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }, 'an OpenAI role'],
    [{ contents: [user('x')], generationConfig: { maxOutputTokens: 0 } }, 'maxOutputTokens 0'],
    [{ contents: [user('x')], generationConfig: { candidateCount: 9 } }, 'candidateCount 9'],
  ])('400 INVALID_ARGUMENT for %j (%s)', async (body) => {
    await expectError(await post(`/v1beta/models/${MODEL}:generateContent`, body), 400, 'INVALID_ARGUMENT');
  });

  it('400 for a body that is not JSON', async () => {
    await expectError(await post(`/v1beta/models/${MODEL}:generateContent`, '{nope'), 400, 'INVALID_ARGUMENT');
  });

  it('404 NOT_FOUND in Gemini shape for unknown /v1beta paths', async () => {
    await expectError(await post('/v1beta/models/x:countTokens', {}), 404, 'NOT_FOUND');
  });

  it.each([
    [429, 'RESOURCE_EXHAUSTED'],
    [500, 'INTERNAL'],
    [503, 'UNAVAILABLE'],
    [400, 'INVALID_ARGUMENT'],
    [401, 'UNAUTHENTICATED'],
  ])('x-emulator-status %i → %s', async (status, rpcStatus) => {
    const res = await post(`/v1beta/models/${MODEL}:streamGenerateContent?alt=sse`, { contents: [user('x')] }, { 'x-goog-api-key': KEY, 'x-emulator-status': String(status) });
    await expectError(res, status, rpcStatus);
    expect(res.headers.get('retry-after')).toBe(status === 429 ? '1' : null);
  });

  it('accepts the key in ?key= and rejects a missing or wrong key with 401 UNAUTHENTICATED', async () => {
    expect((await post(`/v1beta/models/${MODEL}:generateContent?key=${KEY}`, { contents: [user('x')] }, {})).status).toBe(200);
    await expectError(await post(`/v1beta/models/${MODEL}:generateContent`, { contents: [user('x')] }, {}), 401, 'UNAUTHENTICATED');
    await expectError(await post(`/v1beta/models/${MODEL}:generateContent`, { contents: [user('x')] }, { 'x-goog-api-key': 'nope' }), 401, 'UNAUTHENTICATED');
    await expectError(
      await post(`/v1beta/models/${MODEL}:generateContent`, { contents: [user('x')] }, { authorization: `Bearer ${KEY}` }),
      401,
      'UNAUTHENTICATED',
    );
  });
});

describe('POST /v1beta/models/{model}:batchEmbedContents and :embedContent', () => {
  type Batch = { embeddings: Array<{ values: number[] }> };
  const norm = (values: number[]) => Math.sqrt(values.reduce((sum, value) => sum + value * value, 0));
  const request = (text: string, extra: Record<string, unknown> = {}) => ({ model: 'models/text-embedding-large', content: { parts: [{ text }] }, ...extra });

  it('answers one unit vector per request, 3072 long for a "large" model, with no token counts', async () => {
    const res = await post('/v1beta/models/text-embedding-large:batchEmbedContents', { requests: [request('hello world'), request('bye')] });
    expect(res.status).toBe(200);
    const body = (await res.json()) as Batch & Record<string, unknown>;
    expect(Object.keys(body)).toEqual(['embeddings']);
    expect(body.embeddings.map((item) => item.values.length)).toEqual([3072, 3072]);
    expect(norm(body.embeddings[0].values)).toBeCloseTo(1, 5);
    expect(body.embeddings[0].values).not.toEqual(body.embeddings[1].values);
  });

  it('honours outputDimensionality and gives the OpenAI route the same vector for the same text', async () => {
    const gemini = (await (
      await post('/v1beta/models/embedder:batchEmbedContents', { requests: [{ model: 'models/embedder', content: { parts: [{ text: 'same text' }] }, outputDimensionality: 8 }] })
    ).json()) as Batch;
    expect(gemini.embeddings[0].values).toHaveLength(8);
    const openai = await fetch(`${emulator.url}/v1/embeddings`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${KEY}` },
      body: JSON.stringify({ model: 'embedder', input: 'same text', dimensions: 8 }),
    });
    expect(gemini.embeddings[0].values).toEqual(((await openai.json()) as { data: Array<{ embedding: number[] }> }).data[0].embedding);
    const single = (await (await post('/v1beta/models/embedder:embedContent', { content: { parts: [{ text: 'same text' }] }, outputDimensionality: 8 })).json()) as {
      embedding: { values: number[] };
    };
    expect(single.embedding.values).toEqual(gemini.embeddings[0].values);
  });

  it.each([
    [{ requests: [] }, /requests/],
    [{ requests: [{ model: 'models/other', content: { parts: [{ text: 'x' }] } }] }, /requests\[0\]\.model/],
    [{ requests: [{ content: { parts: [{ text: '  ' }] } }] }, /empty/],
    [{ requests: [{ content: { parts: [{ text: 'x' }] }, outputDimensionality: 0 }] }, /outputDimensionality/],
    [{ requests: Array.from({ length: 101 }, () => ({ content: { parts: [{ text: 'x' }] } })) }, /at most 100/],
  ])('refuses %j with a 400 in Google error shape', async (body, message) => {
    const res = await post('/v1beta/models/embedder:batchEmbedContents', body);
    expect(res.status).toBe(400);
    const error = ((await res.json()) as GeminiError).error;
    expect(error.status).toBe('INVALID_ARGUMENT');
    expect(error.message).toMatch(message);
  });

  it('honours model-name controls in the path and needs the key', async () => {
    const failed = await post('/v1beta/models/embedder@status=429:batchEmbedContents', { requests: [request('x', { model: 'models/embedder@status=429' })] });
    expect(failed.status).toBe(429);
    expect(((await failed.json()) as GeminiError).error.status).toBe('RESOURCE_EXHAUSTED');
    const ok = await post('/v1beta/models/embedder%40delay%3D1:batchEmbedContents', { requests: [{ model: 'models/embedder@delay=1', content: { parts: [{ text: 'x' }] } }] });
    expect(ok.status).toBe(200);
    expect((await post('/v1beta/models/embedder:batchEmbedContents', { requests: [request('x')] }, {})).status).toBe(401);
  });
});

describe('Gemini inline documents', () => {
  const pdf = Buffer.from('%PDF-1.4\n%%EOF\n').toString('base64');
  const withPart = (part: unknown): unknown => ({ contents: [{ role: 'user', parts: [part, { text: 'Summarise' }] }] });

  it('takes a PDF and plain text as inlineData or inline_data, and records them as they arrived', async () => {
    for (const part of [{ inlineData: { mimeType: 'application/pdf', data: pdf } }, { inline_data: { mime_type: 'text/plain', data: btoa('notes') } }]) {
      const answer = await generate(withPart(part));
      expect(answer.candidates[0].content.parts).toEqual([{ text: `${PREFIX} Summarise` }]);
      expect(emulator.requests.at(-1)!.body).toEqual(withPart(part));
    }
  });

  it.each<[string, unknown, RegExp]>([
    ['an unsupported MIME type', { inlineData: { mimeType: 'application/zip', data: btoa('PK') } }, /^Unsupported MIME type: application\/zip$/],
    ['data that is not base64', { inlineData: { mimeType: 'application/pdf', data: '%%%' } }, /contents\[0\]\.parts\[0\]\.inline_data\.data' \(TYPE_BYTES\), Base64 decoding failed/],
    ['a PDF that is not one', { inlineData: { mimeType: 'application/pdf', data: btoa('plain words') } }, /^The document has no pages\.$/],
  ])('answers 400 INVALID_ARGUMENT for %s', async (_label, part, message) => {
    const error = await expectError(await post(`/v1beta/models/${MODEL}:generateContent`, withPart(part)), 400, 'INVALID_ARGUMENT');
    expect(error.error.message).toMatch(message);
  });
});
