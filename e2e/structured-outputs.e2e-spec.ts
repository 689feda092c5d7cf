import path from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { ChatOpenAI } from '@langchain/openai';
import { generateObject, generateText, streamObject, tool } from 'ai';
import { z } from 'zod';
import { eventually } from '@igw/testing';
import { startEmulator, type RecordedRequest, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

// Structured outputs through the standalone gateway, every upstream played by the emulator as
// in `--demo`: the request reaches each source kind in that kind's own form (what the emulator
// recorded), the answer satisfies the schema in the calling API's own shape, and the client
// libraries' structured calls succeed on their first try (one ledger row).

const Person = z.object({
  name: z.string(),
  email: z.email(),
  role: z.enum(['admin', 'viewer']),
  tags: z.array(z.string()).min(1),
  age: z.number().int().min(18).max(99),
});
const PERSON_SCHEMA = z.toJSONSchema(Person);
const responseFormat = { type: 'json_schema', json_schema: { name: 'person', strict: true, schema: PERSON_SCHEMA } };
const PROMPT = 'Describe a person';

describe('structured outputs on every source kind', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let key: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/structured-catalogue.yaml'), ...emulatedProviders(emulator.url) });
    key = (await harness.paidKey(20_000_000)).key;
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  /** The newest request the emulator got on a path matching `pattern`. */
  const lastUpstream = (pattern: RegExp): RecordedRequest => {
    const found = [...emulator.requests].reverse().find((request) => pattern.test(request.path));
    if (found === undefined) throw new Error(`the emulator got no request on ${String(pattern)}`);
    return found;
  };
  const chat = (model: string, fields: Record<string, unknown> = {}) =>
    call<{ choices: Array<{ message: { content: string | null; tool_calls?: unknown[] }; finish_reason: string }>; error?: { message: string } }>(`${harness.gateway}/v1/chat/completions`, {
      token: key,
      body: { model, messages: [{ role: 'user', content: PROMPT }], response_format: responseFormat, ...fields },
    });
  const expectPerson = (text: string | null | undefined) => expect(Person.safeParse(JSON.parse(text ?? 'null')).success).toBe(true);

  describe('chat response_format reaches each source kind in its own form', () => {
    it.each([
      ['openai', 'test/openai', /^\/v1\/chat\/completions/, (body: Record<string, unknown>) => expect(body.response_format).toEqual(responseFormat)],
      ['azure', 'test/azure', /^\/openai\/deployments\/my-deployment\/chat\/completions/, (body: Record<string, unknown>) => expect(body.response_format).toEqual(responseFormat)],
      ['anthropic (native structured outputs)', 'test/claude-native', /^\/v1\/messages/, (body: Record<string, unknown>) => {
        expect(body.output_config).toEqual({ format: { type: 'json_schema', schema: PERSON_SCHEMA } });
        expect(body.tools).toBeUndefined();
      }],
      ['anthropic (forced answer tool)', 'test/claude-tool', /^\/v1\/messages/, (body: Record<string, unknown>) => {
        expect(body.output_config).toBeUndefined();
        expect(body.tools).toEqual([{ name: 'person', description: expect.any(String), input_schema: PERSON_SCHEMA }]);
        expect(body.tool_choice).toEqual({ type: 'tool', name: 'person' });
      }],
      ['google', 'test/gemini', /^\/v1beta\/models\/gemini-test:generateContent/, (body: Record<string, unknown>) => {
        expect(body.generationConfig).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: PERSON_SCHEMA });
      }],
    ])('%s: sent as that kind asks it, answered as JSON satisfying the schema', async (_kind, model, upstreamPath, expectUpstream) => {
      const answer = await chat(model);
      expect(answer.status).toBe(200);
      expect(answer.body.choices[0].finish_reason).toBe('stop');
      expect(answer.body.choices[0].message.tool_calls).toBeUndefined();
      expectPerson(answer.body.choices[0].message.content);
      expectUpstream(lastUpstream(upstreamPath).body as Record<string, unknown>);
    });

    it('anthropic (forced answer tool), streamed: the tool input arrives as content deltas', async () => {
      const response = await fetch(`${harness.gateway}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'test/claude-tool', messages: [{ role: 'user', content: PROMPT }], response_format: responseFormat, stream: true }),
      });
      expect(response.status).toBe(200);
      const chunks = (await response.text())
        .split('\n')
        .filter((line) => line.startsWith('data: {'))
        .map((line) => JSON.parse(line.slice(6)) as { choices: Array<{ delta: { content?: string; tool_calls?: unknown }; finish_reason: string | null }> });
      expect(chunks.some((chunk) => chunk.choices[0]?.delta.tool_calls !== undefined)).toBe(false);
      expectPerson(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''));
      expect(chunks.map((chunk) => chunk.choices[0]?.finish_reason).filter(Boolean)).toEqual(['stop']);
    });

    it('anthropic without structured outputs: a format with a forced tool of its own is a 400 naming response_format', async () => {
      const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }];
      const answer = await chat('test/claude-tool', { tools, tool_choice: 'required' });
      expect(answer.status).toBe(400);
      expect(answer.body.error?.message).toContain('response_format');
    });
  });

  describe('an Anthropic model (and every other kind) answers JSON satisfying the schema through every API', () => {
    const models = ['test/claude-native', 'test/claude-tool', 'test/openai', 'test/azure', 'test/gemini'];
    it.each(models)('%s: Responses text.format, an output_text of the JSON', async (model) => {
      const answer = await call<{ output: Array<{ type: string; content?: Array<{ type: string; text: string }> }> }>(`${harness.gateway}/v1/responses`, {
        token: key,
        body: { model, input: PROMPT, text: { format: { type: 'json_schema', name: 'person', strict: true, schema: PERSON_SCHEMA } } },
      });
      expect(answer.status).toBe(200);
      const text = answer.body.output.find((item) => item.type === 'message')?.content?.find((part) => part.type === 'output_text')?.text;
      expectPerson(text);
    });

    it.each([
      ['test/claude-native', (body: Record<string, unknown>) => expect(body.output_config).toEqual({ format: { type: 'json_schema', schema: PERSON_SCHEMA } })],
      ['test/claude-tool', (body: Record<string, unknown>) => expect(body.tool_choice).toEqual({ type: 'tool', name: 'answer' })],
    ])('%s: Messages output_config.format, a text block of the JSON', async (model, expectUpstream) => {
      const answer = await call<{ content: Array<{ type: string; text?: string }>; stop_reason: string }>(`${harness.gateway}/v1/messages`, {
        headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
        body: { model, max_tokens: 1024, messages: [{ role: 'user', content: PROMPT }], output_config: { format: { type: 'json_schema', schema: PERSON_SCHEMA } } },
      });
      expect(answer.status).toBe(200);
      expect(answer.body.stop_reason).toBe('end_turn');
      expect(answer.body.content.map((block) => block.type)).toEqual(['text']);
      expectPerson(answer.body.content[0].text);
      expectUpstream(lastUpstream(/^\/v1\/messages/).body as Record<string, unknown>);
    });

    it.each([
      ['test/openai', /^\/v1\/chat\/completions/, (body: Record<string, unknown>) => expect(body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'answer', schema: PERSON_SCHEMA } })],
      ['test/azure', /^\/openai\/deployments\/my-deployment\/chat\/completions/, (body: Record<string, unknown>) => expect(body.response_format).toEqual({ type: 'json_schema', json_schema: { name: 'answer', schema: PERSON_SCHEMA } })],
      ['test/gemini', /^\/v1beta\/models\/gemini-test:generateContent/, (body: Record<string, unknown>) => expect(body.generationConfig).toMatchObject({ responseMimeType: 'application/json', responseJsonSchema: PERSON_SCHEMA })],
    ])('Messages output_config.format on %s reaches it as that kind asks a response format', async (model, upstreamPath, expectUpstream) => {
      const answer = await call<{ content: Array<{ type: string; text?: string }> }>(`${harness.gateway}/v1/messages`, {
        headers: { 'x-api-key': key, 'anthropic-version': '2023-06-01' },
        body: { model, max_tokens: 1024, messages: [{ role: 'user', content: PROMPT }], output_config: { format: { type: 'json_schema', schema: PERSON_SCHEMA } } },
      });
      expect(answer.status).toBe(200);
      expectPerson(answer.body.content[0].text);
      expectUpstream(lastUpstream(upstreamPath).body as Record<string, unknown>);
    });
  });

  describe('client libraries succeed on their first call', () => {
    const baseURL = () => `${harness.gateway}/v1`;

    /** The account's ledger once its first row is in, a moment later (so retries would show). */
    async function ledgerRows(accountId: string): Promise<number> {
      await eventually(async () => (await harness.usageEntries(accountId, 10)).length >= 1, 15_000, 100);
      await new Promise((resolve) => setTimeout(resolve, 300));
      return (await harness.usageEntries(accountId, 10)).length;
    }

    it.each(['test/openai', 'test/claude-tool', 'test/gemini'])("the Vercel AI SDK's generateObject with a zod schema, on %s: one call, one ledger row", async (model) => {
      const paid = await harness.paidKey(1_000_000);
      const gateway = createOpenAICompatible({ name: 'gateway', baseURL: baseURL(), apiKey: paid.key, supportsStructuredOutputs: true });
      const { object } = await generateObject({ model: gateway(model), schema: Person, prompt: PROMPT, maxRetries: 0 });
      expect(Person.parse(object)).toEqual(object);
      expect(await ledgerRows(paid.accountId)).toBe(1);
    });

    it("the Vercel AI SDK's streamObject on an Anthropic model without structured outputs", async () => {
      const gateway = createOpenAICompatible({ name: 'gateway', baseURL: baseURL(), apiKey: key, supportsStructuredOutputs: true });
      const streamed = streamObject({ model: gateway('test/claude-tool'), schema: Person, prompt: PROMPT, maxRetries: 0 });
      let partials = 0;
      for await (const _partial of streamed.partialObjectStream) partials += 1;
      expect(partials).toBeGreaterThan(1);
      expect(Person.safeParse(await streamed.object).success).toBe(true);
    });

    it("LangChain's withStructuredOutput(zodSchema): one call, one ledger row", async () => {
      const paid = await harness.paidKey(1_000_000);
      const model = new ChatOpenAI({ model: 'mini', apiKey: paid.key, configuration: { baseURL: baseURL() }, maxRetries: 0 });
      const person = await model.withStructuredOutput(Person).invoke(PROMPT);
      expect(Person.safeParse(person).success).toBe(true);
      expect(await ledgerRows(paid.accountId)).toBe(1);
    });

    it("a tool call's arguments satisfy the tool's schema", async () => {
      const Forecast = z.object({ city: z.string().min(1), days: z.number().int().min(1).max(7), unit: z.enum(['celsius', 'fahrenheit']) });
      const gateway = createOpenAICompatible({ name: 'gateway', baseURL: baseURL(), apiKey: key });
      const generated = await generateText({ model: gateway('mini'), prompt: 'Plan the week', tools: { forecast: tool({ description: 'The forecast', inputSchema: Forecast }) }, toolChoice: 'required', maxRetries: 0 });
      expect(generated.toolCalls).toHaveLength(1);
      expect(Forecast.safeParse(generated.toolCalls[0].input).success).toBe(true);
    });
  });
});
