import { chunksOf } from '../transport/chunk-stream.testing';
import { createServer, request as httpRequest, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
// The adapter is tested against the repository's emulator, started in-process (as e2e/ does).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startEmulator, type RunningEmulator } from '../../../../tools/emulator/src/emulator';
import type { ProviderTarget, UpstreamChatChunk, UpstreamChatRequest } from '../provider.types';
import { UpstreamHttpError, UpstreamProtocolError } from '../upstream.errors';
import { AnthropicChatAdapter, anthropicMessagesUrl } from './anthropic.chat';
import { ANTHROPIC_DEFAULT_MAX_TOKENS, AnthropicTranslationError } from './anthropic.translate';

const API_KEY = 'sk-ant-test';
const PREFIX = 'Hello from the emulator. You said:';
const OPTIONS = { timeoutMs: 10_000 };
const adapter = new AnthropicChatAdapter();

let emulator: RunningEmulator;
let proxy: HeaderProxy;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, apiKey: API_KEY });
  proxy = await startHeaderProxy(emulator.url);
});

afterAll(async () => {
  await proxy.close();
  await emulator.close();
});

afterEach(() => {
  proxy.headers = {};
});

const target = (fields: Partial<ProviderTarget> = {}): ProviderTarget => ({ provider: 'anthropic', model: 'claude-test', baseUrl: emulator.url, apiKey: API_KEY, ...fields });
const viaProxy = (): ProviderTarget => target({ baseUrl: proxy.url });
const request = (fields: Partial<UpstreamChatRequest> = {}): UpstreamChatRequest => ({
  model: 'claude-test',
  messages: [{ role: 'user', content: 'What is the capital of France?' }],
  ...fields,
});
const weatherTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } };

async function collect(chunks: AsyncIterable<UpstreamChatChunk>): Promise<UpstreamChatChunk[]> {
  const all: UpstreamChatChunk[] = [];
  for await (const chunk of chunks) all.push(chunk);
  return all;
}

async function rejection(promise: Promise<unknown>): Promise<unknown> {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
}

describe('AnthropicChatAdapter.chat', () => {
  it('posts to /v1/messages with the Anthropic headers and returns an OpenAI completion', async () => {
    const completion = await adapter.chat(target(), request({ messages: [{ role: 'system', content: 'Be brief.' }, ...request().messages] }), OPTIONS);

    const sent = emulator.requests[emulator.requests.length - 1];
    expect(sent.path).toBe('/v1/messages');
    expect(sent.headers['x-api-key']).toBe(API_KEY);
    expect(sent.headers['anthropic-version']).toBe('2023-06-01');
    expect(sent.headers['content-type']).toBe('application/json');
    expect(sent.headers.authorization).toBeUndefined();
    expect(sent.body).toEqual({
      model: 'claude-test',
      max_tokens: ANTHROPIC_DEFAULT_MAX_TOKENS,
      system: [{ type: 'text', text: 'Be brief.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is the capital of France?' }] }],
    });

    // prompt = 2 + words(system) + (words(message) + 4) = 2 + 2 + 10
    expect(completion).toEqual({
      id: expect.stringMatching(/^msg_/),
      object: 'chat.completion',
      created: expect.any(Number),
      model: 'claude-test',
      choices: [{ index: 0, message: { role: 'assistant', content: `${PREFIX} What is the capital of France?`, refusal: null }, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: 14,
        completion_tokens: 12,
        total_tokens: 26,
        prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: null },
      },
    });
  });

  it('accepts a base URL with a trailing slash or /v1', () => {
    expect(anthropicMessagesUrl('https://api.anthropic.com')).toBe('https://api.anthropic.com/v1/messages');
    expect(anthropicMessagesUrl('https://api.anthropic.com/')).toBe('https://api.anthropic.com/v1/messages');
    expect(anthropicMessagesUrl('http://127.0.0.1:9090/v1')).toBe('http://127.0.0.1:9090/v1/messages');
  });

  it('maps max_tokens truncation to finish_reason length', async () => {
    const completion = await adapter.chat(target(), request({ max_tokens: 3 }), OPTIONS);
    expect(completion.choices[0]).toMatchObject({ message: { content: 'Hello from the' }, finish_reason: 'length' });
    expect(completion.usage?.completion_tokens).toBe(3);
  });

  it('round-trips a tool call and its result', async () => {
    const first = await adapter.chat(target(), request({ messages: [{ role: 'user', content: 'What is the weather in Paris?' }], tools: [weatherTool] }), OPTIONS);
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const message = first.choices[0].message;
    expect(message.content).toBeNull();
    expect(message.tool_calls).toEqual([{ id: expect.stringMatching(/^toolu_/), type: 'function', function: { name: 'get_weather', arguments: '{"location":"Paris"}' } }]);

    const callId = (message.tool_calls as Array<{ id: string }>)[0].id;
    const second = await adapter.chat(
      target(),
      request({
        messages: [{ role: 'user', content: 'What is the weather in Paris?' }, message, { role: 'tool', tool_call_id: callId, content: '18 degrees and sunny' }],
        tools: [weatherTool],
      }),
      OPTIONS,
    );
    expect(second.choices[0]).toMatchObject({ message: { content: 'Tool said: 18 degrees and sunny' }, finish_reason: 'stop' });
  });

  it('enables thinking within the emulator-checked constraints and returns reasoning_content', async () => {
    const completion = await adapter.chat(target(), request({ reasoning_effort: 'low', temperature: 0.3 }), OPTIONS);
    expect(emulator.requests[emulator.requests.length - 1].body).toMatchObject({ thinking: { type: 'enabled', budget_tokens: 1024 }, max_tokens: 1024 + 4096 });
    expect(completion.choices[0].message).toMatchObject({ reasoning_content: 'Considering the request.', content: `${PREFIX} What is the capital of France?` });

    const excluded = await adapter.chat(target(), request({ reasoning: { effort: 'low', exclude: true } }), OPTIONS);
    expect(excluded.choices[0].message).not.toHaveProperty('reasoning_content');
  });

  it('reports cache writes for cache_control blocks', async () => {
    const completion = await adapter.chat(
      target(),
      request({ messages: [{ role: 'system', content: [{ type: 'text', text: 'A long shared prefix.', cache_control: { type: 'ephemeral' } }] }, ...request().messages] }),
      OPTIONS,
    );
    expect(completion.usage?.prompt_tokens_details).toEqual({ cached_tokens: 0, cache_write_tokens: 4 });
    expect(completion.usage?.prompt_tokens).toBe(2 + 4 + 10);
  });

  it.each([429, 500, 529])('maps an emulated %d to UpstreamHttpError with that status', async (status) => {
    proxy.headers = { 'x-emulator-status': String(status) };
    const error = await rejection(adapter.chat(viaProxy(), request(), OPTIONS));
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ provider: 'anthropic', status });
    if (status === 429) expect(error).toMatchObject({ retryAfterSeconds: 1 });
    if (status === 529) expect(error).toMatchObject({ upstreamMessage: 'Overloaded' });
  });

  it('maps a wrong key to a 401 and an emulator validation error to a 400', async () => {
    expect(await rejection(adapter.chat(target({ apiKey: 'wrong' }), request(), OPTIONS))).toMatchObject({ status: 401, upstreamMessage: 'invalid x-api-key' });
    expect(await rejection(adapter.chat(target(), request({ tools: [weatherTool], tool_choice: { type: 'function', function: { name: 'nope' } } }), OPTIONS))).toMatchObject({
      status: 400,
    });
  });

  it('throws AnthropicTranslationError before sending an untranslatable request', async () => {
    const before = emulator.requests.length;
    const bad = request({ messages: [{ role: 'user', content: 'x' }, { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{' } }] }] });
    expect(await rejection(adapter.chat(target(), bad, OPTIONS))).toBeInstanceOf(AnthropicTranslationError);
    expect(emulator.requests.length).toBe(before);
  });
});

describe('AnthropicChatAdapter.stream', () => {
  it('streams OpenAI chunks with one id, a role chunk first, a finish chunk and usage last', async () => {
    const chunks = await collect(chunksOf(await adapter.stream(target(), request(), OPTIONS)));
    expect(emulator.requests[emulator.requests.length - 1].body).toMatchObject({ stream: true });

    const ids = new Set(chunks.map((chunk) => `${chunk.id} ${chunk.created} ${chunk.model}`));
    expect(ids.size).toBe(1);
    expect(chunks[0].choices[0].delta).toEqual({ role: 'assistant', content: '' });
    const text = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(text).toBe(`${PREFIX} What is the capital of France?`);
    expect(chunks[chunks.length - 2].choices).toEqual([{ index: 0, delta: {}, finish_reason: 'stop' }]);
    const last = chunks[chunks.length - 1];
    expect(last.choices).toEqual([]);
    expect(last.usage).toEqual({
      prompt_tokens: 12,
      completion_tokens: 12,
      total_tokens: 24,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: null },
    });
    expect(chunks.slice(0, -1).every((chunk) => chunk.usage === undefined)).toBe(true);
  });

  it('streams a tool call as an id chunk followed by argument pieces', async () => {
    const chunks = await collect(chunksOf(await adapter.stream(target(), request({ messages: [{ role: 'user', content: 'weather please' }], tools: [weatherTool] }), OPTIONS)));
    const calls = chunks.flatMap((chunk) => chunk.choices[0]?.delta.tool_calls ?? []);
    expect(calls[0]).toEqual({ index: 0, id: expect.stringMatching(/^toolu_/), type: 'function', function: { name: 'get_weather', arguments: '' } });
    expect(calls.slice(1).every((call) => call.index === 0 && call.id === undefined)).toBe(true);
    expect(calls.map((call) => call.function?.arguments).join('')).toBe('{"location":"Paris"}');
    expect(chunks[chunks.length - 2].choices[0].finish_reason).toBe('tool_calls');
  });

  it('streams thinking as reasoning_content', async () => {
    const chunks = await collect(chunksOf(await adapter.stream(target(), request({ reasoning_effort: 'medium' }), OPTIONS)));
    expect(chunks[1].choices[0].delta).toEqual({ reasoning_content: 'Considering the request.' });
    expect(chunks[chunks.length - 1].usage?.completion_tokens).toBe(3 + 12);
  });

  it.each([429, 529])('rejects before streaming when the emulator answers %d', async (status) => {
    proxy.headers = { 'x-emulator-status': String(status) };
    const error = await rejection(adapter.stream(viaProxy(), request(), OPTIONS));
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect(error).toMatchObject({ status });
  });

  it('closes the upstream connection when aborted mid-stream', async () => {
    proxy.headers = { 'x-emulator-chunk-delay-ms': '200' };
    const controller = new AbortController();
    const disconnects = proxy.disconnects;
    const chunks = chunksOf(await adapter.stream(viaProxy(), request(), { ...OPTIONS, signal: controller.signal }));
    const iterator = chunks[Symbol.asyncIterator]();
    expect((await iterator.next()).value?.choices[0].delta.role).toBe('assistant');
    expect((await iterator.next()).value?.choices[0].delta.content).toBe('Hello');

    const started = Date.now();
    controller.abort();
    const error = await rejection(iterator.next());
    // undici rejects with a DOMException AbortError, which http-client passes through; under
    // Jest it comes from another realm (not `instanceof Error` there) and is wrapped instead.
    expect(['AbortError', 'UpstreamUnavailableError']).toContain((error as Error).name);
    await proxy.waitForDisconnects(disconnects + 1);
    // The whole stream would take ~20 events × 200 ms; the abort ends it long before that.
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('closes the upstream connection when the consumer stops early', async () => {
    proxy.headers = { 'x-emulator-chunk-delay-ms': '50' };
    const disconnects = proxy.disconnects;
    for await (const chunk of chunksOf(await adapter.stream(viaProxy(), request(), OPTIONS))) {
      if (chunk.choices[0]?.delta.content === 'Hello') break;
    }
    await proxy.waitForDisconnects(disconnects + 1);
  });
});

describe('AnthropicChatAdapter.stream against a scripted SSE server', () => {
  const messageStart = `event: message_start\ndata: ${JSON.stringify({
    type: 'message_start',
    message: { id: 'msg_x', type: 'message', role: 'assistant', model: 'claude-test', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 3, output_tokens: 1 } },
  })}\n\n`;
  const textDelta = `event: content_block_delta\ndata: ${JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'Hi' } })}\n\n`;
  const overloaded = `event: error\ndata: ${JSON.stringify({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } })}\n\n`;

  /** A server that answers `body`, then `later` after 50 ms when given (a second read for the client). */
  async function scripted(body: string, later?: string): Promise<{ url: string; close(): Promise<void> }> {
    const server = createServer((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      if (later === undefined) return res.end(body);
      res.write(body);
      setTimeout(() => res.end(later), 50);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      close: () => new Promise<void>((resolve) => server.close(() => resolve())),
    };
  }

  it('rejects the open itself when the first read holds an error event (so the caller can fall back)', async () => {
    const server = await scripted(overloaded);
    try {
      expect(await rejection(adapter.stream(target({ baseUrl: server.url }), request(), OPTIONS))).toMatchObject({ name: 'UpstreamHttpError', status: 503, upstreamMessage: 'Overloaded' });
    } finally {
      await server.close();
    }
  });

  it('rejects the open when an error event follows content in the first read: nothing reached the client yet', async () => {
    const server = await scripted(messageStart + textDelta + overloaded);
    try {
      expect(await rejection(adapter.stream(target({ baseUrl: server.url }), request(), OPTIONS))).toMatchObject({ name: 'UpstreamHttpError', status: 503 });
    } finally {
      await server.close();
    }
  });

  it('throws UpstreamHttpError from the iteration on an error event in a later read, after the chunks read before it', async () => {
    const server = await scripted(messageStart + textDelta, overloaded);
    try {
      const chunks: UpstreamChatChunk[] = [];
      const error = await rejection(
        (async () => {
          for await (const chunk of chunksOf(await adapter.stream(target({ baseUrl: server.url }), request(), OPTIONS))) chunks.push(chunk);
        })(),
      );
      expect(error).toBeInstanceOf(UpstreamHttpError);
      expect(chunks.map((chunk) => chunk.choices[0]?.delta.content)).toEqual(['', 'Hi']);
    } finally {
      await server.close();
    }
  });

  it('throws UpstreamProtocolError when the stream ends before message_stop', async () => {
    const server = await scripted(messageStart + textDelta);
    try {
      expect(await rejection(collect(chunksOf(await adapter.stream(target({ baseUrl: server.url }), request(), OPTIONS))))).toBeInstanceOf(UpstreamProtocolError);
    } finally {
      await server.close();
    }
  });
});

/**
 * A forwarding proxy in front of the emulator: it adds the emulator's x-emulator-* control
 * headers (the adapter sends only Anthropic's) and counts clients that leave mid-response.
 */
interface HeaderProxy {
  url: string;
  headers: Record<string, string>;
  readonly disconnects: number;
  waitForDisconnects(count: number): Promise<void>;
  close(): Promise<void>;
}

async function startHeaderProxy(upstream: string): Promise<HeaderProxy> {
  let disconnects = 0;
  const waiters: Array<() => void> = [];
  const state: HeaderProxy = {
    url: '',
    headers: {},
    get disconnects() {
      return disconnects;
    },
    waitForDisconnects: (count) =>
      new Promise<void>((resolve) => {
        const check = (): void => (disconnects >= count ? resolve() : void waiters.push(check));
        check();
      }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  const server: Server = createServer((req, res) => {
    const forwarded = httpRequest(`${upstream}${req.url ?? '/'}`, { method: req.method, headers: { ...req.headers, ...state.headers } }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forwarded.on('error', () => res.destroy());
    res.on('close', () => {
      if (res.writableFinished) return;
      forwarded.destroy();
      disconnects++;
      waiters.splice(0).forEach((waiter) => waiter());
    });
    req.pipe(forwarded);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = state.close;
  state.close = () => {
    server.closeAllConnections();
    return close();
  };
  return state;
}

describe('AnthropicChatAdapter with enable_search, against the emulator', () => {
  const searched = request({ messages: [{ role: 'user', content: 'Paris population' }], enable_search: true, search_options: { search_strategy: 'turbo' } });
  const text = `${PREFIX} Paris population`;
  const annotation = {
    type: 'url_citation',
    url_citation: { start_index: 'Hello from the emulator. '.length, end_index: text.length - 1, title: 'Emulated search result', url: 'https://example.com/emulated-search' },
  };

  it('sends the web search tool and answers the cited text as url_citation annotations, with no server tool traces', async () => {
    const completion = await adapter.chat(target(), searched, OPTIONS);
    expect((emulator.requests.at(-1)!.body as { tools: unknown }).tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', max_uses: 1 }]);
    expect(completion.choices[0].message).toEqual({ role: 'assistant', content: text, refusal: null, annotations: [annotation] });
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.usage).toMatchObject({ completion_tokens: 8 });
  });

  it('streams the same text and one annotations chunk before the finish chunk', async () => {
    const chunks = await collect(chunksOf(await adapter.stream(target(), searched, OPTIONS)));
    expect(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe(text);
    expect(chunks.flatMap((chunk) => chunk.choices.map((choice) => Object.keys(choice.delta))).flat()).not.toContain('tool_calls');
    const at = chunks.findIndex((chunk) => chunk.choices[0]?.delta.annotations !== undefined);
    expect(chunks[at].choices[0].delta).toEqual({ annotations: [annotation] });
    expect(chunks[at + 1].choices[0].finish_reason).toBe('stop');
    expect(chunks.at(-1)!.usage).toMatchObject({ completion_tokens: 8 });
  });
});
