import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ChatMessage, ToolChoice } from '@igw/contracts';
import type { UpstreamChatChunk, UpstreamChatRequest } from '../provider.types';
import { parseSse } from '../transport/sse';
import { UpstreamHttpError, UpstreamProtocolError } from '../upstream.errors';
import {
  ANTHROPIC_DEFAULT_MAX_TOKENS,
  AnthropicStreamTranslator,
  AnthropicTranslationError,
  fromAnthropicResponse,
  isReasoningExcluded,
  parseStreamEvent,
  toAnthropicRequest,
  toFinishReason,
  toOpenAiUsage,
} from './anthropic.translate';
import type { AnthropicMessageResponse, AnthropicStreamEvent } from './anthropic.types';

const CREATED = 1_700_000_000;

function fixture<T>(name: string): T {
  return JSON.parse(readFileSync(join(__dirname, '__fixtures__', name), 'utf8')) as T;
}

function req(fields: Partial<UpstreamChatRequest> = {}): UpstreamChatRequest {
  return { model: 'claude-test', messages: [{ role: 'user', content: 'Hi' }], ...fields };
}

const translate = (fields: Partial<UpstreamChatRequest> = {}) => toAnthropicRequest(req(fields), { stream: false });

function translationError(fields: Partial<UpstreamChatRequest>): AnthropicTranslationError {
  try {
    translate(fields);
  } catch (error) {
    if (error instanceof AnthropicTranslationError) return error;
    throw error;
  }
  throw new Error('expected an AnthropicTranslationError');
}

async function streamFixture(name: string): Promise<AnthropicStreamEvent[]> {
  const events: AnthropicStreamEvent[] = [];
  async function* bytes(): AsyncGenerator<Uint8Array> {
    yield readFileSync(join(__dirname, '__fixtures__', name));
  }
  for await (const event of parseSse(bytes())) events.push(parseStreamEvent('anthropic', event));
  return events;
}

function translateStream(events: AnthropicStreamEvent[], excludeReasoning = false): UpstreamChatChunk[] {
  const translator = new AnthropicStreamTranslator('anthropic', { excludeReasoning, created: CREATED });
  const chunks = events.flatMap((event) => translator.push(event));
  translator.end();
  return chunks;
}

const weatherTool = { type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: {} } } };
const timeTool = { type: 'function', function: { name: 'get_time' } };

describe('golden fixtures', () => {
  it('translates a request with system parts, merged turns, tool calls, tool results and tools', () => {
    const openai = fixture<UpstreamChatRequest>('request-tools.openai.json');
    expect(toAnthropicRequest(openai, { stream: false })).toEqual(fixture('request-tools.anthropic.json'));
  });

  it('translates a streamed reasoning request', () => {
    const openai = fixture<UpstreamChatRequest>('request-reasoning.openai.json');
    expect(toAnthropicRequest(openai, { stream: true })).toEqual(fixture('request-reasoning.anthropic.json'));
    expect(isReasoningExcluded(openai)).toBe(true);
  });

  it('translates a response with thinking, split text, a tool call and cache usage', () => {
    const response = fixture<AnthropicMessageResponse>('response.anthropic.json');
    expect(fromAnthropicResponse(response, { excludeReasoning: false, created: CREATED })).toEqual(fixture('response.openai.json'));
  });

  it('translates an SSE stream with thinking, text and two tool calls into the exact chunks', async () => {
    expect(translateStream(await streamFixture('stream.anthropic.sse'))).toEqual(fixture('stream.openai.json'));
  });
});

describe('web search (enable_search)', () => {
  it('golden: adds the web search tool after the function tools, max_uses from the search strategy', () => {
    const openai = fixture<UpstreamChatRequest>('request-search.openai.json');
    expect(toAnthropicRequest(openai, { stream: true })).toEqual(fixture('request-search.anthropic.json'));
  });

  it('golden: turns web search citations into url_citation annotations over the cited text, server tool blocks leaving no trace', () => {
    const response = fixture<AnthropicMessageResponse>('response-search.anthropic.json');
    const completion = fromAnthropicResponse(response, { excludeReasoning: false, created: CREATED });
    expect(completion).toEqual(fixture('response-search.openai.json'));
    const message = completion.choices[0].message as unknown as { content: string; annotations: Array<{ url_citation: { start_index: number; end_index: number } }> };
    const cited = message.annotations.map(({ url_citation: span }) => message.content.slice(span.start_index, span.end_index + 1));
    expect(cited).toEqual(['about 2.1 million people live in Paris', 'about 2.1 million people live in Paris', 'over 12 million in its metropolitan area']);
    expect(message).not.toHaveProperty('tool_calls');
  });

  it('golden: streams the text, then one delta.annotations chunk before the finish chunk; server tool events produce nothing', async () => {
    const chunks = translateStream(await streamFixture('stream-search.anthropic.sse'));
    expect(chunks).toEqual(fixture('stream-search.openai.json'));
    const streamed = chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('');
    expect(streamed).toBe(fixture<{ choices: Array<{ message: { content: string } }> }>('response-search.openai.json').choices[0].message.content);
  });

  it('sends the tool alone without function tools, max_uses 10 when no strategy is given (the hold needs a limit), and nothing unless enable_search is true', () => {
    expect(translate({ enable_search: true }).tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', max_uses: 10 }]);
    expect(translate({ enable_search: true }).tool_choice).toBeUndefined();
    expect(translate({ enable_search: true, search_options: { search_strategy: 'turbo' } }).tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', max_uses: 1 }]);
    expect(translate({ enable_search: true, search_options: { search_strategy: 'agent' } }).tools).toEqual([{ type: 'web_search_20250305', name: 'web_search', max_uses: 10 }]);
    expect(translate({ enable_search: false, search_options: { search_strategy: 'max' } })).not.toHaveProperty('tools');
    expect(translate({ search_options: { search_strategy: 'max' } })).not.toHaveProperty('tools');
    for (const field of ['enable_search', 'search_options', 'web_search_options']) expect(translate({ enable_search: true })).not.toHaveProperty(field);
  });

  it('reads citations given on content_block_start too, and sends the annotations at message_stop when no message_delta came', () => {
    const citation = { type: 'web_search_result_location', url: 'https://example.com/a', title: 'A', cited_text: 'a', encrypted_index: 'x' };
    const chunks = translateStream([
      { type: 'message_start', message: { id: 'msg_1', type: 'message', role: 'assistant', model: 'claude-test', content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 1, output_tokens: 1 } } },
      { type: 'content_block_start', index: 0, content_block: { type: 'text', text: 'Hi ' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '', citations: [citation] } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'there' } },
      { type: 'message_stop' },
    ]);
    expect(chunks.map((chunk) => chunk.choices[0]?.delta)).toEqual([
      { role: 'assistant', content: '' },
      { content: 'Hi ' },
      { content: 'there' },
      { annotations: [{ type: 'url_citation', url_citation: { start_index: 3, end_index: 7, title: 'A', url: 'https://example.com/a' } }] },
      {},
      undefined,
    ]);
  });

  it('maps server_tool_use web searches to web_search_calls, which are billed per call', () => {
    expect(toOpenAiUsage({ input_tokens: 10, output_tokens: 5, server_tool_use: { web_search_requests: 2 } })).toEqual({
      prompt_tokens: 10,
      completion_tokens: 5,
      total_tokens: 15,
      prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
      completion_tokens_details: { reasoning_tokens: null },
      web_search_calls: 2,
    });
    expect(toOpenAiUsage({ input_tokens: 10, output_tokens: 5, server_tool_use: { web_search_requests: 0 } })).not.toHaveProperty('web_search_calls');
  });
});

describe('toAnthropicRequest: messages', () => {
  it('sends string content as one text block, omits system when there is none, and sets stream only for streams', () => {
    expect(translate()).toEqual({
      model: 'claude-test',
      max_tokens: ANTHROPIC_DEFAULT_MAX_TOKENS,
      messages: [{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }],
    });
    expect(toAnthropicRequest(req(), { stream: true }).stream).toBe(true);
  });

  it('collects system and developer messages from anywhere, in order', () => {
    const body = translate({
      messages: [
        { role: 'system', content: 'A' },
        { role: 'user', content: 'Hi' },
        { role: 'developer', content: [{ type: 'text', text: 'B' }, { type: 'text', text: 'C', cache_control: { type: 'ephemeral', ttl: '5m' } }] },
      ],
    });
    expect(body.system).toEqual([
      { type: 'text', text: 'A' },
      { type: 'text', text: 'B' },
      { type: 'text', text: 'C', cache_control: { type: 'ephemeral', ttl: '5m' } },
    ]);
    expect(body.messages).toEqual([{ role: 'user', content: [{ type: 'text', text: 'Hi' }] }]);
  });

  it('merges consecutive turns of one role, including across a dropped empty assistant turn', () => {
    const body = translate({
      messages: [
        { role: 'user', content: 'one' },
        { role: 'assistant', content: null },
        { role: 'user', content: '   ' },
        { role: 'user', content: 'two' },
        { role: 'assistant', content: 'three' },
        { role: 'assistant', content: [{ type: 'text', text: 'four' }] },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'one' }, { type: 'text', text: 'two' }] },
      { role: 'assistant', content: [{ type: 'text', text: 'three' }, { type: 'text', text: 'four' }] },
    ]);
  });

  it('keeps assistant text before its tool_use blocks and puts tool results first in a merged user turn', () => {
    const body = translate({
      messages: [
        { role: 'user', content: 'weather?' },
        { role: 'assistant', content: 'Checking.', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'get_weather', arguments: '' } }] },
        { role: 'user', content: 'also this' },
        { role: 'tool', tool_call_id: 'c1', content: 'sunny' },
      ],
    });
    expect(body.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'weather?' }] },
      {
        role: 'assistant',
        content: [
          { type: 'text', text: 'Checking.' },
          { type: 'tool_use', id: 'c1', name: 'get_weather', input: {} },
        ],
      },
      {
        role: 'user',
        content: [
          { type: 'tool_result', tool_use_id: 'c1', content: 'sunny' },
          { type: 'text', text: 'also this' },
        ],
      },
    ]);
  });

  it('sends image parts as base64 or URL image blocks', () => {
    const body = translate({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } },
            { type: 'image_url', image_url: { url: 'https://example.com/cat.jpg', detail: 'low' }, cache_control: { type: 'ephemeral' } },
          ],
        },
      ],
    });
    expect(body.messages[0].content).toEqual([
      { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'iVBORw0KGgo=' } },
      { type: 'image', source: { type: 'url', url: 'https://example.com/cat.jpg' }, cache_control: { type: 'ephemeral' } },
    ]);
  });

  it('sends file parts as document blocks: a PDF as base64, plain text decoded, the filename as title, cache_control kept', () => {
    const pdf = Buffer.from('%PDF-1.4 minimal').toString('base64');
    const text = Buffer.from('Zoë wrote: 42', 'utf8').toString('base64');
    const body = translate({
      messages: [
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Summarize' },
            { type: 'file', file: { file_data: `data:application/pdf;base64,${pdf}`, filename: 'report.pdf' }, cache_control: { type: 'ephemeral', ttl: '1h' } },
            { type: 'file', file: { file_data: `data:text/plain;charset=utf-8;base64,${text}` } },
          ],
        },
      ],
    });
    expect(body.messages[0].content).toEqual([
      { type: 'text', text: 'Summarize' },
      { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: pdf }, title: 'report.pdf', cache_control: { type: 'ephemeral', ttl: '1h' } },
      { type: 'document', source: { type: 'text', media_type: 'text/plain', data: 'Zoë wrote: 42' } },
    ]);
  });

  it.each([
    ['a file_id', { file_id: 'file-abc' }, 'messages[0].content[0].file.file_id', /^a file id cannot be sent to Anthropic; send the file itself as file_data/],
    ['a URL instead of a data URL', { file_data: 'https://example.com/a.pdf' }, 'messages[0].content[0].file.file_data', /^Expected a base64 data URL of a PDF or plain text/],
    ['a data URL that is not base64', { file_data: 'data:application/pdf,%25PDF' }, 'messages[0].content[0].file.file_data', /^Expected a base64 data URL/],
    ['another media type', { file_data: 'data:application/zip;base64,UEsDBA==' }, 'messages[0].content[0].file.file_data', /^media type "application\/zip" cannot be sent to Anthropic; it takes application\/pdf and text\/plain/],
    ['data that is not base64', { file_data: 'data:application/pdf;base64,%%%' }, 'messages[0].content[0].file.file_data', /is not non-empty base64/],
    ['plain text that is not UTF-8', { file_data: `data:text/plain;base64,${Buffer.from([0xff, 0xfe, 0x41]).toString('base64')}` }, 'messages[0].content[0].file.file_data', /must be UTF-8 text/],
  ])('refuses a file part with %s, naming the field and what is accepted', (_label, file, param, message) => {
    const error = translationError({ messages: [{ role: 'user', content: [{ type: 'file', file }] }] });
    expect([error.name, error.param]).toEqual(['AnthropicTranslationError', param]);
    expect(error.message).toMatch(message);
  });

  it.each([
    ['invalid JSON', '{"location": "Par', 'messages[1].tool_calls[0].function.arguments'],
    ['a JSON array', '[1, 2]', 'messages[1].tool_calls[0].function.arguments'],
    ['a JSON string', '"Paris"', 'messages[1].tool_calls[0].function.arguments'],
  ])('rejects tool-call arguments that are %s with AnthropicTranslationError', (_label, args, param) => {
    const error = translationError({
      messages: [
        { role: 'user', content: 'x' },
        { role: 'assistant', tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: args } }] },
      ],
    });
    expect(error.param).toBe(param);
    expect(error.name).toBe('AnthropicTranslationError');
  });

  it.each<[string, ChatMessage[], string]>([
    ['a custom tool call in the history', [{ role: 'assistant', tool_calls: [{ id: 'c', type: 'custom', custom: { name: 'x', input: 'y' } }] }], 'messages[0].tool_calls[0]'],
    ['an audio part', [{ role: 'user', content: [{ type: 'input_audio', input_audio: { data: '', format: 'wav' } }] }], 'messages[0].content[0]'],
    ['only system messages', [{ role: 'system', content: 'x' }], 'messages'],
  ])('rejects %s', (_label, messages, param) => {
    expect(translationError({ messages }).param).toBe(param);
  });
});

describe('toAnthropicRequest: parameters', () => {
  it.each([
    [{}, ANTHROPIC_DEFAULT_MAX_TOKENS],
    [{ max_tokens: 300 }, 300],
    [{ max_completion_tokens: 200, max_tokens: 300 }, 200],
  ])('max_tokens for %j is %d', (fields, expected) => {
    expect(translate(fields).max_tokens).toBe(expected);
  });

  it.each([
    [1.7, 1],
    [1, 1],
    [0.3, 0.3],
    [0, 0],
  ])('clamps temperature %d to %d', (temperature, expected) => {
    expect(translate({ temperature }).temperature).toBe(expected);
  });

  it.each([
    ['END', ['END']],
    [['a', '', 'b'], ['a', 'b']],
    [null, undefined],
    [[], undefined],
  ])('stop %j becomes stop_sequences %j', (stop, expected) => {
    expect(translate({ stop }).stop_sequences).toEqual(expected);
  });

  it('drops fields Anthropic does not know that leave what the model must produce as it is', () => {
    const body = translate({ n: 2, logprobs: true, top_logprobs: 3, logit_bias: { 1: 2 }, seed: 1, frequency_penalty: 1, response_format: { type: 'text' } });
    expect(Object.keys(body).sort()).toEqual(['max_tokens', 'messages', 'model']);
  });

  it('maps function tools (default schema, cache_control) and skips other tools', () => {
    const body = translate({
      tools: [{ type: 'custom', custom: { name: 'c' } }, { ...timeTool, cache_control: { type: 'ephemeral', ttl: '1h', extra: 1 } }],
    });
    expect(body.tools).toEqual([{ name: 'get_time', input_schema: { type: 'object', properties: {} }, cache_control: { type: 'ephemeral', ttl: '1h' } }]);
    expect(translate({ tools: [{ type: 'custom', custom: { name: 'c' } }], tool_choice: 'required' })).not.toHaveProperty('tools');
  });

  it.each<[string, ToolChoice | undefined, boolean | undefined, unknown]>([
    ['absent', undefined, undefined, undefined],
    ['absent, parallel off', undefined, false, { type: 'auto', disable_parallel_tool_use: true }],
    ['auto', 'auto', undefined, { type: 'auto' }],
    ['required', 'required', undefined, { type: 'any' }],
    ['required, parallel off', 'required', false, { type: 'any', disable_parallel_tool_use: true }],
    ['none', 'none', undefined, { type: 'none' }],
    ['none, parallel off', 'none', false, { type: 'none' }],
    ['a function', { type: 'function', function: { name: 'get_time' } }, undefined, { type: 'tool', name: 'get_time' }],
    ['a function, parallel off', { type: 'function', function: { name: 'get_time' } }, false, { type: 'tool', name: 'get_time', disable_parallel_tool_use: true }],
    ['auto, parallel on', 'auto', true, { type: 'auto' }],
  ])('tool_choice %s', (_label, tool_choice, parallel_tool_calls, expected) => {
    expect(translate({ tools: [weatherTool, timeTool], tool_choice, parallel_tool_calls }).tool_choice).toEqual(expected);
  });

  it('limits the tools to allowed_tools and maps its mode', () => {
    const body = translate({
      tools: [weatherTool, timeTool],
      tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'get_time' } }] } },
    });
    expect(body.tools?.map((tool) => tool.name)).toEqual(['get_time']);
    expect(body.tool_choice).toEqual({ type: 'any' });
  });

  it('drops tool_choice without tools and rejects forcing a custom tool', () => {
    expect(translate({ tool_choice: 'required' })).not.toHaveProperty('tool_choice');
    expect(translationError({ tools: [weatherTool], tool_choice: { type: 'custom', custom: { name: 'x' } } }).param).toBe('tool_choice');
  });

  it('passes the end-user id as metadata.user_id', () => {
    expect(translate({ user: 'u-1' }).metadata).toEqual({ user_id: 'u-1' });
  });
});

describe('toAnthropicRequest: thinking', () => {
  it.each<[string, Partial<UpstreamChatRequest>, number, number]>([
    ['reasoning_effort low', { reasoning_effort: 'low' }, 1024, 1024 + 4096],
    ['reasoning_effort medium', { reasoning_effort: 'medium' }, 4096, 4096 + 4096],
    ['reasoning_effort high', { reasoning_effort: 'high' }, 16384, 16384 + 4096],
    ['reasoning.effort wins over reasoning_effort', { reasoning: { effort: 'high' }, reasoning_effort: 'low' }, 16384, 16384 + 4096],
    ['reasoning.max_tokens', { reasoning: { max_tokens: 2000 } }, 2000, 2000 + 4096],
    ['reasoning.max_tokens below the minimum', { reasoning: { max_tokens: 100 } }, 1024, 1024 + 4096],
    ['an explicit max above the budget', { reasoning_effort: 'high', max_completion_tokens: 20000 }, 16384, 20000],
    ['an explicit max below the budget', { reasoning_effort: 'high', max_tokens: 3000 }, 2999, 3000],
  ])('%s', (_label, fields, budget, maxTokens) => {
    const body = translate(fields);
    expect(body.thinking).toEqual({ type: 'enabled', budget_tokens: budget });
    expect(body.max_tokens).toBe(maxTokens);
  });

  it.each<[string, Partial<UpstreamChatRequest>, number]>([
    ['reasoning_effort none', { reasoning_effort: 'none' }, 4096],
    ['a max too small for the minimum budget', { reasoning_effort: 'low', max_tokens: 1024 }, 1024],
    ['a forced tool', { reasoning_effort: 'low', tools: [weatherTool], tool_choice: 'required' }, 4096],
    ['reasoning.exclude alone', { reasoning: { exclude: true } }, 4096],
  ])('no thinking with %s', (_label, fields, maxTokens) => {
    const body = translate(fields);
    expect(body).not.toHaveProperty('thinking');
    expect(body.max_tokens).toBe(maxTokens);
  });

  it('drops temperature and keeps top_p only from 0.95 while thinking', () => {
    expect(translate({ reasoning_effort: 'low', temperature: 0.5, top_p: 0.5 })).not.toHaveProperty('temperature');
    expect(translate({ reasoning_effort: 'low', top_p: 0.5 })).not.toHaveProperty('top_p');
    expect(translate({ reasoning_effort: 'low', top_p: 0.95 }).top_p).toBe(0.95);
    expect(translate({ reasoning_effort: 'low', max_tokens: 500, temperature: 0.5 }).temperature).toBe(0.5);
  });
});

describe('fromAnthropicResponse', () => {
  const message = (fields: Partial<AnthropicMessageResponse>): AnthropicMessageResponse => ({
    id: 'msg_1',
    type: 'message',
    role: 'assistant',
    model: 'claude-test',
    content: [{ type: 'text', text: 'Hello' }],
    stop_reason: 'end_turn',
    stop_sequence: null,
    usage: { input_tokens: 10, output_tokens: 2 },
    ...fields,
  });

  it.each([
    ['end_turn', 'stop'],
    ['stop_sequence', 'stop'],
    ['pause_turn', 'stop'],
    ['max_tokens', 'length'],
    ['model_context_window_exceeded', 'length'],
    ['tool_use', 'tool_calls'],
    ['refusal', 'content_filter'],
    [null, 'stop'],
    ['something_new', 'stop'],
  ])('stop_reason %s → finish_reason %s', (stopReason, finishReason) => {
    expect(toFinishReason(stopReason)).toBe(finishReason);
  });

  it('answers a plain message with content, no tool_calls or reasoning, and zero cache counts', () => {
    const completion = fromAnthropicResponse(message({}), { excludeReasoning: false, created: CREATED });
    expect(completion).toEqual({
      id: 'msg_1',
      object: 'chat.completion',
      created: CREATED,
      model: 'claude-test',
      choices: [{ index: 0, message: { role: 'assistant', content: 'Hello', refusal: null }, finish_reason: 'stop' }],
      usage: {
        prompt_tokens: 10,
        completion_tokens: 2,
        total_tokens: 12,
        prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 0 },
        completion_tokens_details: { reasoning_tokens: null },
      },
    });
  });

  it('sets content null without text blocks and leaves thinking out when excluded', () => {
    const completion = fromAnthropicResponse(
      message({
        content: [
          { type: 'thinking', thinking: 'hmm', signature: 's' },
          { type: 'tool_use', id: 't1', name: 'f', input: {} },
        ],
        stop_reason: 'tool_use',
      }),
      { excludeReasoning: true },
    );
    expect(completion.choices[0].message).toEqual({
      role: 'assistant',
      content: null,
      refusal: null,
      tool_calls: [{ id: 't1', type: 'function', function: { name: 'f', arguments: '{}' } }],
    });
    expect(completion.created).toBeGreaterThan(CREATED);
  });

  it('counts cache reads and writes as prompt tokens', () => {
    expect(toOpenAiUsage({ input_tokens: 5, cache_read_input_tokens: 100, cache_creation_input_tokens: 20, output_tokens: 7 })).toEqual({
      prompt_tokens: 125,
      completion_tokens: 7,
      total_tokens: 132,
      prompt_tokens_details: { cached_tokens: 100, cache_write_tokens: 20 },
      completion_tokens_details: { reasoning_tokens: null },
    });
    expect(toOpenAiUsage({ input_tokens: 5, cache_read_input_tokens: null, output_tokens: 1 }).prompt_tokens).toBe(5);
  });

  it('tells the cache writes of one-hour lifetime apart, which Anthropic bills dearer', () => {
    const usage = toOpenAiUsage({ input_tokens: 5, cache_creation_input_tokens: 30, cache_creation: { ephemeral_5m_input_tokens: 10, ephemeral_1h_input_tokens: 20 }, output_tokens: 7 });
    expect(usage.prompt_tokens).toBe(35);
    expect(usage.prompt_tokens_details).toEqual({ cached_tokens: 0, cache_write_tokens: 30, cache_write_1h_tokens: 20 });
  });
});

describe('AnthropicStreamTranslator', () => {
  const start: AnthropicStreamEvent = {
    type: 'message_start',
    message: {
      id: 'msg_s',
      type: 'message',
      role: 'assistant',
      model: 'claude-test',
      content: [],
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 12, cache_creation_input_tokens: 3, output_tokens: 1 },
    },
  };
  const base = { id: 'msg_s', object: 'chat.completion.chunk', created: CREATED, model: 'claude-test' };

  it('leaves thinking out of the answer when excluded (kept as hidden text for a count), skips empty deltas, and emits finish "stop" at message_stop when no message_delta came', () => {
    const chunks = translateStream(
      [
        start,
        { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
        { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'secret' } },
        { type: 'content_block_stop', index: 0 },
        { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
        { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: '' } },
        { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Hi' } },
        { type: 'content_block_delta', index: 1, delta: { type: 'citations_delta', citation: {} } },
        { type: 'content_block_stop', index: 1 },
        { type: 'message_stop' },
      ],
      true,
    );
    expect(chunks).toEqual([
      { ...base, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: null }] },
      { ...base, choices: [], hiddenText: 'secret' },
      { ...base, choices: [{ index: 0, delta: { content: 'Hi' }, finish_reason: null }] },
      { ...base, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] },
      {
        ...base,
        choices: [],
        usage: {
          prompt_tokens: 15,
          completion_tokens: 1,
          total_tokens: 16,
          prompt_tokens_details: { cached_tokens: 0, cache_write_tokens: 3 },
          completion_tokens_details: { reasoning_tokens: null },
        },
      },
    ]);
  });

  it('takes input and cache counts from message_delta when the API sends them there, and maps max_tokens to length', () => {
    const chunks = translateStream([
      start,
      { type: 'message_delta', delta: { stop_reason: 'max_tokens', stop_sequence: null }, usage: { input_tokens: 20, cache_read_input_tokens: 4, output_tokens: 9 } },
      { type: 'message_stop' },
    ]);
    expect(chunks[1].choices[0].finish_reason).toBe('length');
    expect(chunks[2].usage).toMatchObject({ prompt_tokens: 27, completion_tokens: 9, prompt_tokens_details: { cached_tokens: 4, cache_write_tokens: 3 } });
    expect(chunks).toHaveLength(3);
  });

  it.each([
    ['overloaded_error', 503],
    ['api_error', 502],
  ])('throws UpstreamHttpError on an %s event (status %d)', (type, status) => {
    const translator = new AnthropicStreamTranslator('anthropic', { excludeReasoning: false });
    translator.push(start);
    let thrown: unknown;
    try {
      translator.push({ type: 'error', error: { type, message: 'Overloaded' } });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(UpstreamHttpError);
    expect(thrown).toMatchObject({ provider: 'anthropic', status, upstreamMessage: 'Overloaded' });
  });

  it('rejects content before message_start and a stream cut before message_stop', () => {
    const early = new AnthropicStreamTranslator('anthropic', { excludeReasoning: false });
    expect(() => early.push({ type: 'content_block_stop', index: 0 })).toThrow(UpstreamProtocolError);
    const cut = new AnthropicStreamTranslator('anthropic', { excludeReasoning: false });
    cut.push(start);
    expect(() => cut.end()).toThrow(UpstreamProtocolError);
  });

  it('ignores pings, unknown events and anything after message_stop', () => {
    const translator = new AnthropicStreamTranslator('anthropic', { excludeReasoning: false });
    expect(translator.push({ type: 'ping' })).toEqual([]);
    translator.push(start);
    expect(translator.push({ type: 'something_new' } as unknown as AnthropicStreamEvent)).toEqual([]);
    translator.push({ type: 'message_stop' });
    expect(translator.finished).toBe(true);
    expect(translator.push({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: 'late' } })).toEqual([]);
  });

  it('parseStreamEvent rejects data that is not a typed JSON object', () => {
    expect(() => parseStreamEvent('anthropic', { data: 'not json' })).toThrow(UpstreamProtocolError);
    expect(() => parseStreamEvent('anthropic', { data: '{"no":"type"}' })).toThrow(UpstreamProtocolError);
    expect(parseStreamEvent('anthropic', { event: 'ping', data: '{"type":"ping"}' })).toEqual({ type: 'ping' });
  });
});
