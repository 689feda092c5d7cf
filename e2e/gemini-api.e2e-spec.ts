import path from 'node:path';
import { createGoogleGenerativeAI } from '@ai-sdk/google';
import { ApiError, GoogleGenAI, Type, type Content, type GenerateContentResponse } from '@google/genai';
import { embed, generateText, jsonSchema, streamText, tool } from 'ai';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

type WithMeta = { meta?: { usage?: { credits_used: number; usd_spent: number } } };
/** Credits of a request to a model priced $0.15 / $0.60 per million tokens, at 2,000,000 credits per USD. */
const creditsFor = (prompt: number, completion: number) => (prompt * 300_000 + completion * 1_200_000) / 1e6;
const PROMPT = 'Count the words in this sentence';
const REPLY = `Hello from the emulator. You said: ${PROMPT}`;
const weatherTools = [{ functionDeclarations: [{ name: 'get_weather', description: 'The weather in a city', parameters: { type: Type.OBJECT, properties: { location: { type: Type.STRING } }, required: ['location'] } }] }];

/**
 * A `@google/genai` client of the gateway. The SDK sends through Undici's global dispatcher
 * unless given a fetch of its own, and Jest's sandbox has none: it is given the global fetch.
 */
const genAi = (apiKey: string, baseUrl: string) => new GoogleGenAI({ apiKey, httpOptions: { baseUrl, fetch: (input, init) => fetch(input, init) } });

/**
 * Google's Generative Language API through `@google/genai` and `@ai-sdk/google`, against the
 * standalone gateway with every upstream played by the emulator: a Gemini model (its Google
 * source sent the request natively) and gpt-4o-mini (translated to OpenAI's chat), whole and
 * streamed, a function calling round trip, countTokens, embeddings, the model list, errors in
 * Google's shape, the ledger's rows, and hostile bodies and upstreams.
 */
describe("Google's Gemini API, end to end with @google/genai and @ai-sdk/google", () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let ai: GoogleGenAI;
  let key: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/gemini-catalogue.yaml'), BODY_LIMIT: '256kb', ...emulatedProviders(emulator.url) });
    ({ key } = await harness.paidKey(20_000_000));
    ai = genAi(key, harness.gateway);
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  /** A Gemini route's JSON answer as sent (the SDK keeps only Google's own fields, not `meta`). */
  const postJson = async <T>(pathname: string, body: unknown, apiKey = key): Promise<T & WithMeta> => {
    const response = await fetch(`${harness.gateway}${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': apiKey }, body: JSON.stringify(body) });
    expect(response.status).toBe(200);
    return (await response.json()) as T & WithMeta;
  };
  type Usage = { usageMetadata: { promptTokenCount: number; candidatesTokenCount: number } };
  const turn = { contents: [{ role: 'user', parts: [{ text: PROMPT }] }] };

  /** The path of the emulator's newest request (what the gateway sent upstream), and its body. */
  const lastUpstream = () => emulator.requests.at(-1)!;
  const UPSTREAM_OF = { gemini: /^\/v1beta\/models\/gemini-test:(generateContent|streamGenerateContent\?alt=sse)$/, 'gpt-4o-mini': /^\/v1\/chat\/completions$/ };

  it.each([
    ['gemini', 'google/gemini-test'],
    ['gpt-4o-mini', 'openai/gpt-4o-mini'],
  ] as const)('answers generateContent on %s in Google\'s shape, priced from the catalogue', async (model, catalogueId) => {
    const answer = (await ai.models.generateContent({ model, contents: PROMPT, config: { systemInstruction: 'Be brief.', temperature: 0.2, maxOutputTokens: 200 } })) as GenerateContentResponse & WithMeta;
    expect(answer.text).toBe(REPLY);
    expect(answer.candidates?.[0]).toMatchObject({ content: { role: 'model' }, finishReason: 'STOP' });
    expect(answer.modelVersion).toBe(catalogueId);
    const { promptTokenCount, candidatesTokenCount, totalTokenCount } = answer.usageMetadata!;
    expect(candidatesTokenCount).toBe(REPLY.split(' ').length);
    expect(totalTokenCount).toBe(promptTokenCount! + candidatesTokenCount!);
    // Native on the Google source: the request reached it in Google's format; translated elsewhere.
    const upstream = lastUpstream();
    expect(upstream.path).toMatch(UPSTREAM_OF[model]);
    if (model === 'gemini') expect(upstream.body).toMatchObject({ systemInstruction: { parts: [{ text: 'Be brief.' }] }, generationConfig: { temperature: 0.2, maxOutputTokens: 200 } });
    else expect(upstream.body).toMatchObject({ messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: PROMPT }], max_tokens: 200, temperature: 0.2 });
    const raw = await postJson<Usage>(`/v1beta/models/${model}:generateContent`, turn);
    expect(raw.meta?.usage?.credits_used).toBe(creditsFor(raw.usageMetadata.promptTokenCount, raw.usageMetadata.candidatesTokenCount));
  });

  it.each(['gemini', 'gpt-4o-mini'] as const)('streams generateContentStream on %s to the same text, the usage on the last response', async (model) => {
    let text = '';
    let last: GenerateContentResponse | undefined;
    let responses = 0;
    for await (const response of await ai.models.generateContentStream({ model, contents: PROMPT })) {
      text += response.text ?? '';
      last = response;
      responses += 1;
    }
    expect(text).toBe(REPLY);
    expect(responses).toBeGreaterThan(2);
    expect(last?.candidates?.[0]?.finishReason).toBe('STOP');
    expect(last?.usageMetadata?.candidatesTokenCount).toBe(REPLY.split(' ').length);
    expect(lastUpstream().path).toMatch(model === 'gemini' ? /:streamGenerateContent\?alt=sse$/ : /^\/v1\/chat\/completions$/);
  });

  it.each(['gemini', 'gpt-4o-mini'])('streams on %s without alt=sse as one JSON array, as Google does, meta.usage on its last element', async (model) => {
    const response = await fetch(`${harness.gateway}/v1beta/models/${model}:streamGenerateContent`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': key }, body: JSON.stringify(turn) });
    expect(response.headers.get('content-type')).toBe('application/json; charset=utf-8');
    const elements = (await response.json()) as Array<Usage & WithMeta & { candidates: Array<{ content: { parts: Array<{ text?: string }> } }> }>;
    expect(elements.map((element) => element.candidates[0].content.parts.map((part) => part.text ?? '').join('')).join('')).toBe(REPLY);
    const last = elements.at(-1)!;
    expect(last.meta?.usage?.credits_used).toBe(creditsFor(last.usageMetadata.promptTokenCount, last.usageMetadata.candidatesTokenCount));
  });

  it.each(['gemini', 'gpt-4o-mini'] as const)('runs a function calling round trip on %s', async (model) => {
    const question: Content = { role: 'user', parts: [{ text: 'What is the weather in Paris?' }] };
    const call = await ai.models.generateContent({ model, contents: [question], config: { tools: weatherTools } });
    expect(call.functionCalls).toEqual([expect.objectContaining({ name: 'get_weather', args: { location: 'Paris' } })]);
    const answer = await ai.models.generateContent({
      model,
      contents: [question, call.candidates![0].content!, { role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { output: 'Sunny, 21 degrees' } } }] }],
      config: { tools: weatherTools },
    });
    expect(answer.text).toContain('Sunny, 21 degrees');
    const upstream = lastUpstream().body as Record<string, unknown>;
    if (model === 'gemini') expect(upstream.contents).toEqual([question, call.candidates![0].content, expect.objectContaining({ role: 'user' })]);
    else expect((upstream.messages as Array<{ role: string }>).map((message) => message.role)).toEqual(['user', 'assistant', 'tool']);
  });

  it('counts tokens on both models for free, and embeds one and many texts natively and translated', async () => {
    const { key: ownKey } = await harness.paidKey(1_000);
    const own = genAi(ownKey, harness.gateway);
    for (const model of ['gemini', 'gpt-4o-mini']) {
      const short = await own.models.countTokens({ model, contents: PROMPT });
      const long = await own.models.countTokens({ model, contents: `${PROMPT}, and then some more words` });
      expect(short.totalTokens).toBeGreaterThan(0);
      expect(long.totalTokens).toBeGreaterThan(short.totalTokens!);
    }
    expect(await harness.balance(ownKey)).toBe(1_000);

    for (const [model, upstream] of [
      ['gemini-embed', /^\/v1beta\/models\/gemini-embedding:batchEmbedContents$/],
      ['text-embedding-3-small', /^\/v1\/embeddings$/],
    ] as const) {
      const one = await ai.models.embedContent({ model, contents: 'Hello', config: { outputDimensionality: 8 } });
      expect(one.embeddings).toEqual([{ values: expect.any(Array) }]);
      expect(one.embeddings![0].values).toHaveLength(8);
      const many = await ai.models.embedContent({ model, contents: ['Hello', 'World'], config: { outputDimensionality: 8 } });
      expect(many.embeddings).toHaveLength(2);
      expect(many.embeddings![0].values).toEqual(one.embeddings![0].values);
      expect(lastUpstream().path).toMatch(upstream);
    }
  });

  it("lists and reads models in Google's shape, a page at a time", async () => {
    const names: string[] = [];
    const pager = await ai.models.list({ config: { pageSize: 2 } });
    for await (const model of pager) names.push(model.name!);
    expect(names).toEqual(expect.arrayContaining(['models/google/gemini-test', 'models/openai/gpt-4o-mini', 'models/google/gemini-embedding-test']));
    expect(new Set(names).size).toBe(names.length);
    const model = await ai.models.get({ model: 'gemini' });
    expect(model).toMatchObject({ name: 'models/google/gemini-test', displayName: 'Gemini test', inputTokenLimit: 1_000_000, outputTokenLimit: 8192, supportedActions: ['generateContent', 'streamGenerateContent', 'countTokens'] });
  });

  it('works with @ai-sdk/google: generateText, streamText, a tool call and embed', async () => {
    const google = createGoogleGenerativeAI({ baseURL: `${harness.gateway}/v1beta`, apiKey: key });
    // An id with a slash is sent as the path itself (/v1beta/google/gemini-test:generateContent).
    for (const model of ['google/gemini-test', 'gpt-4o-mini']) {
      const whole = await generateText({ model: google(model), prompt: PROMPT });
      expect(whole.text).toBe(REPLY);
      expect(whole.usage.outputTokens).toBe(REPLY.split(' ').length);
      const streamed = streamText({ model: google(model), prompt: PROMPT });
      let text = '';
      for await (const delta of streamed.textStream) text += delta;
      expect(text).toBe(REPLY);
      const called = await generateText({
        model: google(model),
        prompt: 'What is the weather in Paris?',
        tools: { get_weather: tool({ description: 'The weather in a city', inputSchema: jsonSchema<{ location: string }>({ type: 'object', properties: { location: { type: 'string' } }, required: ['location'] }) }) },
      });
      expect(called.toolCalls.map((call) => [call.toolName, call.input])).toEqual([['get_weather', { location: 'Paris' }]]);
    }
    const embedded = await embed({ model: google.textEmbeddingModel('text-embedding-3-small'), value: 'Hello' });
    expect(embedded.embedding.length).toBeGreaterThan(0);
  });

  it('takes the key as x-goog-api-key, ?key= or a Bearer token, on both paths', async () => {
    const body = JSON.stringify({ contents: [{ parts: [{ text: PROMPT }] }] });
    const placements: Array<[string, Record<string, string>]> = [
      [`/v1beta/models/gpt-4o-mini:generateContent`, { 'x-goog-api-key': key }],
      [`/v1beta/models/google/gemini-test:generateContent?key=${key}`, {}],
      [`/v1/models/gpt-4o-mini:generateContent`, { authorization: `Bearer ${key}` }],
    ];
    for (const [pathname, headers] of placements) {
      const response = await fetch(`${harness.gateway}${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
      expect([pathname, response.status]).toEqual([pathname, 200]);
      await response.text();
    }
  });

  it("answers errors in Google's shape, which the SDK reads: 400, 401, 404, 429 and a refusal for want of credits", async () => {
    const failure = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error as ApiError);
    const googleError = (error: ApiError | undefined) => JSON.parse(error!.message) as { error: { code: number; message: string; status: string } };

    const invalid = await failure(ai.models.generateContent({ model: 'gpt-4o-mini', contents: [{ role: 'assistant', parts: [{ text: 'x' }] }] }));
    expect(invalid).toBeInstanceOf(ApiError);
    expect(googleError(invalid)).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', message: "Body validation error! contents[0].role: Expected one of 'user', 'model'. Received 'assistant'" }, statusCode: 400 });

    const unauthorized = await failure(genAi('not-a-key', harness.gateway).models.generateContent({ model: 'gemini', contents: PROMPT }));
    expect(unauthorized?.status).toBe(401);
    expect(googleError(unauthorized).error).toMatchObject({ code: 401, status: 'UNAUTHENTICATED', message: expect.stringContaining('"x-goog-api-key: <API_KEY>"') });

    const unknown = await failure(ai.models.generateContent({ model: 'acme/nope', contents: PROMPT }));
    expect(googleError(unknown).error).toMatchObject({ code: 404, status: 'NOT_FOUND', message: expect.stringContaining("no model named 'acme/nope'") });

    const busy = await failure(ai.models.generateContent({ model: 'test/busy-gemini', contents: PROMPT }));
    expect(googleError(busy).error).toMatchObject({ code: 429, status: 'RESOURCE_EXHAUSTED' });

    const { key: broke } = await harness.paidKey(0);
    const refused = await failure(genAi(broke, harness.gateway).models.generateContent({ model: 'gemini', contents: PROMPT }));
    expect(googleError(refused)).toMatchObject({ error: { code: 403, status: 'PERMISSION_DENIED', details: [expect.objectContaining({ reason: 'INSUFFICIENT_QUOTA' })] }, statusCode: 403 });
  });

  it('bills every call through the ledger by what meta.usage says, its rows naming the endpoint', async () => {
    const { key: ownKey, accountId } = await harness.paidKey(1_000_000);
    const native = await postJson<Usage>('/v1beta/models/gemini:generateContent', turn, ownKey);
    const elements = await postJson<Array<WithMeta>>('/v1/models/gpt-4o-mini:streamGenerateContent', turn, ownKey);
    const last = elements.at(-1);
    const embedded = await postJson<unknown>('/v1beta/models/gemini-embed:embedContent', { content: { parts: [{ text: 'Hello' }] } }, ownKey);
    await eventually(async () => (await harness.usageEntries(accountId, 10)).length === 3, 15_000, 100);
    const rows = (await harness.usageEntries(accountId, 10)).map(({ model, endpoint, credits }) => ({ model, endpoint, credits }));
    expect(rows).toEqual(
      expect.arrayContaining([
        { model: 'google/gemini-test', endpoint: 'generateContent', credits: String(native.meta!.usage!.credits_used) },
        { model: 'openai/gpt-4o-mini', endpoint: 'generateContent', credits: String(last!.meta!.usage!.credits_used) },
        { model: 'google/gemini-embedding-test', endpoint: 'embeddings', credits: String(embedded.meta!.usage!.credits_used) },
      ]),
    );
    const spent = native.meta!.usage!.credits_used + last!.meta!.usage!.credits_used + embedded.meta!.usage!.credits_used;
    expect(await harness.balance(ownKey)).toBeCloseTo(1_000_000 - spent, 6);
  });

  it('bounds hostile requests and upstreams: a huge body, deep nesting, a stream that never ends (billed for what it sent)', async () => {
    const post = (pathname: string, body: string) => fetch(`${harness.gateway}${pathname}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-goog-api-key': key }, body });
    const huge = await post('/v1beta/models/gemini:generateContent', JSON.stringify({ contents: [{ parts: [{ text: 'x'.repeat(300 * 1024) }] }] }));
    expect(huge.status).toBe(413);
    expect(await huge.json()).toMatchObject({ error: { code: 413, status: 'INVALID_ARGUMENT' } });
    const deep = await post('/v1beta/models/gemini:generateContent', `{"contents":[{"parts":[{"text":"x"}]}],"tools":[{"functionDeclarations":[{"name":"f","parameters":${'{"a":'.repeat(200)}1${'}'.repeat(200)}}]}]}`);
    expect(deep.status).toBe(400);
    expect(await deep.json()).toMatchObject({ error: { code: 400, status: 'INVALID_ARGUMENT', message: expect.stringContaining('nested too deeply') } });

    const { key: ownKey, accountId } = await harness.paidKey(1_000_000);
    for (const model of ['test/endless-gemini', 'test/endless-mini']) {
      const response = await fetch(`${harness.gateway}/v1beta/models/${model}:streamGenerateContent?alt=sse`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-goog-api-key': ownKey },
        body: JSON.stringify({ contents: [{ parts: [{ text: PROMPT }] }] }),
      });
      expect(response.status).toBe(200);
      const events = (await response.text())
        .split('\r\n\r\n')
        .filter(Boolean)
        .map((event) => JSON.parse(event.slice('data: '.length)) as Record<string, unknown>);
      expect(events.length).toBeGreaterThan(2);
      // Cut at the model's maxStreamSeconds, the failure is Google's error element.
      expect(events.at(-1)).toEqual({ error: { code: 500, status: 'INTERNAL', message: expect.stringMatching(/ran past the gateway's limit of 1 s$/) } });
    }
    // Each is billed for the words it delivered (counted, as the upstream never said).
    await eventually(async () => (await harness.usageEntries(accountId, 10)).length === 2, 10_000, 100);
    for (const { model, units } of await harness.usageEntries(accountId, 10)) expect([model, units!.output_tokens > 0]).toEqual([model, true]);
    expect(await harness.balance(ownKey)).toBeLessThan(1_000_000);
  });
});
