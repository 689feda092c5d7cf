import path from 'node:path';
import Anthropic, { APIError, AuthenticationError, BadRequestError, InternalServerError, NotFoundError, RateLimitError } from '@anthropic-ai/sdk';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

type WithMeta = { meta?: { usage?: { credits_used: number; usd_spent: number } } };
/** Credits of a request to a model priced $0.15 / $0.60 per million tokens, at 2,000,000 credits per USD. */
const creditsFor = (prompt: number, completion: number) => (prompt * 300_000 + completion * 1_200_000) / 1e6;
const PROMPT = 'Count the words in this sentence';
/** The emulator's output tokens: the words of its reply. */
const words = (content: Anthropic.ContentBlock[]) => content.map((block) => (block.type === 'text' ? block.text : '')).join(' ').split(/\s+/).filter(Boolean).length;
const weatherTool = { name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object' as const, properties: { location: { type: 'string' } }, required: ['location'] } };

/**
 * Anthropic's Messages API through the official `@anthropic-ai/sdk`, against the standalone
 * gateway with every upstream played by the emulator: an Anthropic model and an OpenAI one,
 * whole and streamed, a tool round trip, count_tokens, errors, and the ledger's rows.
 */
describe("Anthropic's Messages API, end to end with the official Anthropic SDK", () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let client: Anthropic;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/messages-catalogue.yaml'), ...emulatedProviders(emulator.url) });
    ({ key, accountId } = await harness.paidKey(20_000_000));
    client = new Anthropic({ baseURL: harness.gateway, apiKey: key, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  it.each([
    ['claude', 'anthropic/claude-test'],
    ['mini', 'acme/chat-mini'],
  ])('answers messages.create on %s in the Messages shape, priced from the catalogue', async (model, catalogueId) => {
    const message = (await client.messages.create({ model, max_tokens: 200, messages: [{ role: 'user', content: PROMPT }] })) as Anthropic.Message & WithMeta;
    expect(message).toMatchObject({ type: 'message', role: 'assistant', model: catalogueId, stop_reason: 'end_turn', stop_sequence: null });
    expect(message.id).toMatch(/^msg_/);
    expect(message.content).toEqual([{ type: 'text', text: `Hello from the emulator. You said: ${PROMPT}` }]);
    const { input_tokens: input, output_tokens: output, cache_creation_input_tokens: written, cache_read_input_tokens: read } = message.usage;
    expect(input).toBeGreaterThan(0);
    expect(output).toBe(words(message.content));
    expect([written, read]).toEqual([0, 0]);
    expect(message.meta?.usage?.credits_used).toBe(creditsFor(input, output));
  });

  it('takes the key as a Bearer token too, with a system prompt in blocks, and says max_tokens', async () => {
    const bearer = new Anthropic({ baseURL: harness.gateway, apiKey: null, authToken: key, maxRetries: 0 });
    const message = await bearer.messages.create({
      model: 'claude',
      max_tokens: 3,
      system: [{ type: 'text', text: 'You count words.', cache_control: { type: 'ephemeral' } }],
      messages: [{ role: 'user', content: PROMPT }],
    });
    expect(message.stop_reason).toBe('max_tokens');
    expect(message.content).toEqual([{ type: 'text', text: 'Hello from the' }]);
    // The emulator writes the cache up to the last block carrying cache_control: the system's three words.
    expect(message.usage.cache_creation_input_tokens).toBe(3);
  });

  it("streams Anthropic's events in order, to the same message as unstreamed", async () => {
    const whole = await client.messages.create({ model: 'claude', max_tokens: 200, messages: [{ role: 'user', content: PROMPT }] });
    const stream = client.messages.stream({ model: 'claude', max_tokens: 200, messages: [{ role: 'user', content: PROMPT }] });
    const types: string[] = [];
    let text = '';
    for await (const event of stream) {
      types.push(event.type);
      if (event.type === 'content_block_delta' && event.delta.type === 'text_delta') text += event.delta.text;
    }
    const final = await stream.finalMessage();
    // The SDK reads past pings; the raw stream below shows where they are.
    expect(types.slice(0, 3)).toEqual(['message_start', 'content_block_start', 'content_block_delta']);
    expect(types.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
    expect(types.filter((type) => type === 'content_block_delta').length).toBeGreaterThan(1);
    expect(text).toBe(`Hello from the emulator. You said: ${PROMPT}`);
    expect(final.content).toEqual(whole.content);
    expect(final.stop_reason).toBe('end_turn');
    expect([final.usage.input_tokens, final.usage.output_tokens]).toEqual([whole.usage.input_tokens, whole.usage.output_tokens]);

    const raw = await fetch(`${harness.gateway}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
      body: JSON.stringify({ model: 'mini', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }], stream: true }),
    });
    expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const names = [...(await raw.text()).matchAll(/^event: (\w+)$/gm)].map((match) => match[1]);
    expect(names.slice(0, 3)).toEqual(['message_start', 'ping', 'content_block_start']);
    expect(names.slice(-3)).toEqual(['content_block_stop', 'message_delta', 'message_stop']);
  });

  it('streams thinking as thinking_delta events ahead of the text', async () => {
    const stream = client.messages.stream({ model: 'claude', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 }, messages: [{ role: 'user', content: PROMPT }] });
    const thinking: string[] = [];
    stream.on('thinking', (delta) => thinking.push(delta));
    const final = await stream.finalMessage();
    expect(thinking.join('')).toBe('Considering the request.');
    // An Anthropic source answers natively: the thinking block carries Anthropic's signature.
    expect(final.content).toEqual([
      { type: 'thinking', thinking: 'Considering the request.', signature: 'emulated' },
      { type: 'text', text: `Hello from the emulator. You said: ${PROMPT}` },
    ]);
  });

  it.each(['claude', 'mini'])('runs a streamed tool_use round trip with tool_result on %s', async (model) => {
    const question: Anthropic.MessageParam = { role: 'user', content: 'What is the weather in Paris?' };
    const first = client.messages.stream({ model, max_tokens: 200, tools: [weatherTool], messages: [question] });
    const jsonDeltas: string[] = [];
    first.on('inputJson', (partial) => jsonDeltas.push(partial));
    const call = await first.finalMessage();
    expect(call.stop_reason).toBe('tool_use');
    const toolUse = call.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
    expect(toolUse).toMatchObject({ name: 'get_weather', input: { location: 'Paris' } });
    expect(jsonDeltas.join('')).toBe('{"location":"Paris"}');

    const second = client.messages.stream({
      model,
      max_tokens: 200,
      tools: [weatherTool],
      messages: [question, { role: 'assistant', content: call.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse!.id, content: 'Sunny, 21 degrees' }] }],
    });
    const answer = await second.finalMessage();
    expect(answer.stop_reason).toBe('end_turn');
    expect(answer.content).toEqual([{ type: 'text', text: 'Tool said: Sunny, 21 degrees' }]);
  });

  it("accepts what Claude Code sends: server tools, a system message, adaptive thinking, betas and fields it does not use", async () => {
    const response = await fetch(`${harness.gateway}/v1/messages?beta=true`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01', 'anthropic-beta': 'interleaved-thinking-2025-05-14,context-management-2025-06-27' },
      body: JSON.stringify({
        model: 'claude',
        max_tokens: 8000,
        system: [{ type: 'text', text: 'You are a coding agent.', cache_control: { type: 'ephemeral' } }],
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: PROMPT, cache_control: { type: 'ephemeral' } }] },
        ],
        tools: [weatherTool, { type: 'web_search_20250305', name: 'web_search', max_uses: 5 }],
        thinking: { type: 'adaptive' },
        output_config: { effort: 'high' },
        context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
        metadata: { user_id: 'user_abc' },
        stream: false,
      }),
    });
    expect(response.status).toBe(200);
    const message = (await response.json()) as Anthropic.Message;
    // Adaptive thinking at high effort reached the Anthropic source as thinking: its block comes first.
    expect(message.content.map((block) => block.type)).toEqual(['thinking', 'text']);
    expect(message.content[1]).toEqual({ type: 'text', text: `Hello from the emulator. You said: ${PROMPT}` });

    // Its max_tokens is above the OpenAI model's output limit (1,000): lowered to it, not refused. (Streamed, as Claude Code does.)
    const onOpenAi = await client.messages
      .stream({ model: 'mini', max_tokens: 32000, thinking: { type: 'adaptive' } as unknown as Anthropic.ThinkingConfigParam, messages: [{ role: 'user', content: PROMPT }] })
      .finalMessage();
    expect(onOpenAi.content).toEqual([{ type: 'text', text: `Hello from the emulator. You said: ${PROMPT}` }]);
  });

  it('counts tokens with the gateway tokenizer, free of charge', async () => {
    const { key: ownKey } = await harness.paidKey(1_000);
    const own = new Anthropic({ baseURL: harness.gateway, apiKey: ownKey, maxRetries: 0 });
    const short = await own.messages.countTokens({ model: 'claude', messages: [{ role: 'user', content: 'hello' }] });
    const long = await own.messages.countTokens({ model: 'mini', system: 'You count words.', tools: [weatherTool], messages: [{ role: 'user', content: PROMPT }] });
    expect(short.input_tokens).toBeGreaterThan(0);
    expect(long.input_tokens).toBeGreaterThan(short.input_tokens);
    expect(await harness.balance(ownKey)).toBe(1_000);
  });

  it("surfaces the gateway's errors as the SDK's own exceptions, in Anthropic's error shape", async () => {
    const wrongKey = new Anthropic({ baseURL: harness.gateway, apiKey: 'sk-not-a-key', maxRetries: 0 });
    const unauthorized = await wrongKey.messages.create({ model: 'claude', max_tokens: 10, messages: [{ role: 'user', content: PROMPT }] }).catch((caught: unknown) => caught);
    expect(unauthorized).toBeInstanceOf(AuthenticationError);
    expect((unauthorized as AuthenticationError).status).toBe(401);
    expect((unauthorized as AuthenticationError).error).toMatchObject({ type: 'error', error: { type: 'authentication_error' }, statusCode: 401, path: '/v1/messages' });
    // The header Anthropic's clients send is the one the message names.
    expect((unauthorized as AuthenticationError).error).toMatchObject({ error: { message: expect.stringContaining('"x-api-key: <API_KEY>"') } });

    const unknown = await client.messages.create({ model: 'acme/nope', max_tokens: 10, messages: [{ role: 'user', content: PROMPT }] }).catch((caught: unknown) => caught);
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect((unknown as NotFoundError).error).toMatchObject({ type: 'error', error: { type: 'not_found_error', message: "Not Found: no model named 'acme/nope' in the catalogue. GET /v1/models lists the model ids and aliases a request can use." } });

    const upstreamDown = await client.messages.create({ model: 'test/overloaded-claude', max_tokens: 10, messages: [{ role: 'user', content: PROMPT }] }).catch((caught: unknown) => caught);
    expect(upstreamDown).toBeInstanceOf(InternalServerError);
    expect((upstreamDown as InternalServerError).error).toMatchObject({ type: 'error', error: { type: 'api_error' }, statusCode: 502 });
    const busy = await client.messages.create({ model: 'test/busy-claude', max_tokens: 10, messages: [{ role: 'user', content: PROMPT }] }).catch((caught: unknown) => caught);
    expect(busy).toBeInstanceOf(RateLimitError);
    expect((busy as RateLimitError).error).toMatchObject({ type: 'error', error: { type: 'rate_limit_error' } });

    // Half-way through a stream the status is sent: the failure is an error event, which the SDK throws.
    const cut = await client.messages.stream({ model: 'test/cut-claude', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] }).finalMessage().catch((caught: unknown) => caught);
    expect(cut).toBeInstanceOf(APIError);
    expect((cut as APIError).error).toMatchObject({ type: 'error', error: { type: 'api_error' } });

    const noMaxTokens = await client.messages.create({ model: 'claude', messages: [{ role: 'user', content: PROMPT }] } as unknown as Anthropic.MessageCreateParamsNonStreaming).catch((caught: unknown) => caught);
    expect(noMaxTokens).toBeInstanceOf(BadRequestError);
    expect((noMaxTokens as BadRequestError).error).toMatchObject({ type: 'error', error: { type: 'invalid_request_error', message: expect.stringContaining('max_tokens') } });
  });

  it('stops the upstream stream when the client leaves, billing what was generated', async () => {
    const { key: leaverKey } = await harness.paidKey(1000);
    const leaver = new Anthropic({ baseURL: harness.gateway, apiKey: leaverKey, maxRetries: 0 });
    const stream = leaver.messages.stream({ model: 'test/slow-claude', max_tokens: 200, messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten '.repeat(3) }] });
    let deltas = 0;
    for await (const event of stream) {
      if (event.type === 'content_block_delta' && ++deltas === 3) break;
    }
    await eventually(async () => emulator.requests.some((request) => (request.body as { model?: string }).model?.startsWith('claude-test@chunk-delay') && request.closedEarly), 2_000);
    await eventually(async () => {
      const left = await harness.balance(leaverKey);
      return left < 1000 && left > 1000 - creditsFor(200, 20);
    }, 10_000);
  });

  it("documents the routes in Swagger with Anthropic's error shape", async () => {
    const document = (await call<{ paths: Record<string, { post: { responses: Record<string, { content?: Record<string, { example?: Record<string, unknown>; examples?: Record<string, { value: Record<string, unknown> }> }> }> } }> }>(`${harness.gateway}/docs-json`)).body;
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      const unauthorized = document.paths[path].post.responses['401'].content!['application/json'].example!;
      expect(unauthorized).toMatchObject({ type: 'error', error: { type: 'authentication_error' }, statusCode: 401, path });
    }
    const invalid = Object.values(document.paths['/v1/messages'].post.responses['400'].content!['application/json'].examples!);
    expect(invalid.map(({ value }) => (value.error as { type: string }).type)).toEqual(['invalid_request_error', 'invalid_request_error']);

    // Every request example is accepted (on this catalogue's model in place of the shipped one).
    type Documented = { requestBody: { content: Record<string, { examples: Record<string, { value: Record<string, unknown> }> }> } };
    for (const path of ['/v1/messages', '/v1/messages/count_tokens']) {
      const examples = (document.paths[path].post as unknown as Documented).requestBody.content['application/json'].examples;
      for (const [name, { value }] of Object.entries(examples)) {
        const response = await fetch(`${harness.gateway}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'x-api-key': key }, body: JSON.stringify({ ...value, model: 'mini' }) });
        expect([path, name, response.status]).toEqual([path, name, 200]);
        await response.text();
      }
    }
  });

  it('bills every call through the ledger, its rows naming the messages endpoint', async () => {
    const { key: ownKey, accountId: ownAccount } = await harness.paidKey(1_000_000);
    const own = new Anthropic({ baseURL: harness.gateway, apiKey: ownKey, maxRetries: 0 });
    const whole = (await own.messages.create({ model: 'mini', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] })) as Anthropic.Message & WithMeta;
    const streamed = await own.messages.stream({ model: 'claude', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] }).finalMessage();
    await eventually(async () => (await harness.usageEntries(ownAccount, 10)).length === 2, 15_000, 100);
    const rows = (await harness.usageEntries(ownAccount, 10)).map(({ model, endpoint, units, credits }) => ({ model, endpoint, units, credits }));
    expect(rows).toEqual(
      expect.arrayContaining([
        { model: 'acme/chat-mini', endpoint: 'messages', units: { input_tokens: whole.usage.input_tokens, output_tokens: whole.usage.output_tokens }, credits: String(whole.meta!.usage!.credits_used) },
        {
          model: 'anthropic/claude-test',
          endpoint: 'messages',
          units: { input_tokens: streamed.usage.input_tokens, output_tokens: streamed.usage.output_tokens },
          credits: String(creditsFor(streamed.usage.input_tokens, streamed.usage.output_tokens)),
        },
      ]),
    );
    expect(accountId).not.toBe(ownAccount);
  });
});
