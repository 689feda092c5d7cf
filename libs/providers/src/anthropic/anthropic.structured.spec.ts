import type { ResponseFormatDto } from '@igw/contracts';
import type { UpstreamChatChunk, UpstreamChatRequest } from '../provider.types';
import {
  ANTHROPIC_ANSWER_TOOL_NAME,
  AnthropicStreamTranslator,
  AnthropicTranslationError,
  fromAnthropicResponse,
  structuredAnswerTool,
  toAnthropicRequest,
} from './anthropic.translate';
import type { AnthropicMessageResponse, AnthropicStreamEvent } from './anthropic.types';

// Structured outputs (response_format) on Anthropic sources: natively where the source takes
// them, else as the answer tool's call, answered as content whatever the way.

const PERSON = { type: 'object', properties: { name: { type: 'string' }, age: { type: 'integer' } }, required: ['name', 'age'], additionalProperties: false };
const schemaFormat = (schema: Record<string, unknown> = PERSON, name = 'person'): ResponseFormatDto => ({ type: 'json_schema', json_schema: { name, strict: true, schema } });
const WEATHER = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { location: { type: 'string' } } } } };

function req(fields: Partial<UpstreamChatRequest> = {}): UpstreamChatRequest {
  return { model: 'claude-test', messages: [{ role: 'user', content: 'Describe someone' }], ...fields };
}

function refusal(fields: Partial<UpstreamChatRequest>, structuredOutputs = false): AnthropicTranslationError {
  try {
    toAnthropicRequest(req(fields), { stream: false, structuredOutputs });
  } catch (error) {
    if (error instanceof AnthropicTranslationError) return error;
    throw error;
  }
  throw new Error('expected an AnthropicTranslationError');
}

const message = (content: AnthropicMessageResponse['content'], stop: AnthropicMessageResponse['stop_reason'] = 'tool_use'): AnthropicMessageResponse => ({
  id: 'msg_1',
  type: 'message',
  role: 'assistant',
  model: 'claude-test',
  content,
  stop_reason: stop,
  stop_sequence: null,
  usage: { input_tokens: 10, output_tokens: 5 },
});

function streamed(events: AnthropicStreamEvent[], answerTool = structuredAnswerTool(req({ response_format: schemaFormat() }), false)): UpstreamChatChunk[] {
  const translator = new AnthropicStreamTranslator('anthropic', { excludeReasoning: false, created: 1, answerTool });
  return events.flatMap((event) => translator.push(event));
}

const start: AnthropicStreamEvent = { type: 'message_start', message: message([], null) };
const toolEvents = (name: string, pieces: string[], index = 0): AnthropicStreamEvent[] => [
  { type: 'content_block_start', index, content_block: { type: 'tool_use', id: `toolu_${index}`, name, input: {} } },
  ...pieces.map((partial_json): AnthropicStreamEvent => ({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json } })),
  { type: 'content_block_stop', index },
];
const finish: AnthropicStreamEvent[] = [
  { type: 'message_delta', delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 5 } },
  { type: 'message_stop' },
];
const contentOf = (chunks: UpstreamChatChunk[]) => chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
const finishOf = (chunks: UpstreamChatChunk[]) => chunks.map((chunk) => chunk.choices[0]?.finish_reason).find((reason) => reason);

describe('response_format to Anthropic: natively where the source takes structured outputs', () => {
  it('sends a json_schema as output_config.format, tools and tool_choice as the client gave them', () => {
    const body = toAnthropicRequest(req({ response_format: schemaFormat(), tools: [WEATHER], tool_choice: 'required' }), { stream: false, structuredOutputs: true });
    expect(body.output_config).toEqual({ format: { type: 'json_schema', schema: PERSON } });
    expect(body.tools).toEqual([expect.objectContaining({ name: 'get_weather' })]);
    expect(body.tool_choice).toEqual({ type: 'any' });
    expect(structuredAnswerTool(req({ response_format: schemaFormat() }), true)).toBeUndefined();
  });

  it('keeps thinking with a native format (no tool is forced)', () => {
    const body = toAnthropicRequest(req({ response_format: schemaFormat(), reasoning_effort: 'low' }), { stream: false, structuredOutputs: true });
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: 1024 });
  });

  it('asks json_object as the forced answer tool even there (Anthropic takes schemas only)', () => {
    const body = toAnthropicRequest(req({ response_format: { type: 'json_object' } }), { stream: false, structuredOutputs: true });
    expect(body.output_config).toBeUndefined();
    expect(body.tools).toEqual([expect.objectContaining({ name: ANTHROPIC_ANSWER_TOOL_NAME, input_schema: { type: 'object', additionalProperties: true } })]);
    expect(body.tool_choice).toEqual({ type: 'tool', name: ANTHROPIC_ANSWER_TOOL_NAME });
  });
});

describe('response_format to Anthropic: as the forced answer tool elsewhere', () => {
  it('sends one tool whose input_schema is the schema, forced, named by the schema, without thinking', () => {
    const body = toAnthropicRequest(req({ response_format: schemaFormat(), reasoning_effort: 'high' }), { stream: false });
    expect(body.output_config).toBeUndefined();
    expect(body.tools).toEqual([{ name: 'person', description: expect.any(String), input_schema: PERSON }]);
    expect(body.tool_choice).toEqual({ type: 'tool', name: 'person' });
    expect(body.thinking).toBeUndefined();
  });

  it("offers the client's tools beside it (tool_choice any) while they may be called, not when tool_choice is none", () => {
    const offered = toAnthropicRequest(req({ response_format: schemaFormat(), tools: [WEATHER], parallel_tool_calls: false }), { stream: false });
    expect(offered.tools!.map((tool) => tool.name)).toEqual(['get_weather', 'person']);
    expect(offered.tool_choice).toEqual({ type: 'any', disable_parallel_tool_use: true });
    const alone = toAnthropicRequest(req({ response_format: schemaFormat(), tools: [WEATHER], tool_choice: 'none' }), { stream: false });
    expect(alone.tools!.map((tool) => tool.name)).toEqual(['person']);
    expect(alone.tool_choice).toEqual({ type: 'tool', name: 'person' });
  });

  it('wraps a schema whose value is not an object as the input `value`, its $defs kept at the root', () => {
    const list = { type: 'array', items: { $ref: '#/$defs/item' }, $defs: { item: { type: 'string' } } };
    const body = toAnthropicRequest(req({ response_format: schemaFormat(list, 'items') }), { stream: false });
    expect(body.tools![0]).toMatchObject({ input_schema: { type: 'object', properties: { value: { type: 'array', items: { $ref: '#/$defs/item' } } }, required: ['value'], $defs: list.$defs } });
    const answer = fromAnthropicResponse(message([{ type: 'tool_use', id: 't', name: 'items', input: { value: ['a', 'b'] } }]), { excludeReasoning: false, answerTool: structuredAnswerTool(req({ response_format: schemaFormat(list, 'items') }), false) });
    expect(answer.choices[0].message.content).toBe('["a","b"]');
  });

  it('names the tool json_answer when the schema name is not a tool name or is taken by a client tool', () => {
    expect(toAnthropicRequest(req({ response_format: schemaFormat(PERSON, 'a person!') }), { stream: false }).tool_choice).toEqual({ type: 'tool', name: ANTHROPIC_ANSWER_TOOL_NAME });
    expect(toAnthropicRequest(req({ response_format: schemaFormat(PERSON, 'get_weather'), tools: [WEATHER] }), { stream: false }).tools!.map((tool) => tool.name)).toEqual(['get_weather', ANTHROPIC_ANSWER_TOOL_NAME]);
  });

  it.each<[string, Partial<UpstreamChatRequest>]>([
    ['tool_choice required', { tool_choice: 'required', tools: [WEATHER] }],
    ['a forced function', { tool_choice: { type: 'function', function: { name: 'get_weather' } }, tools: [WEATHER] }],
    ['enable_search', { enable_search: true }],
  ])('refuses response_format with %s: a 400 naming response_format', (_case, fields) => {
    expect(refusal({ response_format: schemaFormat(), ...fields }).param).toBe('response_format');
  });
});

describe('the answer back, in the chat shape', () => {
  const answerTool = structuredAnswerTool(req({ response_format: schemaFormat() }), false);

  it("gives the answer tool's input as message.content, finish_reason stop, no tool_calls", () => {
    const answer = fromAnthropicResponse(message([{ type: 'tool_use', id: 't', name: 'person', input: { name: 'Ada', age: 36 } }]), { excludeReasoning: false, answerTool });
    expect(answer.choices[0]).toMatchObject({ message: { content: '{"name":"Ada","age":36}' }, finish_reason: 'stop' });
    expect(answer.choices[0].message.tool_calls).toBeUndefined();
  });

  it("keeps a client tool's call a tool call (finish_reason tool_calls)", () => {
    const answer = fromAnthropicResponse(message([{ type: 'tool_use', id: 't', name: 'get_weather', input: { location: 'Paris' } }]), { excludeReasoning: false, answerTool });
    expect(answer.choices[0]).toMatchObject({ message: { content: null, tool_calls: [{ function: { name: 'get_weather' } }] }, finish_reason: 'tool_calls' });
  });

  it("streams the answer tool's input_json_deltas as content deltas, finish_reason stop", () => {
    const chunks = streamed([start, ...toolEvents('person', ['{"name":', '"Ada","age"', ':36}']), ...finish]);
    expect(contentOf(chunks)).toBe('{"name":"Ada","age":36}');
    expect(chunks.some((chunk) => chunk.choices[0]?.delta.tool_calls !== undefined)).toBe(false);
    expect(finishOf(chunks)).toBe('stop');
  });

  it('streams a wrapped answer whole at its block end, unwrapped', () => {
    const tool = structuredAnswerTool(req({ response_format: schemaFormat({ type: 'array', items: { type: 'integer' } }, 'numbers') }), false);
    const chunks = streamed([start, ...toolEvents('numbers', ['{"value":', '[1,2]}']), ...finish], tool);
    expect(contentOf(chunks)).toBe('[1,2]');
  });

  it("streams a client tool's call as tool_calls beside the answer tool", () => {
    const chunks = streamed([start, ...toolEvents('get_weather', ['{"location":"Paris"}']), ...finish]);
    expect(chunks.some((chunk) => chunk.choices[0]?.delta.tool_calls !== undefined)).toBe(true);
    expect(finishOf(chunks)).toBe('tool_calls');
  });
});
