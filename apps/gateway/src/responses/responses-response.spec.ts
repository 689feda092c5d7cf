import type { ChatCompletionDto, ResponsesRequestDto } from '@igw/contracts';
import { responseOf, responsesContextOf } from './responses-response';

const request = { model: 'mini', input: 'hi', instructions: 'Be brief.', metadata: { team: 'a' }, max_output_tokens: 30, temperature: 0.5 } as ResponsesRequestDto;
const context = responsesContextOf(request, new Map([['crm__lookup', { namespace: 'crm', name: 'lookup' }]]));

function completion(message: Record<string, unknown>, finishReason: string, usage: Record<string, unknown> = { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 }): ChatCompletionDto {
  return {
    id: 'chatcmpl-1',
    object: 'chat.completion',
    created: 1,
    model: 'acme/chat-mini',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason, logprobs: null }],
    usage,
    meta: { usage: { credits_used: 3, usd_spent: 0.0000015 } },
  } as unknown as ChatCompletionDto;
}

describe('a chat completion as a Responses response', () => {
  it('answers text as a message item, with the usage renamed, meta.usage and the request echoed', () => {
    const answer = responseOf(completion({ content: 'Hello there.' }, 'stop', { prompt_tokens: 20, completion_tokens: 8, total_tokens: 28, prompt_tokens_details: { cached_tokens: 5 }, completion_tokens_details: { reasoning_tokens: 2 } }), context);
    expect(answer).toMatchObject({
      id: context.id,
      object: 'response',
      created_at: context.createdAt,
      status: 'completed',
      incomplete_details: null,
      model: 'acme/chat-mini',
      instructions: 'Be brief.',
      metadata: { team: 'a' },
      max_output_tokens: 30,
      temperature: 0.5,
      // Kept unless the request says store: false (OpenAI's default).
      store: true,
      previous_response_id: null,
      output: [{ type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Hello there.', annotations: [], logprobs: [] }] }],
      usage: { input_tokens: 20, input_tokens_details: { cached_tokens: 5 }, output_tokens: 8, output_tokens_details: { reasoning_tokens: 2 }, total_tokens: 28 },
      meta: { usage: { credits_used: 3, usd_spent: 0.0000015 } },
    });
    expect(context.id).toMatch(/^resp_[0-9a-f]{32}$/);
    expect((answer.output as Array<{ id: string }>)[0].id).toMatch(/^msg_/);
    expect(answer).not.toHaveProperty('output_text');
  });

  it('echoes store: false and the previous_response_id it continued', () => {
    const continued = responsesContextOf({ ...request, store: false, previous_response_id: 'resp_0123456789abcdef0123456789abcdef' } as ResponsesRequestDto, new Map());
    expect(responseOf(completion({ content: 'Hi.' }, 'stop'), continued)).toMatchObject({ store: false, previous_response_id: 'resp_0123456789abcdef0123456789abcdef' });
  });

  it('answers reasoning as a reasoning item with its summary, and tool calls as function_call items (namespaced ones under their namespace)', () => {
    const answer = responseOf(
      completion(
        {
          content: null,
          reasoning_content: 'A tool is needed.',
          tool_calls: [
            { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
            { id: 'call_2', type: 'function', function: { name: 'crm__lookup', arguments: '{}' } },
          ],
        },
        'tool_calls',
      ),
      context,
    );
    expect(answer.status).toBe('completed');
    expect(answer.output).toEqual([
      { id: expect.stringMatching(/^rs_/), type: 'reasoning', summary: [{ type: 'summary_text', text: 'A tool is needed.' }] },
      { id: expect.stringMatching(/^fc_/), type: 'function_call', status: 'completed', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { id: expect.stringMatching(/^fc_/), type: 'function_call', status: 'completed', call_id: 'call_2', name: 'lookup', namespace: 'crm', arguments: '{}' },
    ]);
  });

  it('is incomplete for the token limit, with the reason', () => {
    const answer = responseOf(completion({ content: 'Hello' }, 'length'), context);
    expect([answer.status, answer.incomplete_details]).toEqual(['incomplete', { reason: 'max_output_tokens' }]);
  });

  it('answers a refusal as a refusal part', () => {
    const answer = responseOf(completion({ content: null, refusal: 'I cannot help.' }, 'stop'), context);
    expect((answer.output as Array<{ content: unknown }>)[0].content).toEqual([{ type: 'refusal', refusal: 'I cannot help.' }]);
  });
});
