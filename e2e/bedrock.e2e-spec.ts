import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { podRoleEnvironment } from './support/cloud-identity';
import { startStandaloneHarness, type StandaloneHarness, type UsageEntry } from './support/standalone-harness';

const CLAUDE_ID = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
const WEB_IDENTITY_TOKEN = 'eyJhbGciOiJSUzI1NiJ9.emulated-service-account-token.signature';
/** The emulator's STS sessions last this long: the gateway renews them at half their life, several times a run. */
const SESSION_SECONDS = 4;
const PROMPT = 'Count the words in this sentence';
const REPLY = `Hello from the emulator. You said: ${PROMPT}`;
const weatherTool: OpenAI.Chat.ChatCompletionTool = {
  type: 'function',
  function: { name: 'get_weather', description: 'The weather in a city', parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] } },
};

/**
 * Amazon Bedrock end to end, with only a role on the pod: the gateway's two Bedrock connections
 * find their credentials through the IRSA flow (AWS_ROLE_ARN, a web identity token file and
 * AWS_ENDPOINT_URL_STS pointing at the emulator's STS, no key in any variable), and every call
 * they make is SigV4-signed and verified by the emulator. Claude answers through InvokeModel on
 * chat completions, Responses and Messages (official clients), streamed and not, with a tool
 * round trip; Nova and Llama through Converse; a throttled deployment falls over to its sibling;
 * the short sessions are renewed mid-run without a failed request; every answer is billed from
 * the usage Bedrock reported.
 */
describe('Amazon Bedrock, end to end with a pod role (IRSA) and SigV4 the emulator verifies', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let folder: string;
  let openai: OpenAI;
  let anthropic: Anthropic;
  let accountId: string;
  /** The usage of every answer, as the client saw it: the ledger must hold one row for each, priced from it. */
  const answered: Array<{ model: string; input: number; output: number }> = [];

  beforeAll(async () => {
    emulator = await startEmulator({ bedrock: { webIdentityToken: WEB_IDENTITY_TOKEN, sessionSeconds: SESSION_SECONDS } });
    folder = await mkdtemp(path.join(tmpdir(), 'igw-bedrock-'));
    const providersFile = path.join(folder, 'providers.yaml');
    await writeFile(
      providersFile,
      `connections:\n  - { name: bedrock-east, kind: bedrock, region: us-east-1, baseUrl: "${emulator.url}" }\n  - { name: bedrock-west, kind: bedrock, region: us-west-2, baseUrl: "${emulator.url}" }\n`,
    );
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/bedrock-catalogue.yaml'),
      PROVIDERS_FILE: providersFile,
      ...(await podRoleEnvironment(folder, emulator.url, WEB_IDENTITY_TOKEN)),
    });
    let key: string;
    ({ key, accountId } = await harness.paidKey(50_000_000));
    openai = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: key, maxRetries: 0 });
    anthropic = new Anthropic({ baseURL: harness.gateway, apiKey: key, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  const modelCalls = () => emulator.requests.filter((request) => request.path.startsWith('/model/'));
  const lastModelCall = () => modelCalls().at(-1)!;

  it('answers chat completions on Claude through a signed InvokeModel, streamed and not, with a tool round trip', async () => {
    const whole = await openai.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: PROMPT }], max_tokens: 200 });
    expect(whole.choices[0].message.content).toBe(REPLY);
    answered.push({ model: 'anthropic/claude-sonnet-4.5', input: whole.usage!.prompt_tokens, output: whole.usage!.completion_tokens });
    const call = lastModelCall();
    expect(call.path).toBe(`/model/${encodeURIComponent(CLAUDE_ID)}/invoke`);
    expect(call.body).toMatchObject({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 200 });
    expect(call.body).not.toHaveProperty('model');
    expect(String(call.headers.authorization)).toMatch(/^AWS4-HMAC-SHA256 Credential=ASIA[0-9A-F]+\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
    expect(call.headers['x-amz-security-token']).toEqual(expect.any(String));

    const stream = await openai.chat.completions.create({ model: 'claude', messages: [{ role: 'user', content: PROMPT }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(REPLY);
    expect(usage).toMatchObject({ prompt_tokens: whole.usage!.prompt_tokens, completion_tokens: whole.usage!.completion_tokens });
    answered.push({ model: 'anthropic/claude-sonnet-4.5', input: usage!.prompt_tokens, output: usage!.completion_tokens });
    expect(lastModelCall().path).toBe(`/model/${encodeURIComponent(CLAUDE_ID)}/invoke-with-response-stream`);

    const question: OpenAI.Chat.ChatCompletionMessageParam = { role: 'user', content: 'What is the weather in Paris?' };
    const toolCall = await openai.chat.completions.create({ model: 'claude', messages: [question], tools: [weatherTool] });
    const called = toolCall.choices[0].message.tool_calls![0] as OpenAI.Chat.ChatCompletionMessageFunctionToolCall;
    expect(toolCall.choices[0].finish_reason).toBe('tool_calls');
    expect(JSON.parse(called.function.arguments)).toEqual({ location: 'Paris' });
    const final = await openai.chat.completions.create({
      model: 'claude',
      tools: [weatherTool],
      messages: [question, toolCall.choices[0].message, { role: 'tool', tool_call_id: called.id, content: 'Sunny, 21 degrees' }],
    });
    expect(final.choices[0].message.content).toBe('Tool said: Sunny, 21 degrees');
    for (const answer of [toolCall, final]) answered.push({ model: 'anthropic/claude-sonnet-4.5', input: answer.usage!.prompt_tokens, output: answer.usage!.completion_tokens });
  });

  it('answers the Responses API on Claude, whole and streamed', async () => {
    const response = await openai.responses.create({ model: 'claude', input: PROMPT });
    expect(response.output_text).toBe(REPLY);
    answered.push({ model: 'anthropic/claude-sonnet-4.5', input: response.usage!.input_tokens, output: response.usage!.output_tokens });
    const stream = openai.responses.stream({ model: 'claude', input: PROMPT });
    let text = '';
    stream.on('response.output_text.delta', (event) => (text += event.delta));
    const streamed = await stream.finalResponse();
    expect(text).toBe(REPLY);
    expect(streamed.usage).toMatchObject({ input_tokens: response.usage!.input_tokens, output_tokens: response.usage!.output_tokens });
    answered.push({ model: 'anthropic/claude-sonnet-4.5', input: streamed.usage!.input_tokens, output: streamed.usage!.output_tokens });
    expect(lastModelCall().path).toMatch(/\/invoke-with-response-stream$/);
  });

  it('answers the Messages API on Claude natively through InvokeModel, streamed and not, with a tool round trip', async () => {
    const message = await anthropic.messages.create({ model: 'claude', max_tokens: 200, messages: [{ role: 'user', content: PROMPT }] });
    expect(message.content).toEqual([{ type: 'text', text: REPLY }]);
    answered.push({ model: 'anthropic/claude-sonnet-4.5', input: message.usage.input_tokens, output: message.usage.output_tokens });
    expect(lastModelCall().body).toEqual({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 200, messages: [{ role: 'user', content: PROMPT }] });

    const stream = anthropic.messages.stream({ model: 'claude', max_tokens: 200, messages: [{ role: 'user', content: PROMPT }] });
    const types: string[] = [];
    for await (const event of stream) types.push(event.type);
    const streamed = await stream.finalMessage();
    expect(types.slice(0, 2)).toEqual(['message_start', 'content_block_start']);
    expect(types.slice(-2)).toEqual(['message_delta', 'message_stop']);
    expect(streamed.content).toEqual(message.content);
    answered.push({ model: 'anthropic/claude-sonnet-4.5', input: streamed.usage.input_tokens, output: streamed.usage.output_tokens });

    const tool = { name: 'get_weather', description: 'The weather in a city', input_schema: { type: 'object' as const, properties: { location: { type: 'string' } }, required: ['location'] } };
    const question = { role: 'user' as const, content: 'What is the weather in Paris?' };
    const call = await anthropic.messages.create({ model: 'claude', max_tokens: 200, tools: [tool], messages: [question] });
    const use = call.content.find((block): block is Anthropic.ToolUseBlock => block.type === 'tool_use')!;
    expect(use).toMatchObject({ name: 'get_weather', input: { location: 'Paris' } });
    const final = await anthropic.messages
      .stream({ model: 'claude', max_tokens: 200, tools: [tool], messages: [question, { role: 'assistant', content: call.content }, { role: 'user', content: [{ type: 'tool_result', tool_use_id: use.id, content: 'Sunny' }] }] })
      .finalMessage();
    expect(final.content).toEqual([{ type: 'text', text: 'Tool said: Sunny' }]);
    for (const answer of [call, final]) answered.push({ model: 'anthropic/claude-sonnet-4.5', input: answer.usage.input_tokens, output: answer.usage.output_tokens });
  });

  it.each([
    ['nova', 'amazon/nova-pro', 'amazon.nova-pro-v1:0'],
    ['llama', 'meta/llama-3.3-70b', 'meta.llama3-3-70b-instruct-v1:0'],
  ])('answers %s through Converse, streamed and not, with a tool round trip', async (alias, model, upstream) => {
    const whole = await openai.chat.completions.create({ model: alias, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: PROMPT }], max_tokens: 200, temperature: 0.5 });
    expect(whole.choices[0].message.content).toBe(REPLY);
    answered.push({ model, input: whole.usage!.prompt_tokens, output: whole.usage!.completion_tokens });
    expect(lastModelCall()).toMatchObject({
      path: `/model/${encodeURIComponent(upstream)}/converse`,
      body: { system: [{ text: 'Be brief.' }], messages: [{ role: 'user', content: [{ text: PROMPT }] }], inferenceConfig: { maxTokens: 200, temperature: 0.5 } },
    });

    const stream = await openai.chat.completions.create({ model: alias, messages: [{ role: 'user', content: 'What is the weather in Paris?' }], tools: [weatherTool], stream: true, stream_options: { include_usage: true } });
    let args = '';
    let id = '';
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      for (const piece of chunk.choices[0]?.delta.tool_calls ?? []) {
        args += piece.function?.arguments ?? '';
        id ||= piece.id ?? '';
      }
      finish = chunk.choices[0]?.finish_reason ?? finish;
      usage = chunk.usage ?? usage;
    }
    expect([JSON.parse(args), finish]).toEqual([{ location: 'Paris' }, 'tool_calls']);
    expect(lastModelCall().path).toBe(`/model/${encodeURIComponent(upstream)}/converse-stream`);
    answered.push({ model, input: usage!.prompt_tokens, output: usage!.completion_tokens });
    const final = await openai.chat.completions.create({
      model: alias,
      tools: [weatherTool],
      messages: [
        { role: 'user', content: 'What is the weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id, type: 'function', function: { name: 'get_weather', arguments: args } }] },
        { role: 'tool', tool_call_id: id, content: 'Sunny' },
      ],
    });
    expect(final.choices[0].message.content).toBe('Tool said: Sunny');
    answered.push({ model, input: final.usage!.prompt_tokens, output: final.usage!.completion_tokens });
  });

  it('falls over from a throttled deployment to its sibling, and cools the throttled one down', async () => {
    const throttledPath = `/model/${encodeURIComponent(`${CLAUDE_ID}@stream-exception=throttlingException`)}`;
    const throttledCalls = () => modelCalls().filter((request) => request.path.startsWith(throttledPath)).length;
    const before = throttledCalls();
    // Streamed: the throttling exception is the stream's first frame, after a 200 head.
    const stream = await openai.chat.completions.create({ model: 'throttled-claude', messages: [{ role: 'user', content: PROMPT }], stream: true, stream_options: { include_usage: true } });
    let text = '';
    let usage: OpenAI.CompletionUsage | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? '';
      usage = chunk.usage ?? usage;
    }
    expect(text).toBe(REPLY);
    answered.push({ model: 'test/throttled-claude', input: usage!.prompt_tokens, output: usage!.completion_tokens });
    expect(throttledCalls()).toBe(before + 1);
    expect(lastModelCall().path).toBe(`/model/${encodeURIComponent(CLAUDE_ID)}/invoke-with-response-stream`);
    expect(String(lastModelCall().headers.authorization)).toContain('/us-west-2/bedrock/aws4_request');
    // Right after, within the 429's cooldown: the sibling answers without the throttled one being asked.
    const message = await anthropic.messages.create({ model: 'throttled-claude', max_tokens: 100, messages: [{ role: 'user', content: PROMPT }] });
    expect(message.content).toEqual([{ type: 'text', text: REPLY }]);
    answered.push({ model: 'test/throttled-claude', input: message.usage.input_tokens, output: message.usage.output_tokens });
    expect(throttledCalls()).toBe(before + 1);
  });

  it("quotes a ValidationException's reason to the client, and keeps an AccessDeniedException for the operator", async () => {
    const invalid = await openai.chat.completions.create({ model: 'invalid-nova', messages: [{ role: 'user', content: PROMPT }] }).catch((error: unknown) => error);
    expect(invalid).toMatchObject({ status: 400, message: expect.stringContaining('The input request is invalid.') });
    const denied = await openai.chat.completions.create({ model: 'denied-nova', messages: [{ role: 'user', content: PROMPT }] }).catch((error: unknown) => error);
    expect(denied).toMatchObject({ status: 502, message: expect.stringContaining("refused the gateway's credentials or account (403)") });
    expect((denied as Error).message).not.toContain("You don't have access");
    await eventually(async () => harness.process.output().includes("bedrock-east refused the gateway's own account (403): You don't have access to the model"), 5_000, 50);
  });

  it('renews the role session before it expires, without a failed request', async () => {
    const issued = emulator.bedrock.issued.AssumeRoleWithWebIdentity;
    // One per connection at least so far, from the token file alone.
    expect(issued).toBeGreaterThanOrEqual(2);
    // Past half the session's life the next call renews it; the old one is still valid meanwhile.
    await new Promise((resolve) => setTimeout(resolve, (SESSION_SECONDS / 2) * 1000 + 200));
    const answer = await openai.chat.completions.create({ model: 'nova', messages: [{ role: 'user', content: PROMPT }] });
    expect(answer.choices[0].message.content).toBe(REPLY);
    answered.push({ model: 'amazon/nova-pro', input: answer.usage!.prompt_tokens, output: answer.usage!.completion_tokens });
    expect(emulator.bedrock.issued.AssumeRoleWithWebIdentity).toBeGreaterThan(issued);
  });

  it('bills every answer exactly from the usage Bedrock reported', async () => {
    await eventually(async () => (await harness.usageEntries(accountId, 100)).length >= answered.length, 15_000, 100);
    const entries = await harness.usageEntries(accountId, 100);
    expect(entries).toHaveLength(answered.length);
    const rows = entries.map((entry: UsageEntry) => ({ model: entry.model, input: entry.units?.input_tokens, output: entry.units?.output_tokens }));
    expect(rows).toEqual(expect.arrayContaining(answered));
    expect(answered).toEqual(expect.arrayContaining(rows));
    for (const entry of entries) {
      const credits = (entry.prices ?? []).reduce((sum, price) => sum + ((entry.units?.[price.unit] ?? 0) * price.price * 2_000_000) / price.per, 0);
      expect(Number(entry.credits)).toBeCloseTo(credits, 6);
      expect(Number(entry.credits)).toBeGreaterThan(0);
    }
    expect(entries.filter((entry) => entry.model === 'test/throttled-claude').map((entry) => entry.deployment)).toEqual([`bedrock-west/${CLAUDE_ID}`, `bedrock-west/${CLAUDE_ID}`]);
  });
});
