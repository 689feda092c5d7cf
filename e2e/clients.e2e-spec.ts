import path from 'node:path';
import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { AIMessageChunk } from '@langchain/core/messages';
import { ChatOpenAI, OpenAIEmbeddings } from '@langchain/openai';
import { APICallError, embed, embedMany, generateText, jsonSchema, streamText, tool } from 'ai';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

const UNKNOWN_MODEL = "Not Found: no model named 'acme/nope' in the catalogue. GET /v1/models lists the model ids and aliases a request can use.";
const PROMPT = 'Count the words in this sentence';
const WEATHER = 'What is the weather in Paris?';
const weatherParameters = { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } as const;

/**
 * The clients teams already use besides the official `openai` package, unchanged, pointed at the
 * standalone gateway (every upstream played by the emulator): the Vercel AI SDK's
 * OpenAI-compatible provider and LangChain JS, for chat, streams with usage, tools, embeddings,
 * the Anthropic and Gemini models, and errors. (The `openai` package: chat.e2e-spec.ts,
 * embeddings.e2e-spec.ts, and openai-models.e2e-spec.ts for the catalogue.)
 */
describe('the clients teams already use, against the gateway', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let key: string;
  let baseURL: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/clients-catalogue.yaml'), ...emulatedProviders(emulator.url) });
    key = (await harness.paidKey(20_000_000)).key;
    baseURL = `${harness.gateway}/v1`;
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  describe("the Vercel AI SDK's OpenAI-compatible provider", () => {
    let gateway: ReturnType<typeof createOpenAICompatible>;
    beforeAll(() => {
      gateway = createOpenAICompatible({ name: 'gateway', baseURL, apiKey: key, includeUsage: true });
    });

    it('generates and streams the same text, with usage both ways', async () => {
      const generated = await generateText({ model: gateway('mini'), prompt: PROMPT, maxRetries: 0 });
      expect(generated.text).toContain(PROMPT);
      expect(generated.finishReason).toBe('stop');
      expect(generated.usage.inputTokens).toBeGreaterThan(0);
      expect(generated.usage.outputTokens).toBeGreaterThan(0);
      expect(generated.response.modelId).toBe('acme/chat-mini');

      const streamed = streamText({ model: gateway('mini'), prompt: PROMPT, maxRetries: 0 });
      const pieces: string[] = [];
      for await (const piece of streamed.textStream) pieces.push(piece);
      expect(pieces.length).toBeGreaterThan(1);
      expect(pieces.join('')).toBe(generated.text);
      const usage = await streamed.usage;
      expect([usage.inputTokens, usage.outputTokens]).toEqual([generated.usage.inputTokens, generated.usage.outputTokens]);
    });

    it('calls tools, whole and streamed', async () => {
      const tools = { get_weather: tool({ description: 'The weather in a city', inputSchema: jsonSchema<{ location: string }>({ ...weatherParameters, required: [...weatherParameters.required] }) }) };
      const generated = await generateText({ model: gateway('mini'), prompt: WEATHER, tools, maxRetries: 0 });
      expect(generated.finishReason).toBe('tool-calls');
      expect(generated.toolCalls.map((toolCall) => [toolCall.toolName, toolCall.input])).toEqual([['get_weather', { location: 'Paris' }]]);

      const streamed = streamText({ model: gateway('mini'), prompt: WEATHER, tools, maxRetries: 0 });
      expect((await streamed.toolCalls).map((toolCall) => [toolCall.toolName, toolCall.input])).toEqual([['get_weather', { location: 'Paris' }]]);
      expect(await streamed.finishReason).toBe('tool-calls');
    });

    it('embeds one value and many', async () => {
      const one = await embed({ model: gateway.embeddingModel('embed'), value: 'hello gateway', maxRetries: 0 });
      expect(one.embedding).toHaveLength(1536);
      expect(one.usage.tokens).toBe(2);
      const many = await embedMany({ model: gateway.embeddingModel('acme/embed-small'), values: ['one', 'two words'], maxRetries: 0 });
      expect(many.embeddings.map((embedding) => embedding.length)).toEqual([1536, 1536]);
      expect(many.embeddings[0]).not.toEqual(many.embeddings[1]);
    });

    it.each(['claude', 'gemini'])('talks to the %s model through the OpenAI shape', async (model) => {
      const generated = await generateText({ model: gateway(model), prompt: PROMPT, maxRetries: 0 });
      expect(generated.text.length).toBeGreaterThan(0);
      expect(generated.usage.inputTokens).toBeGreaterThan(0);
    });

    it("surfaces the gateway's errors as APICallError with status and message", async () => {
      const unknown = await generateText({ model: gateway('acme/nope'), prompt: PROMPT, maxRetries: 0 }).catch((caught: unknown) => caught);
      expect(APICallError.isInstance(unknown)).toBe(true);
      const apiError = unknown as APICallError;
      expect([apiError.statusCode, apiError.message, apiError.isRetryable]).toEqual([404, UNKNOWN_MODEL, false]);
      expect(JSON.parse(apiError.responseBody ?? '{}')).toMatchObject({ statusCode: 404, error: { code: 'model_not_found', type: 'not_found_error' } });

      const wrongKey = createOpenAICompatible({ name: 'gateway', baseURL, apiKey: 'sk-not-a-key' });
      const unauthorized = await generateText({ model: wrongKey('mini'), prompt: PROMPT, maxRetries: 0 }).catch((caught: unknown) => caught);
      expect((unauthorized as APICallError).statusCode).toBe(401);
    });
  });

  describe('LangChain JS (@langchain/openai)', () => {
    const chat = (model: string, apiKey = key) => new ChatOpenAI({ model, apiKey, configuration: { baseURL }, maxRetries: 0 });

    it('invokes and streams the same text, with usage both ways', async () => {
      const answer = await chat('mini').invoke(PROMPT);
      expect(answer.content).toContain(PROMPT);
      expect(answer.response_metadata.model_name).toBe('acme/chat-mini');
      expect(answer.usage_metadata?.input_tokens).toBeGreaterThan(0);
      expect(answer.usage_metadata?.output_tokens).toBeGreaterThan(0);

      let streamed: AIMessageChunk | undefined;
      let chunks = 0;
      for await (const chunk of await chat('mini').stream(PROMPT)) {
        streamed = streamed ? streamed.concat(chunk) : chunk;
        chunks += 1;
      }
      expect(chunks).toBeGreaterThan(1);
      expect(streamed?.content).toBe(answer.content);
      expect([streamed?.usage_metadata?.input_tokens, streamed?.usage_metadata?.output_tokens]).toEqual([
        answer.usage_metadata?.input_tokens,
        answer.usage_metadata?.output_tokens,
      ]);
    });

    it('calls tools, whole and streamed', async () => {
      const withTools = chat('mini').bindTools([{ type: 'function', function: { name: 'get_weather', description: 'The weather in a city', parameters: weatherParameters } }]);
      const answer = await withTools.invoke(WEATHER);
      expect(answer.tool_calls?.map((toolCall) => [toolCall.name, toolCall.args])).toEqual([['get_weather', { location: 'Paris' }]]);

      let streamed: AIMessageChunk | undefined;
      for await (const chunk of await withTools.stream(WEATHER)) streamed = streamed ? streamed.concat(chunk) : chunk;
      expect(streamed?.tool_calls?.map((toolCall) => [toolCall.name, toolCall.args])).toEqual([['get_weather', { location: 'Paris' }]]);
    });

    it('embeds a query and documents', async () => {
      const embeddings = new OpenAIEmbeddings({ model: 'embed', apiKey: key, configuration: { baseURL }, maxRetries: 0 });
      expect(await embeddings.embedQuery('hello gateway')).toHaveLength(1536);
      const documents = await embeddings.embedDocuments(['one', 'two words']);
      expect(documents.map((vector) => vector.length)).toEqual([1536, 1536]);
    });

    it.each(['claude', 'gemini'])('talks to the %s model through the OpenAI shape', async (model) => {
      const answer = await chat(model).invoke(PROMPT);
      expect(String(answer.content).length).toBeGreaterThan(0);
    });

    it("surfaces the gateway's errors with status, code and message", async () => {
      const unknown = (await chat('acme/nope')
        .invoke(PROMPT)
        .catch((caught: unknown) => caught)) as Error & { status?: number; code?: string; lc_error_code?: string };
      expect([unknown.status, unknown.code, unknown.lc_error_code]).toEqual([404, 'model_not_found', 'MODEL_NOT_FOUND']);
      expect(unknown.message).toContain(UNKNOWN_MODEL);

      const unauthorized = (await chat('mini', 'sk-not-a-key')
        .invoke(PROMPT)
        .catch((caught: unknown) => caught)) as Error & { status?: number };
      expect(unauthorized.status).toBe(401);
    });
  });
});
