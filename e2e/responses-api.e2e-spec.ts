import path from 'node:path';
import OpenAI, { BadRequestError, NotFoundError } from 'openai';
import type { FunctionTool, Response, ResponseFunctionToolCall, ResponseInputItem, ResponseStreamEvent } from 'openai/resources/responses/responses';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

type WithMeta = { meta?: { usage?: { credits_used: number; usd_spent: number } } };
/** Credits of a request to a model priced $0.15 / $0.60 per million tokens, at 2,000,000 credits per USD. */
const creditsFor = (prompt: number, completion: number) => (prompt * 300_000 + completion * 1_200_000) / 1e6;
const PROMPT = 'Count the words in this sentence';
const REPLY = `Hello from the emulator. You said: ${PROMPT}`;
const WEATHER = 'What is the weather in Paris?';
const weatherTool: FunctionTool = {
  type: 'function',
  name: 'get_weather',
  description: 'The weather in a city',
  parameters: { type: 'object', properties: { location: { type: 'string' } }, required: ['location'] },
  strict: false,
};

/**
 * OpenAI's Responses API through the official `openai` SDK (`responses.create`,
 * `responses.stream`), against the standalone gateway with every upstream played by the
 * emulator: an OpenAI-format model and an Anthropic one, a function call round trip, what Codex
 * sends, errors, and the ledger's rows.
 */
describe("OpenAI's Responses API, end to end with the official openai SDK", () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let client: OpenAI;
  let key: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/responses-catalogue.yaml'), ...emulatedProviders(emulator.url) });
    ({ key } = await harness.paidKey(20_000_000));
    client = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: key, maxRetries: 0 });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  it.each([
    ['mini', 'acme/chat-mini'],
    ['claude', 'anthropic/claude-test'],
    ['gemini', 'google/gemini-test'],
  ])('answers responses.create on %s in the Responses shape, priced from the catalogue', async (model, catalogueId) => {
    const response = (await client.responses.create({ model, instructions: 'You count words.', input: PROMPT })) as Response & WithMeta;
    expect(response).toMatchObject({ object: 'response', status: 'completed', model: catalogueId, instructions: 'You count words.' });
    expect(response.id).toMatch(/^resp_/);
    expect(response.output).toEqual([{ id: expect.stringMatching(/^msg_/), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: REPLY, annotations: [], logprobs: [] }] }]);
    // The SDK's own convenience, from the output.
    expect(response.output_text).toBe(REPLY);
    const usage = response.usage!;
    expect(usage.input_tokens).toBeGreaterThan(0);
    expect(usage.output_tokens).toBe(REPLY.split(' ').length);
    expect(usage.total_tokens).toBe(usage.input_tokens + usage.output_tokens);
    expect([usage.input_tokens_details.cached_tokens, usage.output_tokens_details.reasoning_tokens]).toEqual([0, 0]);
    expect(response.meta?.usage?.credits_used).toBe(creditsFor(usage.input_tokens, usage.output_tokens));
  });

  it('says incomplete when max_output_tokens cuts the answer', async () => {
    const response = await client.responses.create({ model: 'claude', input: PROMPT, max_output_tokens: 3 });
    expect([response.status, response.incomplete_details]).toEqual(['incomplete', { reason: 'max_output_tokens' }]);
    expect(response.output_text).toBe('Hello from the');
  });

  it.each(['mini', 'claude'])('streams the typed events in order on %s, to the same response as unstreamed', async (model) => {
    const whole = await client.responses.create({ model, input: PROMPT });
    const stream = client.responses.stream({ model, input: PROMPT });
    const events: ResponseStreamEvent[] = [];
    let text = '';
    for await (const event of stream) {
      events.push(event);
      if (event.type === 'response.output_text.delta') text += event.delta;
    }
    const final = await stream.finalResponse();
    const types = events.map((event) => event.type);
    expect(types.slice(0, 5)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta']);
    expect(types.slice(-5)).toEqual(['response.output_text.delta', 'response.output_text.done', 'response.content_part.done', 'response.output_item.done', 'response.completed']);
    expect(types.filter((type) => type === 'response.output_text.delta').length).toBeGreaterThan(1);
    expect(events.map((event) => event.sequence_number)).toEqual(events.map((_, index) => index));
    expect(text).toBe(REPLY);
    expect(final.status).toBe('completed');
    expect(final.output_text).toBe(REPLY);
    expect(final.output.map((item) => item.type)).toEqual(whole.output.map((item) => item.type));
    expect([final.usage!.input_tokens, final.usage!.output_tokens]).toEqual([whole.usage!.input_tokens, whole.usage!.output_tokens]);
  });

  it.each(['mini', 'claude'])('runs a function call round trip on %s: the call, then its function_call_output in the next input', async (model) => {
    const question: ResponseInputItem = { role: 'user', content: WEATHER };
    const first = client.responses.stream({ model, input: [question], tools: [weatherTool] });
    const argumentDeltas: string[] = [];
    first.on('response.function_call_arguments.delta', (event) => argumentDeltas.push(event.delta));
    const called = await first.finalResponse();
    const call = called.output.find((item) => item.type === 'function_call') as ResponseFunctionToolCall | undefined;
    expect(call).toMatchObject({ type: 'function_call', name: 'get_weather', arguments: '{"location":"Paris"}', call_id: expect.stringMatching(/^(call|toolu)_/) });
    expect(argumentDeltas.join('')).toBe('{"location":"Paris"}');

    const answer = await client.responses.create({
      model,
      tools: [weatherTool],
      input: [question, ...(called.output as ResponseInputItem[]), { type: 'function_call_output', call_id: call!.call_id, output: 'Sunny, 21 degrees' }],
    });
    expect(answer.status).toBe('completed');
    expect(answer.output_text).toBe('Tool said: Sunny, 21 degrees');
  });

  it.each(['mini', 'claude', 'gemini'])('accepts what Codex sends on %s: developer messages, a namespace, web_search, store: false, include, prompt_cache_key, client_metadata, reasoning summaries', async (model) => {
    const body = {
      model,
      instructions: 'You are a coding agent.',
      input: [
        { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Sandbox: workspace-write.' }] },
        { type: 'message', role: 'user', content: [{ type: 'input_text', text: WEATHER }] },
      ],
      tools: [
        { type: 'namespace', name: 'crm', description: 'Customer tools', tools: [{ ...weatherTool }] },
        { type: 'function', name: 'shell', description: 'Runs a command', parameters: { type: 'object', properties: { command: { type: 'array', items: { type: 'string' } } } }, strict: false },
        { type: 'web_search', external_web_access: false },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: false,
      reasoning: { effort: 'medium', summary: 'auto' },
      store: false,
      stream: true,
      include: ['reasoning.encrypted_content'],
      prompt_cache_key: '0b7c4a4e-5a1c-4f4e-9d43-2b1d1f3c8e11',
      client_metadata: { originator: 'codex_exec' },
      text: { verbosity: 'medium' },
    };
    const raw = await fetch(`${harness.gateway}/v1/responses`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body: JSON.stringify(body) });
    expect(raw.status).toBe(200);
    expect(raw.headers.get('content-type')).toMatch(/^text\/event-stream/);
    expect(raw.headers.get('x-gateway-dropped-tools')).toBe('web_search');
    const events = [...(await raw.text()).matchAll(/^data: (.*)$/gm)].map((match) => JSON.parse(match[1]) as { type: string; response?: Response });
    expect(events.at(-1)!.type).toBe('response.completed');
    const call = events.at(-1)!.response!.output.find((item): item is ResponseFunctionToolCall => item.type === 'function_call');
    // The first function is the namespace's: it comes back under its namespace, by its own name.
    expect(call).toMatchObject({ name: 'get_weather', namespace: 'crm', arguments: '{"location":"Paris"}' });
    // The reasoning effort reached the Anthropic source as thinking: its text comes back as the reasoning summary, first.
    const output = events.at(-1)!.response!.output;
    if (model === 'claude') expect(output[0]).toMatchObject({ type: 'reasoning', summary: [{ type: 'summary_text', text: expect.stringMatching(/\S/) }] });
    else expect(output.map((item) => item.type)).toEqual(['function_call']);

    const next = await client.responses.create({
      model,
      store: false,
      tools: body.tools as OpenAI.Responses.Tool[],
      input: [...(body.input as ResponseInputItem[]), call as ResponseInputItem, { type: 'function_call_output', call_id: call!.call_id, output: 'Rain' }],
    });
    expect(next.output_text).toBe('Tool said: Rain');
  });

  it("surfaces the gateway's errors as the SDK's own exceptions", async () => {
    const previous = await client.responses.create({ model: 'mini', input: PROMPT, previous_response_id: 'resp_123' }).catch((caught: unknown) => caught);
    expect(previous).toBeInstanceOf(NotFoundError);
    expect((previous as NotFoundError).message).toContain("Previous response with id 'resp_123' not found.");

    const forced = await client.responses.create({ model: 'mini', input: PROMPT, tools: [{ type: 'web_search_preview' }], tool_choice: { type: 'web_search_preview' } }).catch((caught: unknown) => caught);
    expect(forced).toBeInstanceOf(BadRequestError);
    expect((forced as BadRequestError).message).toContain('forces the built-in tool "web_search_preview"');

    const noInput = await client.responses.create({ model: 'mini' } as OpenAI.Responses.ResponseCreateParamsNonStreaming).catch((caught: unknown) => caught);
    expect(noInput).toBeInstanceOf(BadRequestError);
    expect((noInput as BadRequestError).message).toContain('input');

    const unknown = await client.responses.create({ model: 'acme/nope', input: PROMPT }).catch((caught: unknown) => caught);
    expect(unknown).toBeInstanceOf(NotFoundError);
    expect((unknown as NotFoundError).message).toContain("no model named 'acme/nope'");

    const notChat = await client.responses.create({ model: 'embed', input: PROMPT }).catch((caught: unknown) => caught);
    expect(notChat).toBeInstanceOf(BadRequestError);
    expect((notChat as BadRequestError).message).toContain("model: 'acme/embed-small' is an openai/embeddings model, not a chat model.");
  });

  // A client that leaves a stream stops it, as on chat completions: this one (~40 events, 150 ms apart) is closed at once.
  it('stops an abandoned stream at once and bills what was generated', async () => {
    const { key: leaverKey } = await harness.paidKey(1000);
    const abort = new AbortController();
    const response = await fetch(`${harness.gateway}/v1/responses`, {
      method: 'POST',
      headers: { authorization: `Bearer ${leaverKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'slow', stream: true, input: 'one two three four five six seven eight nine ten '.repeat(3) }),
      signal: abort.signal,
    });
    const reader = response.body!.getReader();
    let received = '';
    while ((received.match(/event: response\.output_text\.delta/g) ?? []).length < 3) received += new TextDecoder().decode((await reader.read()).value);
    abort.abort();
    await eventually(async () => emulator.requests.some((request) => (request.body as { model?: string }).model?.startsWith('slow') && request.closedEarly), 1_000);
    await eventually(async () => {
      const left = await harness.balance(leaverKey);
      return left < 1000 && left > 1000 - creditsFor(200, 20);
    }, 10_000);
  });

  it('documents the route in Swagger with request examples that each succeed as they are', async () => {
    type Examples = Record<string, { value: unknown }>;
    const document = (await (await fetch(`${harness.gateway}/docs-json`)).json()) as { paths: Record<string, { post: { requestBody: { content: Record<string, { examples: Examples }> }; responses: Record<string, { content: Record<string, { example: unknown }> }> } }> };
    const operation = document.paths['/v1/responses'].post;
    expect(operation.responses['200'].content['application/json'].example).toMatchObject({ object: 'response', status: 'completed', output: [{ type: 'message' }] });
    const examples = operation.requestBody.content['application/json'].examples;
    expect(Object.keys(examples)).toEqual(expect.arrayContaining(['hello', 'streaming', 'tools', 'toolOutput']));
    for (const [name, { value }] of Object.entries(examples)) {
      // The examples name the shipped catalogue's model: here the test catalogue's alias stands in for it.
      const response = await fetch(`${harness.gateway}/v1/responses`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ ...(value as object), model: 'mini' }) });
      const text = await response.text();
      expect([name, response.status]).toEqual([name, 200]);
      expect(text).toContain((value as { stream?: boolean }).stream ? 'event: response.completed' : '"object":"response"');
    }
  });

  it('bills every call through the ledger, its rows naming the responses endpoint', async () => {
    const { key: ownKey, accountId } = await harness.paidKey(1_000_000);
    const own = new OpenAI({ baseURL: `${harness.gateway}/v1`, apiKey: ownKey, maxRetries: 0 });
    const whole = (await own.responses.create({ model: 'mini', input: PROMPT })) as Response & WithMeta;
    const streamed = await own.responses.stream({ model: 'claude', input: PROMPT }).finalResponse();
    await eventually(async () => (await harness.usageEntries(accountId, 10)).length === 2, 15_000, 100);
    const rows = (await harness.usageEntries(accountId, 10)).map(({ model, endpoint, units, credits }) => ({ model, endpoint, units, credits }));
    expect(rows).toEqual(
      expect.arrayContaining([
        { model: 'acme/chat-mini', endpoint: 'responses', units: { input_tokens: whole.usage!.input_tokens, output_tokens: whole.usage!.output_tokens }, credits: String(whole.meta!.usage!.credits_used) },
        {
          model: 'anthropic/claude-test',
          endpoint: 'responses',
          units: { input_tokens: streamed.usage!.input_tokens, output_tokens: streamed.usage!.output_tokens },
          credits: String(creditsFor(streamed.usage!.input_tokens, streamed.usage!.output_tokens)),
        },
      ]),
    );
    const spent = whole.meta!.usage!.credits_used + creditsFor(streamed.usage!.input_tokens, streamed.usage!.output_tokens);
    await eventually(async () => (await harness.balance(ownKey)) === 1_000_000 - spent, 15_000, 100);
  });
});
