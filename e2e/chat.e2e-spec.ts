import path from 'node:path';
import { AzureOpenAI, OpenAI } from 'openai';
import { findFreePort } from '@igw/persistence';
import { eventually } from '@igw/testing';
import { SEARCH_RESULT } from '../tools/emulator/src/anthropic/messages';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { audioDataPieces, emulatedAudio } from '../tools/emulator/src/openai/audio';
import { call, expectErrorBody } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

type WithMeta = { meta?: { usage?: { credits_used: number; usd_spent: number } } };
/** `delta.audio` of a streamed spoken answer (OpenAI sends it; the SDK's types do not list it yet). */
type AudioDelta = { id?: string; transcript?: string; data?: string; expires_at?: number };
/** Credits of a request to a model priced $0.15 / $0.60 per million tokens, at 2,000,000 credits per USD. */
const creditsFor = (prompt: number, completion: number) => (prompt * 300_000 + completion * 1_200_000) / 1e6;

/**
 * Chat completions through the official `openai` package (both clients), against the
 * standalone gateway with every upstream played by the emulator.
 */
describe('chat completions, end to end with the official OpenAI SDK', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let client: OpenAI;
  let key: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    const closedPort = await findFreePort();
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/chat-catalogue.yaml'),
      UPSTREAM_TIMEOUT_MS: '2000',
      ...emulatedProviders(emulator.url),
      // Nothing listens there: the refused-connection source.
      MISTRAL_API_KEY: 'mistral-key',
      MISTRAL_BASE_URL: `http://127.0.0.1:${closedPort}/v1`,
    });
    key = (await harness.paidKey(1_000_000)).key;
    client = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: key, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  const ask = { model: 'mini', messages: [{ role: 'user' as const, content: 'Count the words in this sentence' }] };

  it('answers a completion in the spec shape, priced from the catalogue', async () => {
    const completion = (await client.chat.completions.create(ask)) as OpenAI.ChatCompletion & WithMeta;
    expect(completion.object).toBe('chat.completion');
    expect(completion.model).toBe('test/mini');
    expect(completion.choices[0].finish_reason).toBe('stop');
    expect(completion.choices[0].message.content).toContain('Count the words in this sentence');
    const { prompt_tokens: prompt, completion_tokens: output } = completion.usage!;
    expect(completion.meta?.usage?.credits_used).toBe(creditsFor(prompt, output));
  });

  it('streams chunks as they come and bills a stream exactly like the same answer unstreamed', async () => {
    const { key: streamKey } = await harness.paidKey(1000);
    const streamClient = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: streamKey, maxRetries: 0 });
    const stream = await streamClient.chat.completions.create({ ...ask, stream: true });
    let text = '';
    const chunks: OpenAI.ChatCompletionChunk[] = [];
    for await (const chunk of stream) {
      chunks.push(chunk);
      text += chunk.choices[0]?.delta?.content ?? '';
    }
    expect(chunks[0].object).toBe('chat.completion.chunk');
    expect(chunks.every((chunk) => chunk.model === 'test/mini' && chunk.id === chunks[0].id)).toBe(true);
    expect(chunks.some((chunk) => chunk.usage)).toBe(false);
    expect(chunks.at(-1)!.choices[0].finish_reason).toBe('stop');

    const unstreamed = (await client.chat.completions.create(ask)) as OpenAI.ChatCompletion & WithMeta;
    expect(text).toBe(unstreamed.choices[0].message.content);
    const expected = unstreamed.meta!.usage!.credits_used;
    await eventually(async () => (await harness.balance(streamKey)) === 1000 - expected, 10_000);
  });

  it('puts usage and meta.usage on the last chunk when the client asks for it', async () => {
    const stream = await client.chat.completions.create({ ...ask, stream: true, stream_options: { include_usage: true } });
    const chunks: Array<OpenAI.ChatCompletionChunk & WithMeta> = [];
    for await (const chunk of stream) chunks.push(chunk);
    const last = chunks.at(-1)!;
    expect(last.choices).toEqual([]);
    expect(last.usage!.total_tokens).toBe(last.usage!.prompt_tokens + last.usage!.completion_tokens);
    expect(last.meta!.usage!.credits_used).toBe(creditsFor(last.usage!.prompt_tokens, last.usage!.completion_tokens));
  });

  it('works unchanged with the AzureOpenAI client, alias or slashed id as the deployment, streaming included', async () => {
    for (const deployment of ['mini', 'test/mini']) {
      const azure = new AzureOpenAI({ endpoint: harness.gateway, apiKey: key, apiVersion: '2024-10-21', deployment, maxRetries: 0 });
      const completion = await azure.chat.completions.create({ model: 'ignored-by-the-gateway', messages: ask.messages });
      expect(completion.choices[0].message.content).toContain('Count the words');
      const stream = await azure.chat.completions.create({ model: '', messages: ask.messages, stream: true });
      let text = '';
      for await (const chunk of stream) text += chunk.choices[0]?.delta?.content ?? '';
      expect(text).toBe(completion.choices[0].message.content);
    }
  });

  it('routes to an Azure OpenAI upstream with its api-key header and api-version', async () => {
    const completion = await client.chat.completions.create({ ...ask, model: 'test/azure' });
    expect(completion.choices[0].message.content).toContain('Count the words');
    const upstream = emulator.requests.findLast((request) => request.path.includes('/openai/deployments/my-deployment/'))!;
    expect(upstream.headers['api-key']).toBe('azure-key');
    expect(upstream.path).toMatch(/api-version=/);
  });

  it.each([
    ['test/claude', '/v1/messages', 'x-api-key', 'anthropic-key'],
    ['test/gemini', '/v1beta/models/gemini-test:', 'x-goog-api-key', 'gemini-key'],
  ])('translates %s both ways, streamed and not, billing the same usage', async (model, upstreamPath, header, upstreamKey) => {
    const completion = (await client.chat.completions.create({ ...ask, model, max_tokens: 100 })) as OpenAI.ChatCompletion & WithMeta;
    expect(completion.model).toBe(model);
    expect(completion.choices[0].message.content).toContain('Count the words in this sentence');
    expect(completion.choices[0].finish_reason).toBe('stop');
    const { prompt_tokens: prompt, completion_tokens: output } = completion.usage!;
    expect(completion.meta!.usage!.credits_used).toBe(creditsFor(prompt, output));
    const upstream = emulator.requests.at(-1)!;
    expect(upstream.path.startsWith(upstreamPath)).toBe(true);
    expect(upstream.headers[header]).toBe(upstreamKey);

    const stream = await client.chat.completions.create({ ...ask, model, max_tokens: 100, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let last: (OpenAI.ChatCompletionChunk & WithMeta) | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta?.content ?? '';
      last = chunk;
    }
    expect(text).toBe(completion.choices[0].message.content);
    expect(last!.usage).toMatchObject({ prompt_tokens: prompt, completion_tokens: output });
    expect(last!.meta!.usage!.credits_used).toBe(completion.meta!.usage!.credits_used);
  });

  it.each(['test/claude', 'test/gemini'])('calls tools through %s in the OpenAI shape', async (model) => {
    const completion = await client.chat.completions.create({
      model,
      max_tokens: 100,
      messages: [{ role: 'user', content: 'What is the weather like?' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } }],
    });
    expect(completion.choices[0].finish_reason).toBe('tool_calls');
    const call = completion.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(call.function.name).toBe('get_weather');
    expect(JSON.parse(call.function.arguments)).toEqual({ location: 'Paris' });
  });

  it('passes tools, tool calls (with extra_content) and tool results through', async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } },
    ];
    const first = await client.chat.completions.create({ model: 'mini', messages: [{ role: 'user', content: 'What is the weather in Paris?' }], tools });
    expect(first.choices[0].finish_reason).toBe('tool_calls');
    const toolCall = first.choices[0].message.tool_calls![0] as OpenAI.ChatCompletionMessageFunctionToolCall;
    expect(toolCall.function.name).toBe('get_weather');
    expect(JSON.parse(toolCall.function.arguments)).toEqual({ location: 'Paris' });

    const extra = { google: { thought_signature: 'opaque-123' } };
    const second = await client.chat.completions.create({
      model: 'mini',
      tools,
      messages: [
        { role: 'user', content: 'What is the weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ ...toolCall, extra_content: extra } as OpenAI.ChatCompletionMessageToolCall] },
        { role: 'tool', tool_call_id: toolCall.id, content: 'sunny, 21 C' },
      ],
    });
    expect(second.choices[0].message.content).toBe('Tool said: sunny, 21 C');
    const sent = emulator.requests.at(-1)!.body as { messages: Array<{ tool_calls?: Array<{ extra_content?: unknown }> }> };
    expect(sent.messages[1].tool_calls![0].extra_content).toEqual(extra);
  });

  it('normalizes tool schemas for the upstream only when asked, and never forwards the flag', async () => {
    const parameters = { $schema: 'http://json-schema.org/draft-07/schema#', properties: { city: { type: 'string' } }, required: ['city', 'ghost'] };
    const tools = [{ type: 'function', function: { name: 'lookup', parameters } }];
    const sentTools = () => (emulator.requests.at(-1)!.body as { tools: Array<{ function: { parameters: unknown } }>; normalize_tool_schemas?: unknown });
    expect((await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { ...ask, tools, normalize_tool_schemas: true } })).status).toBe(200);
    expect(sentTools().tools[0].function.parameters).toEqual({ type: 'object', properties: { city: { type: 'string' } }, required: ['city'] });
    expect(sentTools()).not.toHaveProperty('normalize_tool_schemas');
    expect((await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { ...ask, tools } })).status).toBe(200);
    expect(sentTools().tools[0].function.parameters).toEqual(parameters);
  });

  it('streams tool calls in OpenAI chunk form', async () => {
    const stream = await client.chat.completions.create({
      model: 'mini',
      stream: true,
      messages: [{ role: 'user', content: 'weather please' }],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } } }],
    });
    let args = '';
    let name = '';
    let finish: string | null = null;
    for await (const chunk of stream) {
      for (const call of chunk.choices[0]?.delta?.tool_calls ?? []) {
        name += call.function?.name ?? '';
        args += call.function?.arguments ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
    }
    expect(name).toBe('get_weather');
    expect(JSON.parse(args)).toEqual({ location: 'Paris' });
    expect(finish).toBe('tool_calls');
  });

  it('returns log probabilities when asked', async () => {
    const completion = await client.chat.completions.create({ ...ask, logprobs: true, top_logprobs: 2 });
    const content = completion.choices[0].logprobs!.content!;
    expect(content.length).toBe(completion.usage!.completion_tokens);
    expect(content[0].top_logprobs).toHaveLength(2);
    expect(completion.choices[0].logprobs!.refusal).toBeNull();
  });

  it('falls back to the next source when the first answers 500, or refuses connections', async () => {
    for (const model of ['test/fallback', 'test/refused-connection']) {
      const completion = await client.chat.completions.create({ ...ask, model });
      expect(completion.choices[0].message.content).toContain('Count the words');
      expect((emulator.requests.at(-1)!.body as { model: string }).model).toBe('healthy');
    }
  });

  it('runs exactly the pinned source with no fallback', async () => {
    const pinned = (provider: string) => call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { ...ask, model: 'test/fallback', provider } });
    expectErrorBody(await pinned('GROQ'), 502, '/v1/chat/completions', /Bad Gateway/);
    expect((await pinned('together')).status).toBe(200);
    expect((await pinned('fallback')).status).toBe(200);
    expect((await pinned('auto')).status).toBe(200);
    expectErrorBody(await pinned('anthropic'), 400, '/v1/chat/completions', /^Body validation error! provider: Expected one of 'auto', 'fallback', 'groq', 'together'\. Received 'anthropic'/);
  });

  it('maps upstream failures to the spec statuses', async () => {
    const rateLimited = await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { ...ask, model: 'test/rate-limited' } });
    expectErrorBody(rateLimited, 429, '/v1/chat/completions', /^Too Many Requests$/);
    expect(rateLimited.headers.get('retry-after')).toBe('1');
    expectErrorBody(await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { ...ask, model: 'test/broken' } }), 502, '/v1/chat/completions');
    expectErrorBody(await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { ...ask, model: 'test/sleepy' } }), 504, '/v1/chat/completions', /Gateway Timeout/);
  }, 30_000);

  it('counts tokens itself when the upstream reports no usage, streamed or not', async () => {
    const completion = (await client.chat.completions.create({ ...ask, model: 'test/no-usage' })) as OpenAI.ChatCompletion & WithMeta;
    expect(completion.usage!.prompt_tokens).toBeGreaterThan(0);
    expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
    expect(completion.meta!.usage!.credits_used).toBe(creditsFor(completion.usage!.prompt_tokens, completion.usage!.completion_tokens));
  });

  // A client that leaves a stream stops it: this one (~40 events, 150 ms apart) is closed at once.
  it('stops an abandoned stream at once and bills what was generated', async () => {
    const { key: leaverKey } = await harness.paidKey(1000);
    const seen = emulator.requests.length;
    const abort = new AbortController();
    const response = await fetch(`${harness.gateway}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${leaverKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/slow', stream: true, messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten '.repeat(3) }] }),
      signal: abort.signal,
    });
    const reader = response.body!.getReader();
    let received = '';
    while ((received.match(/"content":"[^"]+"/g) ?? []).length < 3) received += new TextDecoder().decode((await reader.read()).value);
    abort.abort();
    const closedAfterMs = await eventually(async () => emulator.requests.slice(seen).some((request) => (request.body as { model?: string }).model?.startsWith('slow') && request.closedEarly), 10_000, 10);
    // At once, with room for a slow machine: read on to its end, the stream would last seconds more.
    expect(closedAfterMs).toBeLessThan(1_500);
    await eventually(async () => {
      const left = await harness.balance(leaverKey);
      return left < 1000 && left > 1000 - creditsFor(200, 20);
    }, 10_000);
  });

  const user = { role: 'user', content: 'hi' };
  const answeredToolCall = { id: 'call_1', type: 'function', function: { name: 'f', arguments: '{}' } };
  const tool = (name: string) => ({ type: 'function', function: { name } });
  // One row per rule of the request table: the message names the field, and enums and types say
  // what was expected and what came. The validator's own spec holds every variant of each rule.
  it.each<[string, Record<string, unknown>, string]>([
    ['an unknown role', { messages: [{ role: 'wizard', content: 'x' }] }, "messages[0].role: Expected one of 'system', 'user', 'assistant', 'tool', 'developer'. Received 'wizard'"],
    ['a tool message without tool_call_id', { messages: [user, { role: 'tool', content: 'x' }] }, 'messages[1].tool_call_id: Expected a string (the id of the tool call this message answers). Received nothing'],
    ['an assistant with neither content nor tool calls', { messages: [user, { role: 'assistant' }] }, 'messages[1].content: Expected a string or an array of text parts (required unless tool_calls or function_call is given). Received nothing'],
    ['a cache_control of another type', { messages: [{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'persistent' } }] }] }, "messages[0].content[0].cache_control.type: Expected 'ephemeral'. Received 'persistent'"],
    ['a cache_control ttl not 5m or 1h', { messages: [{ role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral', ttl: '10m' } }] }] }, "messages[0].content[0].cache_control.ttl: Expected one of '5m', '1h'. Received '10m'"],
    ['an assistant tool call of an unknown type', { messages: [user, { role: 'assistant', tool_calls: [answeredToolCall, { id: 'x', type: 'code' }] }] }, "messages[1].tool_calls[1].type: Expected one of 'function', 'custom'. Received 'code'"],
    ['a custom tool call without input', { messages: [user, { role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'run_sql' } }] }] }, 'messages[1].tool_calls[0].custom.input: Expected a string. Received nothing'],
    ['extra_content that is not an object', { messages: [user, { role: 'assistant', tool_calls: [{ ...answeredToolCall, extra_content: 'sig' }] }] }, "messages[1].tool_calls[0].extra_content: Expected an object. Received string 'sig'"],
    ['a tool with an empty type', { tools: [{ type: '' }] }, "tools[0].type: Expected a non-empty string. Received ''"],
    ['129 tools', { tools: Array.from({ length: 129 }, (_, index) => tool(`t${index}`)) }, 'tools: Expected at most 128 tools. Received 129'],
    ['a function name outside [a-zA-Z0-9_-]', { tools: [tool('bad name!')] }, "tools[0].function.name: Expected 1-64 letters, digits, underscores or dashes. Received 'bad name!'"],
    ['a custom tool format of another type', { tools: [{ type: 'custom', custom: { name: 'c', format: { type: 'json' } } }] }, "tools[0].custom.format.type: Expected one of 'text', 'grammar'. Received 'json'"],
    ['a grammar syntax not lark or regex', { tools: [{ type: 'custom', custom: { name: 'c', format: { type: 'grammar', grammar: { definition: 'x', syntax: 'ebnf' } } } }] }, "tools[0].custom.format.grammar.syntax: Expected one of 'lark', 'regex'. Received 'ebnf'"],
    ['an unknown tool_choice', { tool_choice: 'any' }, "tool_choice: Expected one of 'none', 'auto', 'required', or an object with type 'function', 'custom', 'allowed_tools'. Received 'any'"],
    ['a forced function without a name', { tool_choice: { type: 'function', function: {} } }, 'tool_choice.function.name: Expected a non-empty string. Received nothing'],
    ['an allowed_tools mode', { tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'none', tools: [] } } }, "tool_choice.allowed_tools.mode: Expected one of 'auto', 'required'. Received 'none'"],
    ['5 stop sequences', { stop: ['a', 'b', 'c', 'd', 'e'] }, 'stop: Expected at most 4 stop sequences. Received 5'],
    ['temperature above 2', { temperature: 3 }, 'temperature: Expected a number from 0 to 2. Received 3'],
    ['temperature as a string', { temperature: 'hot' }, "temperature: Expected a number. Received string 'hot'"],
    ['top_p below 0.01', { top_p: 0 }, 'top_p: Expected a number from 0.01 to 1. Received 0'],
    ['a logit bias above 100', { logit_bias: { '50256': 150 } }, 'logit_bias.50256: Expected a number from -100 to 100. Received 150'],
    ['top_logprobs without logprobs', { top_logprobs: 5 }, 'top_logprobs: Expected logprobs: true alongside top_logprobs. Received no logprobs'],
    ['top_logprobs above 20', { logprobs: true, top_logprobs: 21 }, 'top_logprobs: Expected an integer from 0 to 20. Received 21'],
    ['max_tokens 0', { max_tokens: 0 }, 'max_tokens: Expected an integer of at least 1. Received 0'],
    ['a fractional max_tokens', { max_tokens: 40.5 }, 'max_tokens: Expected an integer. Received 40.5'],
    ['an absurd max_tokens', { max_tokens: 1e300 }, 'max_tokens: Expected an integer of at most 9007199254740991. Received 1e+300'],
    ['max_completion_tokens 0', { max_completion_tokens: 0 }, 'max_completion_tokens: Expected an integer of at least 1. Received 0'],
    ['reasoning.max_tokens 0', { reasoning: { max_tokens: 0 } }, 'reasoning.max_tokens: Expected an integer of at least 1. Received 0'],
    ['reasoning.max_tokens with reasoning.effort', { reasoning: { effort: 'low', max_tokens: 2048 } }, "reasoning.max_tokens: Expected either reasoning.effort or reasoning.max_tokens, not both. Received effort: 'low'"],
    ['an unknown reasoning_effort', { reasoning_effort: 'minimal' }, "reasoning_effort: Expected one of 'none', 'low', 'medium', 'high'. Received 'minimal'"],
    ['stream_options.include_usage that is not a boolean', { stream: true, stream_options: { include_usage: 'yes' } }, "stream_options.include_usage: Expected a boolean. Received string 'yes'"],
    ['enable_search as a string', { enable_search: 'yes' }, "enable_search: Expected a boolean. Received string 'yes'"],
    ['an unknown search_strategy', { enable_search: true, search_options: { search_strategy: 'deep' } }, "search_options.search_strategy: Expected one of 'turbo', 'max', 'agent'. Received 'deep'"],
    ['normalize_tool_schemas as a number', { normalize_tool_schemas: 1 }, 'normalize_tool_schemas: Expected a boolean. Received number 1'],
    ['parallel_tool_calls as a string', { parallel_tool_calls: 'no' }, "parallel_tool_calls: Expected a boolean. Received string 'no'"],
    ['a provider the model has no source for', { provider: 'anthropic' }, "provider: Expected one of 'auto', 'fallback', 'openai'. Received 'anthropic'"],
  ])('rejects %s with a 400 that names the field, before any upstream call', async (_rule, change, detail) => {
    const before = emulator.requests.length;
    const response = await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { ...ask, ...change } });
    expectErrorBody(response, 400, '/v1/chat/completions', /^Body validation error!/);
    expect((response.body as { message: string }).message).toBe(`Body validation error! ${detail}`);
    expect(emulator.requests.length).toBe(before);
  });

  it('hands a validation error to the SDK as a BadRequestError with the request id', async () => {
    const failure = await client.chat.completions.create({ ...ask, temperature: 3 }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(OpenAI.BadRequestError);
    const badRequest = failure as InstanceType<typeof OpenAI.BadRequestError>;
    expect(badRequest.status).toBe(400);
    expect(badRequest.requestID).toMatch(/\S/);
  });

  it('refuses a role the model does not take, with the spec message', async () => {
    const response = await call(`${harness.gateway}/v1/chat/completions`, {
      token: key,
      body: { model: 'test/no-system', messages: [{ role: 'user', content: 'hi' }, { role: 'system', content: 'be brief' }] },
    });
    expectErrorBody(response, 400, '/v1/chat/completions', /^Unsupported value: 'messages\[1\]\.role' does not support 'system' with this model\.$/);
  });

  it('refuses requests over the model output limit or context, before any upstream call unless a worker counts the prompt', async () => {
    const before = emulator.requests.length;
    expectErrorBody(await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { ...ask, max_tokens: 501 } }), 400, '/v1/chat/completions', /max_tokens: Expected at most 500/);
    const long = 'word '.repeat(3000);
    expectErrorBody(
      await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { ...ask, messages: [{ role: 'user', content: long }] } }),
      400,
      '/v1/chat/completions',
      /context/,
    );
    expect(emulator.requests.length).toBe(before);
    // Too long to count on the event loop: the token counting worker (from dist/) decides, while
    // the upstream call runs (it is cancelled, and nothing billed: long-prompts.e2e-spec.ts).
    expectErrorBody(
      await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { ...ask, messages: [{ role: 'user', content: 'word '.repeat(20_000) }] } }),
      400,
      '/v1/chat/completions',
      /^Body validation error! messages: the prompt is at least \d+ tokens, more than the 2000-token context of test\/mini\.$/,
    );
  });

  describe('audio output (modalities text + audio)', () => {
    const spoken = { modalities: ['text', 'audio'] as Array<'text' | 'audio'> };
    const question = [{ role: 'user' as const, content: 'Say something nice' }];
    const transcript = 'Hello from the emulator. You said: Say something nice';
    const words = transcript.split(' ').length;

    it('returns the audio intact, streamed pieces in order, audio tokens in usage, and bills what the ledger records', async () => {
      const { key: audioKey, accountId } = await harness.paidKey(1000);
      const audioClient = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: audioKey, maxRetries: 0 });
      const billed = new Map<string, number>();

      const { data, response } = await audioClient.chat.completions
        .create({ model: 'mini', messages: question, ...spoken, audio: { voice: 'alloy', format: 'wav' } })
        .withResponse();
      const completion = data as OpenAI.ChatCompletion & WithMeta;
      const upstream = emulator.requests.at(-1)!.body as Record<string, unknown>;
      expect(upstream).toMatchObject({ modalities: ['text', 'audio'], audio: { voice: 'alloy', format: 'wav' } });
      const message = completion.choices[0].message;
      expect(message.content).toBeNull();
      expect(message.audio).toEqual({ id: expect.stringMatching(/^audio_/), data: expect.any(String), expires_at: expect.any(Number), transcript });
      const wav = Buffer.from(message.audio!.data, 'base64');
      expect(wav).toEqual(emulatedAudio(transcript, 'wav'));
      expect(wav.subarray(0, 4).toString('ascii')).toBe('RIFF');
      expect(message.audio!.expires_at).toBe(completion.created + 3600);
      expect(completion.usage).toMatchObject({ completion_tokens: 5 * words, completion_tokens_details: { audio_tokens: 4 * words } });
      // The catalogue prices no audio unit: audio tokens are output tokens, at the output price.
      expect(completion.meta!.usage!.credits_used).toBe(creditsFor(completion.usage!.prompt_tokens, completion.usage!.completion_tokens));
      billed.set(response.headers.get('x-request-id')!, completion.meta!.usage!.credits_used);

      const { data: stream, response: streamResponse } = await audioClient.chat.completions
        .create({ model: 'mini', messages: question, ...spoken, audio: { voice: 'alloy', format: 'pcm16' }, stream: true, stream_options: { include_usage: true } })
        .withResponse();
      const pieces: AudioDelta[] = [];
      let last: (OpenAI.ChatCompletionChunk & WithMeta) | undefined;
      let finish: string | null = null;
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & { audio?: AudioDelta }) | undefined;
        if (delta?.audio) pieces.push(delta.audio);
        expect(delta?.content ?? null).toBeNull();
        finish = chunk.choices[0]?.finish_reason ?? finish;
        last = chunk;
      }
      const id = pieces[0].id!;
      expect(id).toMatch(/^audio_/);
      const transcriptPieces = pieces.filter((piece) => piece.transcript !== undefined);
      const dataPieces = pieces.filter((piece) => piece.data !== undefined);
      expect(transcriptPieces.map((piece) => piece.transcript).join('')).toBe(transcript);
      // In order: every transcript piece, then every data piece exactly as the emulator cut them, then expires_at.
      expect(pieces).toEqual([...transcriptPieces, ...dataPieces, { id, expires_at: expect.any(Number) }]);
      const pcm = emulatedAudio(transcript, 'pcm16');
      expect(dataPieces.map((piece) => piece.data)).toEqual(audioDataPieces(pcm));
      expect(dataPieces[0].id).toBe(id);
      expect(Buffer.concat(dataPieces.map((piece) => Buffer.from(piece.data!, 'base64')))).toEqual(pcm);
      expect(finish).toBe('stop');
      expect(last!.usage).toMatchObject({ completion_tokens: 5 * words, completion_tokens_details: { audio_tokens: 4 * words } });
      expect(last!.meta!.usage!.credits_used).toBe(completion.meta!.usage!.credits_used);
      billed.set(streamResponse.headers.get('x-request-id')!, last!.meta!.usage!.credits_used);

      const ledger = () => harness.usageEntries(accountId, 10);
      await eventually(async () => (await ledger()).length >= 2, 10_000);
      const rows = await ledger();
      expect(rows).toHaveLength(2);
      for (const row of rows) {
        expect(row.model).toBe('test/mini');
        expect(row.units).toEqual({ input_tokens: completion.usage!.prompt_tokens, output_tokens: completion.usage!.completion_tokens });
        expect(row.credits).toBe(String(billed.get(row.requestId!)));
      }
      await eventually(async () => Math.abs((await harness.balance(audioKey)) - (1000 - 2 * completion.meta!.usage!.credits_used)) < 1e-9, 10_000);
    });

    it('speaks through an Azure OpenAI upstream too', async () => {
      const completion = await client.chat.completions.create({ model: 'test/azure', messages: question, ...spoken, audio: { voice: 'alloy', format: 'mp3' } });
      expect(completion.choices[0].message.audio!.transcript).toBe(transcript);
      expect(Buffer.from(completion.choices[0].message.audio!.data, 'base64')).toEqual(emulatedAudio(transcript, 'mp3'));
    });

    it('counts the transcript when the upstream reports no usage, streamed or not alike', async () => {
      const { key: quietKey, accountId } = await harness.paidKey(1000);
      const quietClient = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: quietKey, maxRetries: 0 });
      const body = { model: 'test/no-usage', messages: question, ...spoken, audio: { voice: 'alloy', format: 'pcm16' as const } };
      const completion = (await quietClient.chat.completions.create(body)) as OpenAI.ChatCompletion & WithMeta;
      expect(completion.usage!.completion_tokens).toBeGreaterThan(0);
      // Without upstream usage the stream has no usage chunk to show; the ledger shows what it was billed.
      for await (const chunk of await quietClient.chat.completions.create({ ...body, stream: true })) expect(chunk.usage ?? undefined).toBeUndefined();
      const ledger = () => harness.usageEntries(accountId, 10);
      await eventually(async () => (await ledger()).length >= 2, 10_000);
      const rows = await ledger();
      expect(rows).toHaveLength(2);
      for (const row of rows) {
        expect(row.units).toEqual({ input_tokens: completion.usage!.prompt_tokens, output_tokens: completion.usage!.completion_tokens });
        expect(row.credits).toBe(String(completion.meta!.usage!.credits_used));
      }
    });
  });

  describe('web search on an Anthropic source (enable_search)', () => {
    const question = [{ role: 'user' as const, content: 'How many people live in Paris?' }];
    const text = 'Hello from the emulator. You said: How many people live in Paris?';
    const annotation = {
      type: 'url_citation',
      url_citation: { start_index: 'Hello from the emulator. '.length, end_index: text.length - 1, title: SEARCH_RESULT.title, url: SEARCH_RESULT.url },
    };
    const body = { model: 'test/claude', max_tokens: 100, messages: question, enable_search: true, search_options: { search_strategy: 'turbo' } };

    it('turns on Anthropic web search and returns its citations as url_citation annotations, streamed or not', async () => {
      const completion = (await client.chat.completions.create(body as OpenAI.ChatCompletionCreateParamsNonStreaming)) as OpenAI.ChatCompletion & WithMeta;
      const upstream = emulator.requests.at(-1)!;
      expect(upstream.path).toBe('/v1/messages');
      expect((upstream.body as { tools: unknown }).tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', max_uses: 1 }]);
      const message = completion.choices[0].message;
      expect(message.content).toBe(text);
      expect(message.annotations).toEqual([annotation]);
      expect(message.content!.slice(annotation.url_citation.start_index, annotation.url_citation.end_index + 1)).toBe('You said: How many people live in Paris?');
      expect(message.tool_calls ?? []).toEqual([]);
      expect(completion.choices[0].finish_reason).toBe('stop');
      expect(completion.meta!.usage!.credits_used).toBe(creditsFor(completion.usage!.prompt_tokens, completion.usage!.completion_tokens));

      const stream = await client.chat.completions.create({ ...body, stream: true, stream_options: { include_usage: true } } as OpenAI.ChatCompletionCreateParamsStreaming);
      let streamed = '';
      const annotations: unknown[] = [];
      let last: (OpenAI.ChatCompletionChunk & WithMeta) | undefined;
      let finish: string | null = null;
      for await (const chunk of stream) {
        const delta = chunk.choices[0]?.delta as (OpenAI.ChatCompletionChunk.Choice.Delta & { annotations?: unknown[] }) | undefined;
        streamed += delta?.content ?? '';
        annotations.push(...(delta?.annotations ?? []));
        expect(delta?.tool_calls).toBeUndefined();
        finish = chunk.choices[0]?.finish_reason ?? finish;
        last = chunk;
      }
      expect(streamed).toBe(text);
      expect(annotations).toEqual([annotation]);
      expect(finish).toBe('stop');
      expect(last!.usage).toMatchObject({ prompt_tokens: completion.usage!.prompt_tokens, completion_tokens: completion.usage!.completion_tokens });
      expect(last!.meta!.usage!.credits_used).toBe(completion.meta!.usage!.credits_used);
    });
  });

  it('answers 404 for an unknown model and 400 for a model that is not a chat model', async () => {
    expectErrorBody(await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { ...ask, model: 'nope' } }), 404, '/v1/chat/completions');
    expectErrorBody(await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { ...ask, model: 'test/embedding' } }), 400, '/v1/chat/completions', /not a chat model/);
  });

  it('needs api-version on the Azure-style path and takes the key from Api-Key', async () => {
    const url = `${harness.gateway}/openai/deployments/test/mini/chat/completions`;
    expectErrorBody(await call(url, { headers: { 'api-key': key }, body: { messages: ask.messages } }), 400, '/openai/deployments/test/mini/chat/completions', /api-version/);
    expect((await call(`${url}?api-version=2024-10-21`, { headers: { 'api-key': key }, body: { messages: ask.messages } })).status).toBe(200);
    expectErrorBody(await call(`${url}?api-version=2024-10-21`, { headers: { 'api-key': 'wrong' }, body: { messages: ask.messages } }), 401, '/openai/deployments/test/mini/chat/completions');
  });
});
