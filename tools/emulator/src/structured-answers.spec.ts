import { z } from 'zod';
import { startEmulator, type RunningEmulator } from './emulator';

// Every wire format the emulator plays answers a JSON schema with JSON that satisfies it, and a
// tool call with arguments satisfying the tool's parameters, whole and streamed.

const Person = z.object({
  name: z.string().min(1),
  email: z.email(),
  born: z.iso.datetime(),
  role: z.enum(['admin', 'viewer']),
  tags: z.array(z.string()).min(2),
  age: z.number().int().min(18).max(99),
  manager: z.union([z.object({ name: z.string() }), z.null()]),
});
const SCHEMA = z.toJSONSchema(Person);
const Search = z.object({ query: z.string().min(3), limit: z.number().int().min(1).max(5), sort: z.enum(['newest', 'oldest']) });
const SEARCH_PARAMETERS = z.toJSONSchema(Search);
const PROMPT = 'Describe a person';

let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
});

afterAll(async () => {
  await emulator.close();
});

async function post(path: string, body: unknown): Promise<Response> {
  return fetch(`${emulator.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', 'anthropic-version': '2023-06-01' }, body: JSON.stringify(body) });
}

async function json<T>(path: string, body: unknown): Promise<T> {
  const res = await post(path, body);
  const text = await res.text();
  if (res.status !== 200) throw new Error(`${res.status} ${text}`);
  return JSON.parse(text) as T;
}

/** The `data:` payloads of an SSE answer, parsed (OpenAI's `[DONE]` left out). */
async function events<T>(path: string, body: unknown): Promise<T[]> {
  const res = await post(path, body);
  expect(res.status).toBe(200);
  return (await res.text())
    .split('\n')
    .filter((line) => line.startsWith('data: ') && line !== 'data: [DONE]')
    .map((line) => JSON.parse(line.slice('data: '.length)) as T);
}

function expectPerson(text: string): void {
  expect(Person.safeParse(JSON.parse(text)).success).toBe(true);
}

type ChatAnswer = { choices: Array<{ message: { content: string | null; tool_calls?: Array<{ function: { name: string; arguments: string } }> }; finish_reason: string }> };
type ChatChunk = { choices: Array<{ delta: { content?: string; tool_calls?: Array<{ function?: { arguments?: string } }> } }> };

describe.each([
  ['OpenAI', '/v1/chat/completions'],
  ['Azure OpenAI', '/openai/deployments/gpt-4o-mini/chat/completions?api-version=2024-10-21'],
])('%s chat completions', (_name, path) => {
  const base = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: PROMPT }] };
  const format = { type: 'json_schema', json_schema: { name: 'person', strict: true, schema: SCHEMA } };

  it('answers response_format json_schema with JSON satisfying the schema, the same for the same request', async () => {
    const first = await json<ChatAnswer>(path, { ...base, response_format: format });
    expectPerson(first.choices[0].message.content!);
    expect(first.choices[0].finish_reason).toBe('stop');
    const again = await json<ChatAnswer>(path, { ...base, response_format: format });
    expect(again.choices[0].message.content).toBe(first.choices[0].message.content);
  });

  it('streams it as content deltas that join to the JSON', async () => {
    const chunks = await events<ChatChunk>(path, { ...base, response_format: format, stream: true });
    expectPerson(chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''));
  });

  it('answers json_object with a JSON object', async () => {
    const answer = await json<ChatAnswer>(path, { ...base, response_format: { type: 'json_object' } });
    expect(JSON.parse(answer.choices[0].message.content!)).toEqual(expect.any(Object));
  });

  it("calls a tool with arguments satisfying its parameters, whole and streamed", async () => {
    const request = { ...base, tools: [{ type: 'function', function: { name: 'search', parameters: SEARCH_PARAMETERS } }], tool_choice: 'required' };
    const answer = await json<ChatAnswer>(path, request);
    expect(Search.safeParse(JSON.parse(answer.choices[0].message.tool_calls![0].function.arguments)).success).toBe(true);
    const chunks = await events<ChatChunk>(path, { ...request, stream: true });
    expect(Search.safeParse(JSON.parse(chunks.map((chunk) => chunk.choices[0]?.delta.tool_calls?.[0]?.function?.arguments ?? '').join(''))).success).toBe(true);
  });
});

describe('OpenAI Responses', () => {
  type ResponsesAnswer = { output: Array<{ type: string; content?: Array<{ text: string }>; arguments?: string }> };
  const base = { model: 'gpt-4o-mini', input: PROMPT };

  it('answers text.format json_schema with JSON satisfying the schema, whole and streamed', async () => {
    const format = { type: 'json_schema', name: 'person', strict: true, schema: SCHEMA };
    const answer = await json<ResponsesAnswer>('/v1/responses', { ...base, text: { format } });
    expectPerson(answer.output.find((item) => item.type === 'message')!.content![0].text);
    const streamed = await events<{ type: string; delta?: string }>('/v1/responses', { ...base, text: { format }, stream: true });
    expectPerson(streamed.filter((event) => event.type === 'response.output_text.delta').map((event) => event.delta).join(''));
  });

  it('calls a function with arguments satisfying its parameters', async () => {
    const answer = await json<ResponsesAnswer>('/v1/responses', { ...base, tools: [{ type: 'function', name: 'search', parameters: SEARCH_PARAMETERS }], tool_choice: 'required' });
    expect(Search.safeParse(JSON.parse(answer.output[0].arguments!)).success).toBe(true);
  });
});

describe('Anthropic Messages', () => {
  type Message = { content: Array<{ type: string; text?: string; input?: unknown }>; stop_reason: string };
  type Event = { type: string; delta?: { type: string; text?: string; partial_json?: string } };
  const base = { model: 'claude-test', max_tokens: 1000, messages: [{ role: 'user', content: PROMPT }] };

  it('answers output_config.format with a text block of JSON satisfying the schema, whole and streamed', async () => {
    const output_config = { format: { type: 'json_schema', schema: SCHEMA } };
    const answer = await json<Message>('/v1/messages', { ...base, output_config });
    expect(answer.stop_reason).toBe('end_turn');
    expectPerson(answer.content.find((block) => block.type === 'text')!.text!);
    const streamed = await events<Event>('/v1/messages', { ...base, output_config, stream: true });
    expectPerson(streamed.map((event) => (event.delta?.type === 'text_delta' ? event.delta.text : '')).join(''));
  });

  it('answers a forced tool with input satisfying its input_schema, whole and streamed', async () => {
    const request = { ...base, tools: [{ name: 'person', input_schema: SCHEMA }], tool_choice: { type: 'tool', name: 'person' } };
    const answer = await json<Message>('/v1/messages', request);
    expect(Person.safeParse(answer.content[0].input).success).toBe(true);
    const streamed = await events<Event>('/v1/messages', { ...request, stream: true });
    expectPerson(streamed.map((event) => (event.delta?.type === 'input_json_delta' ? event.delta.partial_json : '')).join(''));
  });

  it('refuses an output_config.format that is not a JSON schema', async () => {
    const res = await post('/v1/messages', { ...base, output_config: { format: { type: 'xml' } } });
    expect(res.status).toBe(400);
  });
});

describe('Gemini generateContent', () => {
  type Generated = { candidates: Array<{ content: { parts: Array<{ text?: string; functionCall?: { args: unknown } }> } }> };
  const base = { contents: [{ role: 'user', parts: [{ text: PROMPT }] }] };
  const textOf = (answer: Generated) => answer.candidates[0].content.parts.map((part) => part.text ?? '').join('');

  it('answers responseJsonSchema with JSON satisfying it, whole and streamed', async () => {
    const generationConfig = { responseMimeType: 'application/json', responseJsonSchema: SCHEMA };
    expectPerson(textOf(await json<Generated>('/v1beta/models/gemini-2.5-flash:generateContent', { ...base, generationConfig })));
    const streamed = await events<Generated>('/v1beta/models/gemini-2.5-flash:streamGenerateContent?alt=sse', { ...base, generationConfig });
    expectPerson(streamed.map(textOf).join(''));
  });

  it("answers responseSchema (Gemini's OpenAPI subset) with JSON satisfying it", async () => {
    const responseSchema = { type: 'OBJECT', properties: { city: { type: 'STRING' }, days: { type: 'ARRAY', items: { type: 'INTEGER', minimum: 1, maximum: 7 }, minItems: 2 } }, required: ['city', 'days'] };
    const answer = await json<Generated>('/v1beta/models/gemini-2.5-flash:generateContent', { ...base, generationConfig: { responseMimeType: 'application/json', responseSchema } });
    expect(z.object({ city: z.string(), days: z.array(z.number().int().min(1).max(7)).min(2) }).safeParse(JSON.parse(textOf(answer))).success).toBe(true);
  });

  it('answers application/json without a schema with a JSON object', async () => {
    const answer = await json<Generated>('/v1beta/models/gemini-2.5-flash:generateContent', { ...base, generationConfig: { responseMimeType: 'application/json' } });
    expect(JSON.parse(textOf(answer))).toEqual(expect.any(Object));
  });

  it('calls a function with args satisfying its parametersJsonSchema', async () => {
    const request = { ...base, tools: [{ functionDeclarations: [{ name: 'search', parametersJsonSchema: SEARCH_PARAMETERS }] }], toolConfig: { functionCallingConfig: { mode: 'ANY' } } };
    const answer = await json<Generated>('/v1beta/models/gemini-2.5-flash:generateContent', request);
    expect(Search.safeParse(answer.candidates[0].content.parts[0].functionCall!.args).success).toBe(true);
  });
});
