import path from 'node:path';
import Anthropic, { BadRequestError } from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

type WithMeta = { meta?: { usage?: { credits_used: number; usd_spent: number } } };
type Recorded = RunningEmulator['requests'][number];
/** A streamed event's data, read field by field by the assertions. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type SseData = Record<string, any>;

/** Credits per unit at the fixture's prices (2,000,000 credits per USD). */
const CLAUDE = { input_tokens: 6, output_tokens: 30, cache_read_input_tokens: 1, cache_write_input_tokens: 8, web_search_calls: 20_000 };
const GPT = { input_tokens: 4, output_tokens: 16, cache_read_input_tokens: 1, web_search_calls: 20_000 };
const creditsOf = (units: Record<string, number>, prices: Record<string, number>) => Object.entries(units).reduce((sum, [unit, count]) => sum + count * prices[unit], 0);
const PROMPT = 'Count the words in this sentence';
const weatherTool = { name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object' as const, properties: { location: { type: 'string' } } } };

/**
 * The native paths of the two fronts, end to end with the official SDKs against the standalone
 * gateway and the emulator: Anthropic sources get the client's Messages request as it came,
 * OpenAI and Azure sources marked `native: [responses]` the client's Responses request; both
 * inside the chat pipeline (prices from the provider's usage, fallback to a translated source,
 * the client-leaves rule, ledger rows naming the API).
 */
describe('native upstream paths of the Messages and Responses fronts', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let anthropic: Anthropic;
  let openai: OpenAI;
  let key: string;

  /** The last request the emulator received whose upstream model name starts with `model`. */
  const upstreamCall = (model: string): Recorded | undefined =>
    [...emulator.requests].reverse().find((request) => typeof (request.body as { model?: unknown })?.model === 'string' && (request.body as { model: string }).model.startsWith(model));

  /**
   * After a client left a stream of `upstreamModel`: the upstream call was closed early, and the
   * account's one usage row (with its units) is what it was billed.
   */
  const billedAfterLeaving = async (upstreamModel: string, accountId: string) => {
    await eventually(async () => emulator.requests.some((request) => (request.body as { model?: string }).model === upstreamModel && request.closedEarly), 2_000);
    await eventually(async () => (await harness.usageEntries(accountId, 10)).length === 1, 15_000, 100);
    const [row] = await harness.usageEntries(accountId, 10);
    return { row, units: row.units as Record<string, number> };
  };

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/native-fronts-catalogue.yaml'), ...emulatedProviders(emulator.url) });
    ({ key } = await harness.paidKey(50_000_000));
    anthropic = new Anthropic({ baseURL: harness.gateway, apiKey: key, maxRetries: 0 });
    openai = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: key, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  describe('Anthropic sources on /v1/messages', () => {
    it('send the client blocks as they are: a signed thinking block, redacted thinking, a PDF, top_k, stop_sequences and the safe betas', async () => {
      const signed = { type: 'thinking' as const, thinking: 'The user wants the weather: call the tool.', signature: 'EqQBCkYIBxgCKkD-signed-by-anthropic' };
      const redacted = { type: 'redacted_thinking' as const, data: 'EmwKAhgBEgy-opaque' };
      const pdf = { type: 'document' as const, source: { type: 'base64' as const, media_type: 'application/pdf' as const, data: 'JVBERi0xLjQK' } };
      const messages: Anthropic.MessageParam[] = [
        { role: 'user', content: [pdf, { type: 'text', text: 'What is the weather in Paris?' }] },
        { role: 'assistant', content: [signed, redacted, { type: 'tool_use', id: 'toolu_01', name: 'get_weather', input: { location: 'Paris' } }] },
        { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_01', content: 'Sunny and mild' }] },
      ];
      const sent = {
        model: 'claude',
        max_tokens: 4000,
        system: [{ type: 'text' as const, text: 'You are terse.', cache_control: { type: 'ephemeral' as const } }],
        messages,
        tools: [weatherTool],
        thinking: { type: 'adaptive' },
        top_k: 7,
        stop_sequences: ['mild'],
        metadata: { user_id: 'user-7' },
        output_config: { effort: 'low' },
        context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      } as unknown as Anthropic.MessageCreateParamsNonStreaming;
      const message = (await anthropic.messages.create(sent, { headers: { 'anthropic-beta': 'interleaved-thinking-2025-05-14,files-api-2025-04-14' } })) as Anthropic.Message & WithMeta;

      const upstream = upstreamCall('claude-test')!;
      expect(upstream.path).toBe('/v1/messages');
      // Thinking stays on for the turn answering the tool call: the signed block goes back as it came.
      expect(upstream.body).toEqual({
        model: 'claude-test',
        max_tokens: 4000,
        system: [{ type: 'text', text: 'You are terse.', cache_control: { type: 'ephemeral' } }],
        messages,
        tools: [weatherTool],
        thinking: { type: 'adaptive' },
        top_k: 7,
        stop_sequences: ['mild'],
        metadata: { user_id: 'user-7' },
        output_config: { effort: 'low' },
        context_management: { edits: [{ type: 'clear_tool_uses_20250919' }] },
      });
      expect(upstream.headers['anthropic-beta']).toBe('interleaved-thinking-2025-05-14');

      // Anthropic's answer as it came: its id, the signed thinking block, the stop sequence.
      expect(message.id).toMatch(/^msg_[A-Za-z0-9]{24}$/);
      expect(message.model).toBe('anthropic/claude-native');
      expect(message.content).toEqual([
        { type: 'thinking', thinking: 'Considering the request.', signature: 'emulated' },
        { type: 'text', text: 'Tool said: Sunny and' },
      ]);
      expect([message.stop_reason, message.stop_sequence]).toEqual(['stop_sequence', 'mild']);
      const { input_tokens: input, output_tokens: output, cache_creation_input_tokens: written } = message.usage;
      expect(written).toBe(3);
      expect(message.meta!.usage!.credits_used).toBe(creditsOf({ input_tokens: input, output_tokens: output, cache_write_input_tokens: written! }, CLAUDE));
    });

    it("stream Anthropic's own events (signature_delta included), message_start naming the catalogue model and message_delta carrying meta.usage", async () => {
      const raw = await fetch(`${harness.gateway}/v1/messages`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-api-key': key, 'anthropic-version': '2023-06-01' },
        body: JSON.stringify({ model: 'claude', max_tokens: 2000, thinking: { type: 'enabled', budget_tokens: 1024 }, stop_sequences: ['said'], messages: [{ role: 'user', content: PROMPT }], stream: true }),
      });
      const events = (await raw.text())
        .split('\n\n')
        .filter(Boolean)
        .map((block) => ({ name: block.split('\n')[0].slice('event: '.length), data: JSON.parse(block.split('\n')[1].slice('data: '.length)) as SseData }));
      expect(events.every(({ name, data }) => name === data.type)).toBe(true);
      expect(events.map(({ name }) => name)).toEqual([
        'message_start',
        'content_block_start',
        'ping',
        'content_block_delta',
        'content_block_delta',
        'content_block_stop',
        'content_block_start',
        ...events.filter(({ name, data }) => name === 'content_block_delta' && data.index === 1).map(() => 'content_block_delta'),
        'content_block_stop',
        'message_delta',
        'message_stop',
      ]);
      expect(events[0].data.message.model).toBe('anthropic/claude-native');
      expect(events[4].data.delta).toEqual({ type: 'signature_delta', signature: 'emulated' });
      const delta = events.at(-2)!.data;
      expect(delta.delta).toEqual({ stop_reason: 'stop_sequence', stop_sequence: 'said' });
      const usage = { input_tokens: events[0].data.message.usage.input_tokens as number, output_tokens: delta.usage.output_tokens as number };
      expect(delta.meta.usage.credits_used).toBe(creditsOf(usage, CLAUDE));
    });

    it('move a role: system message into system, and keep the translated path for a model without Anthropic sources', async () => {
      await anthropic.messages.create({ model: 'claude', max_tokens: 100, system: 'First.', messages: [{ role: 'system', content: 'Second.' } as unknown as Anthropic.MessageParam, { role: 'user', content: PROMPT }] });
      expect((upstreamCall('claude-test')!.body as { system: unknown; messages: unknown }).system).toEqual([
        { type: 'text', text: 'First.' },
        { type: 'text', text: 'Second.' },
      ]);
      const translated = await anthropic.messages.create({ model: 'test/gpt-translated', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] });
      expect(upstreamCall('gpt-4o-mini')!.path).toBe('/v1/chat/completions');
      expect(translated.content).toEqual([{ type: 'text', text: `Hello from the emulator. You said: ${PROMPT}` }]);
    });

    it('price cache reads and writes exactly from the streamed usage, the ledger naming the messages endpoint', async () => {
      const { key: ownKey, accountId } = await harness.paidKey(1_000_000);
      const own = new Anthropic({ baseURL: harness.gateway, apiKey: ownKey, maxRetries: 0 });
      const system = [{ type: 'text' as const, text: 'A long and stable system prompt worth caching.', cache_control: { type: 'ephemeral' as const } }];
      const written = await own.messages.stream({ model: 'claude', max_tokens: 100, system, messages: [{ role: 'user', content: PROMPT }] }).finalMessage();
      const read = (await own.messages.create({ model: 'anthropic/claude-cached', max_tokens: 100, system, messages: [{ role: 'user', content: PROMPT }] })) as Anthropic.Message & WithMeta;
      expect([written.usage.cache_creation_input_tokens, written.usage.cache_read_input_tokens]).toEqual([8, 0]);
      expect([read.usage.cache_creation_input_tokens, read.usage.cache_read_input_tokens]).toEqual([0, 8]);

      await eventually(async () => (await harness.usageEntries(accountId, 10)).length === 2, 15_000, 100);
      const rows = (await harness.usageEntries(accountId, 10)).map(({ model, endpoint, units, credits }) => ({ model, endpoint, units, credits: Number(credits) }));
      const writtenUnits = { input_tokens: written.usage.input_tokens, output_tokens: written.usage.output_tokens, cache_write_input_tokens: 8 };
      const readUnits = { input_tokens: read.usage.input_tokens, output_tokens: read.usage.output_tokens, cache_read_input_tokens: 8 };
      expect(rows).toEqual(
        expect.arrayContaining([
          { model: 'anthropic/claude-native', endpoint: 'messages', units: writtenUnits, credits: creditsOf(writtenUnits, CLAUDE) },
          { model: 'anthropic/claude-cached', endpoint: 'messages', units: readUnits, credits: creditsOf(readUnits, CLAUDE) },
        ]),
      );
      expect(read.meta!.usage!.credits_used).toBe(creditsOf(readUnits, CLAUDE));
    });

    it("run Anthropic's web search where the catalogue says the source has it, priced per search; other server tools are left out and named", async () => {
      const raw = await anthropic.messages
        .create({
          model: 'claude',
          max_tokens: 200,
          messages: [{ role: 'user', content: 'Find the news of the day please' }],
          tools: [
            { type: 'web_search_20250305', name: 'web_search', max_uses: 50 },
            { type: 'web_fetch_20250910', name: 'web_fetch' } as unknown as Anthropic.ToolUnion,
          ],
        })
        .withResponse();
      const message = raw.data as Anthropic.Message & WithMeta;
      expect(raw.response.headers.get('x-gateway-dropped-tools')).toBe('web_fetch');
      // max_uses capped to what the hold covers.
      expect((upstreamCall('claude-test')!.body as { tools: unknown }).tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', max_uses: 10 }]);
      expect(message.content.map((block) => block.type)).toEqual(['server_tool_use', 'web_search_tool_result', 'text', 'text']);
      expect(message.usage.server_tool_use).toEqual({ web_search_requests: 1 });
      const units = { input_tokens: message.usage.input_tokens, output_tokens: message.usage.output_tokens, web_search_calls: 1 };
      expect(message.meta!.usage!.credits_used).toBe(creditsOf(units, CLAUDE));
      // A tool_choice forcing a tool no source runs is refused.
      const forced = await anthropic.messages
        .create({ model: 'claude', max_tokens: 50, messages: [{ role: 'user', content: 'x' }], tools: [weatherTool, { type: 'web_fetch_20250910', name: 'web_fetch' } as unknown as Anthropic.ToolUnion], tool_choice: { type: 'tool', name: 'web_fetch' } })
        .catch((caught: unknown) => caught);
      expect(forced).toBeInstanceOf(BadRequestError);
    });

    it('forward only the tool types the gateway knows: a server tool type it has never heard of is left out and named', async () => {
      const tools = [weatherTool, { type: 'advisor_20260101', name: 'advisor' }, { type: 'mcp_toolset', name: 'remote' }] as unknown as Anthropic.ToolUnion[];
      const raw = await anthropic.messages.create({ model: 'claude', max_tokens: 50, messages: [{ role: 'user', content: PROMPT }], tools }).withResponse();
      expect(raw.response.headers.get('x-gateway-dropped-tools')).toBe('advisor, remote');
      expect((upstreamCall('claude-test')!.body as { tools: unknown }).tools).toEqual([weatherTool]);
    });

    it("refuse a file of the upstream account wherever a block holds one, before anything is sent", async () => {
      const fileImage = { type: 'image', source: { type: 'file', file_id: 'file_of_another_client' } };
      const nested: Array<[string, unknown[]]> = [
        ['messages[0].content[0].content[0].source.content[0].source', [{ type: 'tool_result', tool_use_id: 'toolu_01', content: [{ type: 'document', source: { type: 'content', content: [fileImage] } }] }]],
        ['messages[0].content[0].file_id', [{ type: 'container_upload', file_id: 'file_of_another_client' }]],
      ];
      for (const [path, content] of nested) {
        const before = emulator.requests.length;
        const refused = await anthropic.messages
          .create({ model: 'claude', max_tokens: 50, messages: [{ role: 'user', content: [...content, { type: 'text', text: 'Describe it' }] as Anthropic.ContentBlockParam[] }] })
          .catch((caught: unknown) => caught);
        expect(refused).toBeInstanceOf(BadRequestError);
        expect((refused as BadRequestError).message).toContain(`Body validation error! ${path}: a file of the upstream account cannot be sent through this gateway`);
        expect(emulator.requests.length).toBe(before);
      }
    });

    it('fall back from a native Anthropic source to a translated one, and refuse there what the translation cannot carry', async () => {
      const before = emulator.requests.length;
      const message = await anthropic.messages.create({ model: 'test/claude-then-gpt', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] });
      const paths = emulator.requests.slice(before).map((request) => request.path);
      expect(paths).toEqual(['/v1/messages', '/v1/chat/completions']);
      expect(message.content).toEqual([{ type: 'text', text: `Hello from the emulator. You said: ${PROMPT}` }]);
      expect(message.model).toBe('test/claude-then-gpt');

      // A base64 PDF goes on as a chat file part; a document by URL has no place there.
      const pdfFrom = emulator.requests.length;
      const pdf = await anthropic.messages.create({
        model: 'test/claude-then-gpt',
        max_tokens: 100,
        messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0xLjQK' } }, { type: 'text', text: 'Summarise' }] }],
      });
      expect(pdf.content).toEqual([{ type: 'text', text: 'Hello from the emulator. You said: Summarise' }]);
      // The native source failed just before, so it is cooling: the request may go straight to the translated one.
      const translated = emulator.requests.slice(pdfFrom).find((request) => request.path === '/v1/chat/completions')!;
      expect((translated.body as { messages: Array<{ content: unknown[] }> }).messages[0].content[0]).toEqual({ type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0xLjQK' } });

      const byUrl = await anthropic.messages
        .create({
          model: 'test/claude-then-gpt',
          max_tokens: 100,
          messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/report.pdf' } }, { type: 'text', text: 'Summarise' }] }],
        })
        .catch((caught: unknown) => caught);
      expect(byUrl).toBeInstanceOf(BadRequestError);
      expect((byUrl as BadRequestError).message).toContain('only plain-text documents');
    });

    it('stop the native upstream stream when the client leaves, billing what was generated and giving the hold back', async () => {
      const { key: leaverKey, accountId } = await harness.paidKey(1_000_000);
      const leaver = new Anthropic({ baseURL: harness.gateway, apiKey: leaverKey, maxRetries: 0 });
      const stream = leaver.messages.stream({ model: 'test/slow-claude', max_tokens: 200, messages: [{ role: 'user', content: 'one two three four five six seven eight nine ten '.repeat(3) }] });
      let deltas = 0;
      for await (const event of stream) {
        if (event.type === 'content_block_delta' && ++deltas === 3) break;
      }
      const { row, units } = await billedAfterLeaving('claude-test@chunk-delay=150', accountId);
      expect(row.endpoint).toBe('messages');
      // Billed the prompt and the few words streamed, far below the 200 tokens the hold covered.
      expect(units.output_tokens).toBeGreaterThan(0);
      expect(units.output_tokens).toBeLessThan(30);
      expect(Number(row.credits)).toBe(creditsOf(units, CLAUDE));
      expect(await harness.balance(leaverKey)).toBe(1_000_000 - Number(row.credits));
    });
  });

  describe('OpenAI and Azure sources marked native: [responses] on /v1/responses', () => {
    it('send the Responses request natively (store: false upstream), reasoning items passed back, and price cached and reasoning tokens exactly', async () => {
      const { key: ownKey, accountId } = await harness.paidKey(1_000_000);
      const own = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: ownKey, maxRetries: 0 });
      const reasoningItem = { type: 'reasoning' as const, id: 'rs_01', summary: [], encrypted_content: 'gAAAA-opaque' };
      const response = (await own.responses.create({
        model: 'gpt',
        instructions: 'You count words.',
        input: [{ role: 'user', content: 'Earlier question' }, reasoningItem, { role: 'assistant', content: 'Earlier answer' }, { role: 'user', content: PROMPT }],
        reasoning: { effort: 'low', summary: 'auto' },
        include: ['reasoning.encrypted_content'],
        prompt_cache_key: 'session-1',
        store: true,
      })) as OpenAI.Responses.Response & WithMeta;
      const upstream = upstreamCall('gpt-test')!;
      expect(upstream.path).toBe('/v1/responses');
      expect(upstream.headers.authorization).toBe('Bearer openai-key');
      expect(upstream.body).toMatchObject({ model: 'gpt-test', store: false, prompt_cache_key: 'session-1', include: ['reasoning.encrypted_content'] });
      expect((upstream.body as { input: unknown[] }).input[1]).toEqual(reasoningItem);

      // The gateway's own id (the emulator's are 24 letters and digits), kept as asked: store: true.
      expect(response).toMatchObject({ object: 'response', status: 'completed', model: 'openai/gpt-native', store: true });
      expect(response.id).toMatch(/^resp_[0-9a-f]{32}$/);
      expect(response.output.map((item) => item.type)).toEqual(['reasoning', 'message']);
      expect(response.output[0]).toMatchObject({ encrypted_content: 'emulated', summary: [{ type: 'summary_text', text: 'Considering the request.' }] });
      const usage = response.usage!;
      expect(usage.input_tokens_details.cached_tokens).toBe(Math.floor(usage.input_tokens / 2));
      expect(usage.output_tokens_details.reasoning_tokens).toBe(3);
      const units = { input_tokens: usage.input_tokens - usage.input_tokens_details.cached_tokens, cache_read_input_tokens: usage.input_tokens_details.cached_tokens, output_tokens: usage.output_tokens };
      expect(response.meta!.usage!.credits_used).toBe(creditsOf(units, GPT));
      await eventually(async () => (await harness.usageEntries(accountId, 10)).length === 1, 15_000, 100);
      const [row] = await harness.usageEntries(accountId, 10);
      expect({ endpoint: row.endpoint, model: row.model, units: row.units, credits: Number(row.credits) }).toEqual({ endpoint: 'responses', model: 'openai/gpt-native', units, credits: creditsOf(units, GPT) });
    });

    it("stream OpenAI's typed events as they came, in order, with the final usage and meta.usage; web search passed through and priced", async () => {
      const stream = openai.responses.stream({ model: 'gpt', input: 'What happened today?', tools: [{ type: 'web_search' }] });
      const events: Array<{ type: string; sequence_number: number }> = [];
      for await (const event of stream) events.push(event);
      const final = (await stream.finalResponse()) as OpenAI.Responses.Response & WithMeta;
      expect((upstreamCall('gpt-test')!.body as { tools: unknown; stream: unknown }).tools).toEqual([{ type: 'web_search' }]);
      const types = events.map((event) => event.type);
      expect(types.slice(0, 3)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added']);
      expect(types).toEqual(
        expect.arrayContaining(['response.web_search_call.in_progress', 'response.web_search_call.completed', 'response.content_part.added', 'response.output_text.delta', 'response.output_text.done', 'response.output_item.done']),
      );
      expect(types.indexOf('response.web_search_call.completed')).toBeLessThan(types.indexOf('response.output_text.delta'));
      expect(types.at(-1)).toBe('response.completed');
      expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
      expect(final.output.map((item) => item.type)).toEqual(['web_search_call', 'message']);
      expect(final.output_text).toBe('Hello from the emulator. You said: What happened today?');
      expect(final.usage!.output_tokens).toBe(9);
      const units = { input_tokens: final.usage!.input_tokens, output_tokens: 9, web_search_calls: 1 };
      expect(final.meta!.usage!.credits_used).toBe(creditsOf(units, GPT));
      expect(final.model).toBe('openai/gpt-native');
    });

    it("call Azure OpenAI's v1 Responses API for an Azure source, and drop web_search where the source has no search of its own", async () => {
      const raw = await openai.responses.create({ model: 'openai/gpt-azure', input: PROMPT, tools: [{ type: 'web_search' }, { type: 'function', name: 'noop', parameters: { type: 'object' }, strict: false }] }).withResponse();
      const upstream = upstreamCall('gpt-deployment')!;
      expect(upstream.path).toBe('/openai/v1/responses');
      expect(upstream.headers['api-key']).toBe('azure-key');
      expect((upstream.body as { tools: unknown }).tools).toEqual([{ type: 'function', name: 'noop', parameters: { type: 'object' }, strict: false }]);
      expect(raw.response.headers.get('x-gateway-dropped-tools')).toBe('web_search');
      expect(raw.data.output_text).toBe(`Hello from the emulator. You said: ${PROMPT}`);
      const forced = await openai.responses.create({ model: 'openai/gpt-azure', input: PROMPT, tools: [{ type: 'web_search' }], tool_choice: { type: 'web_search' } as never }).catch((caught: unknown) => caught);
      expect(forced).toBeInstanceOf(OpenAI.BadRequestError);
    });

    it('fall back from a native Responses source to a translated Anthropic one, answering in the Responses shape', async () => {
      const before = emulator.requests.length;
      const response = await openai.responses.create({ model: 'test/gpt-then-claude', input: PROMPT, stream: false });
      expect(emulator.requests.slice(before).map((request) => request.path)).toEqual(['/v1/responses', '/v1/messages']);
      expect(response).toMatchObject({ object: 'response', status: 'completed', model: 'test/gpt-then-claude' });
      expect(response.output_text).toBe(`Hello from the emulator. You said: ${PROMPT}`);
    });

    it('stop the native upstream stream when the client leaves, billing what was generated', async () => {
      const { key: leaverKey, accountId } = await harness.paidKey(1_000_000);
      const leaver = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: leaverKey, maxRetries: 0 });
      const stream = await leaver.responses.create({ model: 'test/slow-gpt', input: 'one two three four five six seven eight nine ten '.repeat(3), max_output_tokens: 500, stream: true });
      let deltas = 0;
      for await (const event of stream) {
        if (event.type === 'response.output_text.delta' && ++deltas === 3) break;
      }
      const { row, units } = await billedAfterLeaving('gpt-test@chunk-delay=150', accountId);
      expect(row.endpoint).toBe('responses');
      expect(units.output_tokens).toBeGreaterThan(0);
      expect(units.output_tokens).toBeLessThan(30);
      expect(await harness.balance(leaverKey)).toBe(1_000_000 - Number(row.credits));
    });
  });
});
