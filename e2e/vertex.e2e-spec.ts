import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import { GoogleGenAI, Type, type Content, type GenerateContentResponse } from '@google/genai';
import OpenAI from 'openai';
import type { ResponseFunctionToolCall, ResponseInputItem } from 'openai/resources/responses/responses';
import { stringify } from 'yaml';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { startStandaloneHarness, type StandaloneHarness, type UsageEntry } from './support/standalone-harness';

type WithMeta = { meta?: { usage?: { credits_used: number } } };
/** Credits at $0.15 / $0.60 per million input / output tokens, 2,000,000 credits per USD. */
const creditsFor = (input: number, output: number) => (input * 300_000 + output * 1_200_000) / 1e6;
const PROMPT = 'Count the words in this sentence';
const REPLY = `Hello from the emulator. You said: ${PROMPT}`;
const WEATHER = 'What is the weather in Paris?';
const PROJECT = 'emulated-project';
const LOCATION = 'us-east5';
/**
 * google-auth-library replaces a token 5 minutes before it expires: the emulator's tokens live
 * 5 minutes and 2 seconds, so the gateway's is fresh for 2 seconds and replaced during the run.
 */
const TOKEN_LIFETIME_SECONDS = 302;
const UPSTREAM = {
  claude: new RegExp(`^/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/anthropic/models/claude-sonnet-4-5@20250929:(rawPredict|streamRawPredict)$`),
  gemini: new RegExp(`^/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/google/models/gemini-2\\.5-flash:(generateContent|streamGenerateContent\\?alt=sse)$`),
};
const chatWeatherTool: OpenAI.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { location: { type: 'string' }, unit: { anyOf: [{ type: 'string' }, { type: 'null' }] } }, required: ['location'], additionalProperties: false } },
};

/**
 * Google Vertex AI as a providers-file connection (`kind: vertex`, a service-account key file
 * whose token_uri is the emulator's token endpoint), behind the standalone gateway: Claude through
 * rawPredict and Gemini through generateContent, by chat completions, Responses, Messages and
 * Google's Gemini API, whole and streamed, with tool round trips; every call billed from the
 * usage Vertex reported; the token replaced during the run without a failed request.
 */
describe('Vertex AI, end to end: Claude and Gemini with a service account', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let folder: string;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let genai: GoogleGenAI;
  let key: string;
  let accountId: string;
  const CREDITS = 50_000_000;
  /** What each paid call's client was told it used, to be found in the ledger. */
  const reported: Array<{ model: string; input: number; output: number }> = [];

  beforeAll(async () => {
    emulator = await startEmulator({ vertex: { tokenLifetimeSeconds: TOKEN_LIFETIME_SECONDS, project: PROJECT } });
    folder = await mkdtemp(path.join(tmpdir(), 'igw-vertex-'));
    const credentialsFile = path.join(folder, 'service-account.json');
    await writeFile(credentialsFile, JSON.stringify(emulator.vertex.serviceAccount()));
    const providersFile = path.join(folder, 'providers.yaml');
    // No project: the gateway takes the service account's own.
    await writeFile(providersFile, stringify({ connections: [{ name: 'vertex-us', kind: 'vertex', location: LOCATION, baseUrl: emulator.url, credentialsFile }] }));
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/vertex-catalogue.yaml'),
      PROVIDERS_FILE: providersFile,
      // Should any path ask for the GCE metadata server, it stays on this machine and is told there is none.
      GCE_METADATA_HOST: '127.0.0.1:9',
      METADATA_SERVER_DETECTION: 'none',
    });
    ({ key, accountId } = await harness.paidKey(CREDITS));
    openai = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: key, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: harness.gateway, apiKey: key, maxRetries: 0 });
    // The SDK sends through Undici's global dispatcher unless given a fetch, and Jest's sandbox has none.
    genai = new GoogleGenAI({ apiKey: key, httpOptions: { baseUrl: harness.gateway, fetch: (input, init) => fetch(input, init) } });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  /** The emulator's requests since `from`, other than the token endpoint's. */
  const upstreamSince = (from: number) => emulator.requests.slice(from).filter((request) => request.path !== '/token');
  const mark = () => emulator.requests.length;

  it.each([
    ['claude', 'anthropic/claude-sonnet-4-5'],
    ['gemini', 'google/gemini-2.5-flash'],
  ] as const)('answers chat completions on %s served by Vertex AI, whole and streamed, billed from its usage', async (model, catalogueId) => {
    const from = mark();
    const completion = (await openai.chat.completions.create({ model, messages: [{ role: 'user', content: PROMPT }], max_tokens: 200 })) as OpenAI.ChatCompletion & WithMeta;
    expect(completion.model).toBe(catalogueId);
    expect(completion.choices[0].message.content).toBe(REPLY);
    const usage = completion.usage!;
    expect(completion.meta?.usage?.credits_used).toBe(creditsFor(usage.prompt_tokens, usage.completion_tokens));
    reported.push({ model: catalogueId, input: usage.prompt_tokens, output: usage.completion_tokens });

    const stream = await openai.chat.completions.create({ model, messages: [{ role: 'user', content: PROMPT }], max_tokens: 200, stream: true, stream_options: { include_usage: true } });
    let text = '';
    let streamedUsage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      if (chunk.usage) streamedUsage = chunk.usage;
    }
    expect(text).toBe(REPLY);
    expect(streamedUsage).toMatchObject({ prompt_tokens: usage.prompt_tokens, completion_tokens: usage.completion_tokens });
    reported.push({ model: catalogueId, input: streamedUsage!.prompt_tokens, output: streamedUsage!.completion_tokens });

    const upstream = upstreamSince(from);
    expect(upstream.map((request) => request.path)).toEqual([expect.stringMatching(UPSTREAM[model]), expect.stringMatching(UPSTREAM[model])]);
    for (const request of upstream) expect(request.headers.authorization).toMatch(/^Bearer ya29\./);
    if (model === 'claude') expect(upstream[0].body).toMatchObject({ anthropic_version: 'vertex-2023-10-16', messages: [{ role: 'user', content: [{ type: 'text', text: PROMPT }] }] });
  });

  it.each([
    ['claude', 'anthropic/claude-sonnet-4-5'],
    ['gemini', 'google/gemini-2.5-flash'],
  ] as const)('runs a chat completions tool round trip on %s, the call streamed', async (model, catalogueId) => {
    const question: OpenAI.ChatCompletionMessageParam = { role: 'user', content: WEATHER };
    const stream = await openai.chat.completions.create({ model, messages: [question], tools: [chatWeatherTool], stream: true, stream_options: { include_usage: true } });
    const argumentParts: string[] = [];
    let id = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      const call = chunk.choices[0]?.delta.tool_calls?.[0];
      if (call?.id) id = call.id;
      if (call?.function?.arguments) argumentParts.push(call.function.arguments);
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(finish).toBe('tool_calls');
    // The emulator fills the optional unit too, as a model may.
    expect(JSON.parse(argumentParts.join(''))).toMatchObject({ location: 'Paris' });
    reported.push({ model: catalogueId, input: usage!.prompt_tokens, output: usage!.completion_tokens });
    if (model === 'gemini') {
      // Vertex AI's Gemini refuses additionalProperties and anyOf-with-null: the schema reached it cleaned.
      const sent = emulator.requests.filter((request) => UPSTREAM.gemini.test(request.path)).at(-1)!.body as { tools: Array<{ functionDeclarations: Array<{ parameters: unknown }> }> };
      expect(sent.tools[0].functionDeclarations[0].parameters).toEqual({ type: 'object', properties: { location: { type: 'string' }, unit: { type: 'string', nullable: true } }, required: ['location'] });
    }

    const answer = (await openai.chat.completions.create({
      model,
      tools: [chatWeatherTool],
      messages: [question, { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: argumentParts.join('') } }] }, { role: 'tool', tool_call_id: id, content: 'Sunny, 21 degrees' }],
    })) as OpenAI.ChatCompletion & WithMeta;
    expect(answer.choices[0].message.content).toBe('Tool said: Sunny, 21 degrees');
    reported.push({ model: catalogueId, input: answer.usage!.prompt_tokens, output: answer.usage!.completion_tokens });
  });

  it.each([
    ['claude', 'anthropic/claude-sonnet-4-5'],
    ['gemini', 'google/gemini-2.5-flash'],
  ] as const)('answers the Responses API on %s, a streamed tool round trip included', async (model, catalogueId) => {
    const whole = await openai.responses.create({ model, instructions: 'Be brief.', input: PROMPT });
    expect(whole.output_text).toBe(REPLY);
    reported.push({ model: catalogueId, input: whole.usage!.input_tokens, output: whole.usage!.output_tokens });

    const weatherTool = { type: 'function' as const, name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] }, strict: false };
    const question: ResponseInputItem = { role: 'user', content: WEATHER };
    const called = await openai.responses.stream({ model, tools: [weatherTool], input: [question] }).finalResponse();
    const call = called.output.find((item) => item.type === 'function_call') as ResponseFunctionToolCall | undefined;
    expect(call).toMatchObject({ name: 'get_weather', arguments: '{"location":"Paris"}' });
    reported.push({ model: catalogueId, input: called.usage!.input_tokens, output: called.usage!.output_tokens });
    const answer = await openai.responses.stream({ model, tools: [weatherTool], input: [question, ...(called.output as ResponseInputItem[]), { type: 'function_call_output', call_id: call!.call_id, output: 'Sunny, 21 degrees' }] }).finalResponse();
    expect(answer.output_text).toBe('Tool said: Sunny, 21 degrees');
    reported.push({ model: catalogueId, input: answer.usage!.input_tokens, output: answer.usage!.output_tokens });
  });

  it.each([
    ['claude', 'anthropic/claude-sonnet-4-5'],
    ['gemini', 'google/gemini-2.5-flash'],
  ] as const)('answers the Messages API on %s (natively on Claude, through rawPredict), a streamed tool round trip included', async (model, catalogueId) => {
    const from = mark();
    const message = (await anthropic.messages.create({ model, max_tokens: 200, messages: [{ role: 'user', content: PROMPT }] })) as Anthropic.Message & WithMeta;
    expect(message.content).toEqual([{ type: 'text', text: REPLY }]);
    expect(message.meta?.usage?.credits_used).toBe(creditsFor(message.usage.input_tokens, message.usage.output_tokens));
    reported.push({ model: catalogueId, input: message.usage.input_tokens, output: message.usage.output_tokens });
    const upstream = upstreamSince(from)[0];
    expect(upstream.path).toMatch(UPSTREAM[model]);
    // Natively: the client's Messages body, with Vertex's version and no model.
    if (model === 'claude') expect(upstream.body).toEqual({ anthropic_version: 'vertex-2023-10-16', max_tokens: 200, messages: [{ role: 'user', content: PROMPT }], stream: false });

    const weatherTool = { name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object' as const, properties: { location: { type: 'string' } }, required: ['location'] } };
    const question: Anthropic.MessageParam = { role: 'user', content: WEATHER };
    const first = await anthropic.messages.stream({ model, max_tokens: 200, tools: [weatherTool], messages: [question] }).finalMessage();
    expect(first.stop_reason).toBe('tool_use');
    const toolUse = first.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use');
    expect(toolUse).toMatchObject({ name: 'get_weather', input: { location: 'Paris' } });
    reported.push({ model: catalogueId, input: first.usage.input_tokens, output: first.usage.output_tokens });
    const second = await anthropic.messages.stream({
      model,
      max_tokens: 200,
      tools: [weatherTool],
      messages: [question, { role: 'assistant', content: first.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: toolUse!.id, content: 'Sunny, 21 degrees' }] }],
    }).finalMessage();
    expect(second.content).toEqual([{ type: 'text', text: 'Tool said: Sunny, 21 degrees' }]);
    reported.push({ model: catalogueId, input: second.usage.input_tokens, output: second.usage.output_tokens });
  });

  it("answers Google's Gemini API on the Vertex-served Gemini natively, streamed and with a function call", async () => {
    const from = mark();
    const whole = (await genai.models.generateContent({ model: 'gemini', contents: PROMPT })) as GenerateContentResponse & WithMeta;
    expect(whole.text).toBe(REPLY);
    const { promptTokenCount, candidatesTokenCount } = whole.usageMetadata!;
    reported.push({ model: 'google/gemini-2.5-flash', input: promptTokenCount!, output: candidatesTokenCount! });
    const upstream = upstreamSince(from)[0];
    expect(upstream.path).toMatch(UPSTREAM.gemini);
    expect(upstream.body).toEqual({ contents: [{ role: 'user', parts: [{ text: PROMPT }] }] });

    let streamed = '';
    let last: GenerateContentResponse | undefined;
    for await (const part of await genai.models.generateContentStream({ model: 'gemini', contents: PROMPT })) {
      streamed += part.text ?? '';
      last = part;
    }
    expect(streamed).toBe(REPLY);
    reported.push({ model: 'google/gemini-2.5-flash', input: last!.usageMetadata!.promptTokenCount!, output: last!.usageMetadata!.candidatesTokenCount! });

    const tools = [{ functionDeclarations: [{ name: 'get_weather', description: 'The weather in a city', parameters: { type: Type.OBJECT, properties: { location: { type: Type.STRING } }, required: ['location'] } }] }];
    const question: Content = { role: 'user', parts: [{ text: WEATHER }] };
    const call = await genai.models.generateContent({ model: 'gemini', contents: [question], config: { tools } });
    expect(call.functionCalls).toEqual([expect.objectContaining({ name: 'get_weather', args: { location: 'Paris' } })]);
    reported.push({ model: 'google/gemini-2.5-flash', input: call.usageMetadata!.promptTokenCount!, output: call.usageMetadata!.candidatesTokenCount! });
  });

  it('embeds through predict, billed from the token counts Vertex AI reports', async () => {
    const from = mark();
    const answer = await openai.embeddings.create({ model: 'vertex-embed', input: ['one two three', 'four five'], encoding_format: 'float' });
    expect(answer.data.map((item) => item.embedding.length)).toEqual([1536, 1536]);
    expect(answer.usage.prompt_tokens).toBe(5);
    reported.push({ model: 'google/text-embedding-005', input: 5, output: 0 });
    expect(upstreamSince(from).map((request) => request.path)).toEqual([`/v1/projects/${PROJECT}/locations/${LOCATION}/publishers/google/models/text-embedding-005:predict`]);
  });

  it('replaces its token before it expires, without a failed request', async () => {
    const issued = emulator.vertex.tokens.issued;
    // The token in use is fresh for 2 seconds at most: past that, the next call gets a new one first.
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    const tokensBefore = new Set(emulator.requests.filter((request) => request.path !== '/token').map((request) => request.headers.authorization));
    const from = mark();
    const completion = await openai.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: PROMPT }], max_tokens: 200 });
    expect(completion.choices[0].message.content).toBe(REPLY);
    reported.push({ model: 'anthropic/claude-sonnet-4-5', input: completion.usage!.prompt_tokens, output: completion.usage!.completion_tokens });
    expect(emulator.vertex.tokens.issued).toBe(issued + 1);
    const sent = upstreamSince(from);
    expect(sent).toHaveLength(1);
    expect(tokensBefore.has(sent[0].headers.authorization)).toBe(false);
  });

  it('bills every call in the ledger exactly from the usage its client was told', async () => {
    await eventually(async () => (await harness.usageEntries(accountId, 100)).length >= reported.length, 15_000, 100);
    const rows: UsageEntry[] = await harness.usageEntries(accountId, 100);
    const rowKey = (model: string | null, input: number, output: number) => `${model} ${input} ${output}`;
    expect(rows.map((row) => rowKey(row.model, row.units?.input_tokens ?? 0, row.units?.output_tokens ?? 0)).sort()).toEqual(reported.map((entry) => rowKey(entry.model, entry.input, entry.output)).sort());
    for (const row of rows) expect(Number(row.credits)).toBe(creditsFor(row.units?.input_tokens ?? 0, row.units?.output_tokens ?? 0));
    const spent = rows.reduce((sum, row) => sum + Number(row.credits), 0);
    await eventually(async () => Math.abs((await harness.balance(key)) - (CREDITS - spent)) < 1e-6, 15_000, 100);
  });
});
