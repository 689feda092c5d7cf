import type { ChatCompletionDto, ErrorBodyDto } from '@igw/contracts';
import { anthropicErrorBody, anthropicErrorType } from './messages-errors';
import { messageOf, messagesUsageOf, stopReasonOf } from './messages-response';

const completion = (message: Record<string, unknown>, finishReason: string, usage: Record<string, unknown> = { prompt_tokens: 20, completion_tokens: 5, total_tokens: 25 }) =>
  ({
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'acme/chat',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason, logprobs: null }],
    usage,
    meta: { usage: { credits_used: 3, usd_spent: 0.0000015 } },
  }) as unknown as ChatCompletionDto;

describe('the chat answer as a Messages answer', () => {
  it('puts thinking first, then the text, then the tool calls, with the stop reason, usage and meta.usage', () => {
    const message = messageOf(
      completion(
        {
          content: 'Let me look.',
          reasoning_content: 'The user wants the weather.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'noop', arguments: '' } },
          ],
        },
        'tool_calls',
      ),
    );
    expect(message).toEqual({
      id: 'msg_chatcmpl-1',
      type: 'message',
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'The user wants the weather.', signature: '' },
        { type: 'text', text: 'Let me look.' },
        { type: 'tool_use', id: 'call_1', name: 'get_weather', input: { city: 'Paris' } },
        { type: 'tool_use', id: 'call_2', name: 'noop', input: {} },
      ],
      model: 'acme/chat',
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 20, output_tokens: 5, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
      meta: { usage: { credits_used: 3, usd_spent: 0.0000015 } },
    });
  });

  it('maps every finish reason and keeps an Anthropic id as it is', () => {
    expect(['stop', 'length', 'tool_calls', 'content_filter', 'function_call', null].map(stopReasonOf)).toEqual(['end_turn', 'max_tokens', 'tool_use', 'refusal', 'tool_use', 'end_turn']);
    expect(messageOf({ ...completion({ content: 'x' }, 'stop'), id: 'msg_01abc' }).id).toBe('msg_01abc');
  });

  it("splits the prompt into uncached input, cache writes and cache reads, as Anthropic counts them", () => {
    expect(messagesUsageOf({ prompt_tokens: 100, completion_tokens: 7, prompt_tokens_details: { cached_tokens: 60, cache_write_tokens: 30 } })).toEqual({
      input_tokens: 10,
      output_tokens: 7,
      cache_creation_input_tokens: 30,
      cache_read_input_tokens: 60,
    });
  });
});

describe("errors in Anthropic's shape", () => {
  it('names the Anthropic error type of each status', () => {
    expect([400, 401, 403, 404, 413, 429, 500, 502, 503, 504, 529].map(anthropicErrorType)).toEqual([
      'invalid_request_error',
      'authentication_error',
      'permission_error',
      'not_found_error',
      'request_too_large',
      'rate_limit_error',
      'api_error',
      'api_error',
      'overloaded_error',
      'api_error',
      'overloaded_error',
    ]);
  });

  it("keeps the spec body's fields beside Anthropic's", () => {
    const spec: ErrorBodyDto = {
      message: 'Too many requests',
      path: '/v1/messages',
      requestId: 'r-1',
      statusCode: 429,
      timestamp: '2026-01-01T00:00:00.000Z',
      error: { message: 'Too many requests', type: 'rate_limit_error', code: 'rate_limit_exceeded', param: null },
    };
    expect(anthropicErrorBody(spec)).toEqual({
      type: 'error',
      error: { type: 'rate_limit_error', message: 'Too many requests' },
      request_id: 'r-1',
      message: 'Too many requests',
      path: '/v1/messages',
      requestId: 'r-1',
      statusCode: 429,
      timestamp: '2026-01-01T00:00:00.000Z',
    });
  });
});
