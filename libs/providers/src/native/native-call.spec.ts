import { UpstreamHttpError, UpstreamProtocolError } from '../upstream.errors';
import { AnthropicNativeEvents, forwardedAnthropicBetas } from './anthropic-messages.native';
import { ResponsesNativeEvents, responsesUsageOf } from './openai-responses.native';

const sse = (data: object) => ({ event: (data as { type: string }).type, data: JSON.stringify(data) });

describe("native calls: what the gateway reads of the provider's own answers", () => {
  it('passes on only the anthropic-beta values that change how the model answers', () => {
    expect(forwardedAnthropicBetas('interleaved-thinking-2025-05-14, files-api-2025-04-14,context-management-2025-06-27')).toBe('interleaved-thinking-2025-05-14,context-management-2025-06-27');
    expect(forwardedAnthropicBetas(['mcp-client-2025-04-04', 'code-execution-2025-05-22', 'context-1m-2025-08-07'])).toBeUndefined();
    expect(forwardedAnthropicBetas(undefined)).toBeUndefined();
    // Anything but a plain beta name is dropped, not forwarded.
    expect(forwardedAnthropicBetas('effort-2025-11-24\r\nx-api-key: stolen')).toBeUndefined();
  });

  it('reads Responses usage: cached input and reasoning output inside the totals, one search per web_search_call item', () => {
    expect(
      responsesUsageOf({
        output: [{ type: 'web_search_call' }, { type: 'web_search_call' }, { type: 'message' }],
        usage: { input_tokens: 120, input_tokens_details: { cached_tokens: 100 }, output_tokens: 30, output_tokens_details: { reasoning_tokens: 12 } },
      }),
    ).toEqual({
      prompt_tokens: 120,
      completion_tokens: 30,
      total_tokens: 150,
      prompt_tokens_details: { cached_tokens: 100 },
      completion_tokens_details: { reasoning_tokens: 12 },
      web_search_calls: 2,
    });
    // Numbers that are not counts count nothing.
    expect(responsesUsageOf({ output: [], usage: { input_tokens: -5, output_tokens: 'many' } })).toMatchObject({ prompt_tokens: 0, completion_tokens: 0 });
  });

  it("reads Anthropic's events: the usage whole at message_delta, the generated text for a count, a failure or a cut as errors", () => {
    const reader = new AnthropicNativeEvents('anthropic');
    const start = reader.read(sse({ type: 'message_start', message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 10, cache_read_input_tokens: 40, cache_creation_input_tokens: 5, output_tokens: 1 } } }));
    expect(start.usage).toBeUndefined();
    reader.read(sse({ type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } }));
    const thinking = reader.read(sse({ type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Hmm.' } }));
    expect(thinking.chunks.map((chunk) => chunk.choices[0].delta)).toEqual([{ reasoning_content: 'Hmm.' }]);
    const signature = reader.read(sse({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } }));
    expect([signature.chunks, signature.data]).toEqual([[], JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'signature_delta', signature: 'sig' } })]);
    const delta = reader.read(sse({ type: 'message_delta', delta: { stop_reason: 'stop_sequence', stop_sequence: 'END' }, usage: { output_tokens: 7, server_tool_use: { web_search_requests: 2 } } }));
    expect(delta.usage).toEqual({
      prompt_tokens: 55,
      completion_tokens: 7,
      total_tokens: 62,
      prompt_tokens_details: { cached_tokens: 40, cache_write_tokens: 5 },
      completion_tokens_details: { reasoning_tokens: null },
      web_search_calls: 2,
    });
    expect(reader.read(sse({ type: 'message_stop' })).chunks).toEqual([]);
    expect(() => reader.end()).not.toThrow();

    const overloaded = new AnthropicNativeEvents('anthropic');
    expect(() => overloaded.read(sse({ type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }))).toThrow(UpstreamHttpError);
    const cut = new AnthropicNativeEvents('anthropic');
    cut.read(sse({ type: 'message_start', message: { id: 'msg_1', model: 'claude', usage: { input_tokens: 1, output_tokens: 1 } } }));
    expect(() => cut.end()).toThrow(UpstreamProtocolError);
  });

  it("reads the Responses API's typed events: deltas for a count, usage at response.completed, failures as errors", () => {
    const reader = new ResponsesNativeEvents('openai');
    expect(reader.read(sse({ type: 'response.created', sequence_number: 0, response: { id: 'resp_1', output: [] } })).chunks).toEqual([]);
    expect(reader.read(sse({ type: 'response.output_item.added', item: { type: 'function_call', name: 'ls' } })).chunks[0].choices[0].delta).toEqual({ tool_calls: [{ index: 0, function: { name: 'ls' } }] });
    expect(reader.read(sse({ type: 'response.function_call_arguments.delta', delta: '{"a"' })).chunks[0].choices[0].delta).toEqual({ tool_calls: [{ index: 0, function: { arguments: '{"a"' } }] });
    expect(reader.read(sse({ type: 'response.reasoning_summary_text.delta', delta: 'Think' })).chunks[0].choices[0].delta).toEqual({ reasoning_content: 'Think' });
    expect(reader.read(sse({ type: 'response.output_text.delta', delta: 'Hi' })).chunks[0].choices[0].delta).toEqual({ content: 'Hi' });
    expect(() => reader.end()).toThrow(UpstreamProtocolError);
    const done = reader.read(sse({ type: 'response.completed', response: { output: [], usage: { input_tokens: 3, output_tokens: 2 } } }));
    expect(done.usage).toMatchObject({ prompt_tokens: 3, completion_tokens: 2 });
    expect(() => reader.end()).not.toThrow();

    expect(() => new ResponsesNativeEvents('openai').read(sse({ type: 'error', message: 'boom' }))).toThrow('boom');
    expect(() => new ResponsesNativeEvents('openai').read(sse({ type: 'response.failed', response: { error: { message: 'bad' } } }))).toThrow('bad');
    expect(() => new ResponsesNativeEvents('openai').read({ data: 'not json' })).toThrow(UpstreamProtocolError);
  });
});
