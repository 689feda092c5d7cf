import { chunksOf } from '../transport/chunk-stream.testing';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
// The emulator is a tool project; this spec drives the adapter against it in-process.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startEmulator, type RunningEmulator } from '../../../../tools/emulator/src/emulator';
import type { ChatMessage } from '@igw/contracts';
import type { ProviderTarget, UpstreamChatChunk, UpstreamChatRequest } from '../provider.types';
import { UpstreamHttpError, UpstreamUnavailableError } from '../upstream.errors';
import { GeminiChatAdapter, geminiUrl, GEMINI_DEFAULT_BASE_URL } from './gemini.chat';
import { GeminiTranslationError } from './gemini.translate';

const KEY = 'gemini-test-key';
const OPTIONS = { timeoutMs: 10_000 };
const words = (text: string): number => text.split(/\s+/).filter((w) => w !== '').length;

let emulator: RunningEmulator;
/** A pass-through proxy in front of the emulator that adds `injected` headers (the emulator's control headers). */
let proxy: Server;
let proxyUrl: string;
let injected: Record<string, string> = {};
const adapter = new GeminiChatAdapter();

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, apiKey: KEY });
  proxy = createServer((req, res) => {
    const upstream = httpRequest(`${emulator.url}${req.url ?? '/'}`, { method: req.method, headers: { ...req.headers, ...injected } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    upstream.on('error', () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterEach(() => {
  injected = {};
});

afterAll(async () => {
  proxy.closeAllConnections();
  await new Promise<void>((resolve) => proxy.close(() => resolve()));
  await emulator.close();
});

function target(overrides: Partial<ProviderTarget> = {}): ProviderTarget {
  return { provider: 'google', model: 'gemini-2.5-flash', baseUrl: `${emulator.url}/v1beta`, apiKey: KEY, ...overrides };
}

function chatRequest(messages: ChatMessage[], extra: Partial<UpstreamChatRequest> = {}): UpstreamChatRequest {
  return { model: 'gemini-2.5-flash', messages, ...extra };
}

async function collect(chunks: AsyncIterable<UpstreamChatChunk>): Promise<UpstreamChatChunk[]> {
  const all: UpstreamChatChunk[] = [];
  for await (const chunk of chunks) all.push(chunk);
  return all;
}

const SYSTEM = 'Be brief.';
const USER = 'Hi there, how are you?';
const REPLY = `Hello from the emulator. You said: ${USER}`;
// Emulator rule: 2 + words(systemInstruction) + Σ(words(content) + 4); completion = reply words.
const PROMPT_TOKENS = 2 + words(SYSTEM) + words(USER) + 4;

describe('geminiUrl', () => {
  it('defaults the base URL and tolerates a models/ prefix', () => {
    expect(geminiUrl({ provider: 'google', model: 'models/gemini-2.5-pro', baseUrl: '' }, 'generateContent')).toBe(
      `${GEMINI_DEFAULT_BASE_URL}/models/gemini-2.5-pro:generateContent`,
    );
    expect(geminiUrl({ provider: 'google', model: 'gemini-2.5-pro', baseUrl: 'http://h/v1beta/' }, 'streamGenerateContent')).toBe(
      'http://h/v1beta/models/gemini-2.5-pro:streamGenerateContent',
    );
  });
});

describe('GeminiChatAdapter against the emulator', () => {
  it('answers a chat in the OpenAI shape, sending the key in x-goog-api-key', async () => {
    const completion = await adapter.chat(
      target(),
      chatRequest([
        { role: 'system', content: SYSTEM },
        { role: 'user', content: USER },
      ]),
      OPTIONS,
    );
    expect(completion).toMatchObject({
      object: 'chat.completion',
      model: 'gemini-2.5-flash',
      choices: [{ index: 0, message: { role: 'assistant', content: REPLY }, finish_reason: 'stop' }],
      usage: { prompt_tokens: PROMPT_TOKENS, completion_tokens: words(REPLY), total_tokens: PROMPT_TOKENS + words(REPLY) },
    });
    const recorded = emulator.requests[emulator.requests.length - 1];
    expect(recorded.path).toBe('/v1beta/models/gemini-2.5-flash:generateContent');
    expect(recorded.headers['x-goog-api-key']).toBe(KEY);
    expect(recorded.headers.authorization).toBeUndefined();
    expect(recorded.body).toEqual({ contents: [{ role: 'user', parts: [{ text: USER }] }], systemInstruction: { parts: [{ text: SYSTEM }] } });
  });

  it('streams OpenAI chunks: role first, the words, the finish reason, then usage alone', async () => {
    const chunks = await collect(
      chunksOf(await adapter.stream(
        target(),
        chatRequest([
          { role: 'system', content: SYSTEM },
          { role: 'user', content: USER },
        ]),
        OPTIONS,
      )),
    );
    expect(emulator.requests[emulator.requests.length - 1].path).toBe('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse');
    expect(chunks[0].choices[0].delta.role).toBe('assistant');
    expect(new Set(chunks.map((chunk) => chunk.id)).size).toBe(1);
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(REPLY);
    const finishes = chunks.flatMap((chunk) => chunk.choices.filter((choice) => choice.finish_reason !== null).map((choice) => choice.finish_reason));
    expect(finishes).toEqual(['stop']);
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage).toMatchObject({ prompt_tokens: PROMPT_TOKENS, completion_tokens: words(REPLY), total_tokens: PROMPT_TOKENS + words(REPLY) });
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === undefined)).toBe(true);
  });

  it('truncates at max_tokens with finish_reason length', async () => {
    const completion = await adapter.chat(target(), chatRequest([{ role: 'user', content: USER }], { max_tokens: 3 }), OPTIONS);
    expect(completion.choices[0]).toMatchObject({ message: { content: 'Hello from the' }, finish_reason: 'length' });
    expect(completion.usage?.completion_tokens).toBe(3);
  });

  const weatherTool = {
    type: 'function',
    function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } },
  };

  it('round-trips a tool call: the call, then the tool result named after it', async () => {
    const question: ChatMessage = { role: 'user', content: 'What is the weather in Paris?' };
    const first = await adapter.chat(target(), chatRequest([question], { tools: [weatherTool] }), OPTIONS);
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const toolCalls = first.choices[0].message.tool_calls as Array<{ id: string; type: string; function: { name: string; arguments: string } }>;
    expect(toolCalls).toHaveLength(1);
    expect(toolCalls[0]).toMatchObject({ type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } });
    expect(toolCalls[0].id).toMatch(/^call_/);

    const second = await adapter.chat(
      target(),
      chatRequest([question, first.choices[0].message, { role: 'tool', tool_call_id: toolCalls[0].id, content: '18C and sunny' }], { tools: [weatherTool] }),
      OPTIONS,
    );
    expect(second.choices[0]).toMatchObject({ message: { content: 'Tool said: 18C and sunny' }, finish_reason: 'stop' });
    const sent = emulator.requests[emulator.requests.length - 1].body as { contents: unknown[] };
    expect(sent.contents[2]).toEqual({ role: 'user', parts: [{ functionResponse: { name: 'get_weather', response: { content: '18C and sunny' } } }] });
  });

  it('streams a tool call as one complete tool_calls delta', async () => {
    const chunks = await collect(chunksOf(await adapter.stream(target(), chatRequest([{ role: 'user', content: 'weather?' }], { tools: [weatherTool] }), OPTIONS)));
    const calls = chunks.flatMap((chunk) => chunk.choices.flatMap((choice) => choice.delta.tool_calls ?? []));
    expect(calls).toEqual([{ index: 0, id: expect.stringMatching(/^call_/), type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }]);
    expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean)).toEqual(['tool_calls']);
    expect(chunks[chunks.length - 1].usage?.completion_tokens).toBe(2);
  });

  it('honours tool_choice none', async () => {
    const completion = await adapter.chat(target(), chatRequest([{ role: 'user', content: 'weather?' }], { tools: [weatherTool], tool_choice: 'none' }), OPTIONS);
    expect(completion.choices[0]).toMatchObject({ message: { content: 'Hello from the emulator. You said: weather?' }, finish_reason: 'stop' });
  });

  it('turns search grounding into url_citation annotations', async () => {
    const completion = await adapter.chat(target(), chatRequest([{ role: 'user', content: 'Café news' }], { enable_search: true }), OPTIONS);
    const content = 'Hello from the emulator. You said: Café news';
    expect(completion.choices[0].message).toEqual({
      role: 'assistant',
      content,
      annotations: [
        { type: 'url_citation', url_citation: { start_index: 0, end_index: content.length - 1, title: 'Emulated source', url: 'https://example.com/emulated' } },
      ],
    });
    const chunks = await collect(chunksOf(await adapter.stream(target(), chatRequest([{ role: 'user', content: 'Café news' }], { enable_search: true }), OPTIONS)));
    const annotations = chunks.flatMap((chunk) => (chunk.choices[0]?.delta.annotations as unknown[] | undefined) ?? []);
    expect(annotations).toEqual(completion.choices[0].message.annotations);
    // Each query of the grounding metadata is one web search call, billed per call.
    expect(completion.usage?.web_search_calls).toBe(1);
    expect(chunks.at(-1)!.usage?.web_search_calls).toBe(1);
  });

  it.each([429, 500, 503])('maps an upstream %i to UpstreamHttpError with that status (chat and stream)', async (status) => {
    injected = { 'x-emulator-status': String(status) };
    const request = chatRequest([{ role: 'user', content: 'hi' }]);
    const chat = adapter.chat(target({ baseUrl: `${proxyUrl}/v1beta` }), request, OPTIONS);
    await expect(chat).rejects.toBeInstanceOf(UpstreamHttpError);
    await expect(chat).rejects.toMatchObject({ status, provider: 'google', retryAfterSeconds: status === 429 ? 1 : undefined });
    await expect(adapter.stream(target({ baseUrl: `${proxyUrl}/v1beta` }), request, OPTIONS)).rejects.toMatchObject({ status });
  });

  it('maps a SAFETY finish and logprobs end to end', async () => {
    const completion = await adapter.chat(target(), chatRequest([{ role: 'user', content: 'trigger filter' }], { logprobs: true, top_logprobs: 1 }), OPTIONS);
    expect(completion.choices[0]).toMatchObject({ message: { content: 'Hello from the' }, finish_reason: 'content_filter' });
    const logprobs = completion.choices[0].logprobs as { content: Array<{ token: string; logprob: number; top_logprobs: unknown[] }>; refusal: null };
    expect(logprobs.content.map((entry) => entry.token)).toEqual(['Hello', ' from', ' the']);
    expect(logprobs.content[1]).toEqual({ token: ' from', logprob: -0.11, bytes: [32, 102, 114, 111, 109], top_logprobs: [{ token: ' from', logprob: -0.11, bytes: [32, 102, 114, 111, 109] }] });
    const sent = emulator.requests[emulator.requests.length - 1].body as { generationConfig: unknown };
    expect(sent.generationConfig).toEqual({ responseLogprobs: true, logprobs: 1 });
  });

  it('honours the emulator model-name controls a gateway can send (@status=, @no-usage)', async () => {
    const failing = adapter.chat(target({ model: 'gemini-2.5-flash@status=503' }), chatRequest([{ role: 'user', content: 'hi' }]), OPTIONS);
    await expect(failing).rejects.toMatchObject({ status: 503 });
    const chunks = await collect(chunksOf(await adapter.stream(target({ model: 'gemini-2.5-flash@no-usage' }), chatRequest([{ role: 'user', content: 'hi' }]), OPTIONS)));
    expect(chunks[chunks.length - 1].choices[0].finish_reason).toBe('stop');
    expect(chunks.some((chunk) => chunk.usage !== undefined)).toBe(false);
  });

  it('fails a stream the upstream cuts before its finish reason', async () => {
    const chunks = chunksOf(await adapter.stream(target({ model: 'gemini-2.5-flash@fail-after=2' }), chatRequest([{ role: 'user', content: 'hi' }]), OPTIONS));
    // The connection is cut mid-body: a transport failure, not a short but "complete" answer.
    await expect(collect(chunks)).rejects.toBeInstanceOf(UpstreamUnavailableError);
  });

  it('reports a wrong key as a 401 with Google’s message', async () => {
    await expect(adapter.chat(target({ apiKey: 'wrong' }), chatRequest([{ role: 'user', content: 'hi' }]), OPTIONS)).rejects.toMatchObject({
      status: 401,
      upstreamMessage: 'API key not valid. Please pass a valid API key.',
    });
  });

  it('rejects an untranslatable request before calling the upstream', async () => {
    const before = emulator.requests.length;
    const bad = chatRequest([
      { role: 'user', content: 'q' },
      { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{oops' } }] },
    ]);
    await expect(adapter.chat(target(), bad, OPTIONS)).rejects.toBeInstanceOf(GeminiTranslationError);
    await expect(adapter.stream(target(), bad, OPTIONS)).rejects.toBeInstanceOf(GeminiTranslationError);
    expect(emulator.requests.length).toBe(before);
  });
});
