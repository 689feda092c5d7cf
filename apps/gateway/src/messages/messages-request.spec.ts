import { MessagesRequestDto } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import { chatRequestForNative, chatRequestOf, promptOf } from './messages-request';

const claude = { type: 'anthropic/chat-completions', capabilities: ['streaming', 'tools', 'reasoning'] };
const gpt = { type: 'openai/chat-completions', capabilities: ['streaming', 'tools'] };
const reasoner = { type: 'openai/chat-completions', capabilities: ['streaming', 'tools', 'reasoning'] };

const body = (fields: Partial<MessagesRequestDto>): MessagesRequestDto => ({ model: 'm', max_tokens: 100, messages: [{ role: 'user', content: 'hi' }], ...fields }) as MessagesRequestDto;
const weather = { name: 'get_weather', description: 'Weather', input_schema: { type: 'object', properties: { city: { type: 'string' } } } };

describe('the Messages request as a chat request', () => {
  it('puts system blocks and a system message in place as system messages, keeping cache_control', () => {
    const request = chatRequestOf(
      body({
        system: [{ type: 'text', text: 'Be an agent.', cache_control: { type: 'ephemeral', ttl: '1h' } }],
        messages: [
          { role: 'system', content: 'Be brief.' },
          { role: 'user', content: [{ type: 'text', text: 'hello', cache_control: { type: 'ephemeral' } }] },
        ],
        stream: true,
        stop_sequences: ['END'],
        temperature: 0.3,
        top_p: 0.9,
        top_k: 5,
        metadata: { user_id: 'u-1' },
      }),
      gpt,
    );
    expect(request).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: [{ type: 'text', text: 'Be an agent.', cache_control: { type: 'ephemeral', ttl: '1h' } }] },
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'hello', cache_control: { type: 'ephemeral' } }] },
      ],
      max_tokens: 100,
      stream: true,
      stop: ['END'],
      temperature: 0.3,
      top_p: 0.9,
      user: 'u-1',
    });
  });

  it('turns tool_use into tool_calls and tool_result into tool messages ahead of the turn, images of results after them', () => {
    const request = chatRequestOf(
      body({
        messages: [
          { role: 'user', content: 'weather?' },
          {
            role: 'assistant',
            content: [
              { type: 'thinking', thinking: 'Let me call it.', signature: 'sig' },
              { type: 'text', text: 'Calling.' },
              { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: { city: 'Paris' } },
            ],
          },
          {
            role: 'user',
            content: [
              { type: 'text', text: 'and then?' },
              {
                type: 'tool_result',
                tool_use_id: 'toolu_1',
                content: [
                  { type: 'text', text: 'Sunny' },
                  { type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } },
                ],
              },
              { type: 'tool_result', tool_use_id: 'toolu_2', content: 'timed out', is_error: true },
            ],
          },
        ],
      }),
      gpt,
    );
    expect(request.messages).toEqual([
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: 'Calling.', tool_calls: [{ id: 'toolu_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
      { role: 'tool', tool_call_id: 'toolu_1', content: 'Sunny' },
      { role: 'tool', tool_call_id: 'toolu_2', content: 'Error: timed out' },
      { role: 'user', content: [{ type: 'image_url', image_url: { url: 'data:image/png;base64,AAAA' } }, { type: 'text', text: 'and then?' }] },
    ]);
  });

  it('sends custom tools as functions, leaves server tools out, and translates tool_choice', () => {
    const tools = [weather, { type: 'web_search_20250305', name: 'web_search' }, { type: 'custom', name: 'x', input_schema: { type: 'object' } }] as MessagesRequestDto['tools'];
    const translated = (choice: MessagesRequestDto['tool_choice']) => chatRequestOf(body({ tools, tool_choice: choice }), gpt);
    expect(translated(undefined).tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: weather.input_schema } },
      { type: 'function', function: { name: 'x', parameters: { type: 'object' } } },
    ]);
    expect(translated({ type: 'auto' }).tool_choice).toBe('auto');
    expect(translated({ type: 'any', disable_parallel_tool_use: true })).toMatchObject({ tool_choice: 'required', parallel_tool_calls: false });
    expect(translated({ type: 'none' }).tool_choice).toBe('none');
    expect(translated({ type: 'tool', name: 'x' }).tool_choice).toEqual({ type: 'function', function: { name: 'x' } });
    // Only server tools: nothing to choose from upstream.
    const serverOnly = chatRequestOf(body({ tools: [{ type: 'bash_20250124', name: 'bash' }], tool_choice: { type: 'any' } }), gpt);
    expect([serverOnly.tools, serverOnly.tool_choice]).toEqual([undefined, undefined]);
  });

  it('asks for thinking in the form each source takes, and none from a model that does not reason', () => {
    const thinking = (fields: Partial<MessagesRequestDto>, model = claude) => {
      const { reasoning, reasoning_effort } = chatRequestOf(body(fields), model);
      return { reasoning, reasoning_effort };
    };
    expect(thinking({ thinking: { type: 'enabled', budget_tokens: 2000 } })).toEqual({ reasoning: { max_tokens: 2000 }, reasoning_effort: undefined });
    expect(thinking({ thinking: { type: 'adaptive' }, output_config: { effort: 'low' } })).toEqual({ reasoning: { effort: 'low' }, reasoning_effort: undefined });
    expect(thinking({ thinking: { type: 'adaptive' }, output_config: { effort: 'max' } })).toEqual({ reasoning: { effort: 'high' }, reasoning_effort: undefined });
    expect(thinking({ thinking: { type: 'adaptive' } })).toEqual({ reasoning: { effort: 'medium' }, reasoning_effort: undefined });
    expect(thinking({ thinking: { type: 'disabled' } })).toEqual({ reasoning: undefined, reasoning_effort: undefined });
    expect(thinking({ thinking: { type: 'enabled', budget_tokens: 1024 } }, reasoner)).toEqual({ reasoning: undefined, reasoning_effort: 'low' });
    expect(thinking({ thinking: { type: 'enabled', budget_tokens: 30000 } }, reasoner)).toEqual({ reasoning: undefined, reasoning_effort: 'high' });
    expect(thinking({ thinking: { type: 'adaptive' } }, gpt)).toEqual({ reasoning: undefined, reasoning_effort: undefined });
    // Answering tool calls keeps thinking: the chat request reaches no Anthropic source (those take the request natively).
    const toolLoop: MessagesRequestDto['messages'] = [
      { role: 'user', content: 'weather?' },
      { role: 'assistant', content: [{ type: 'thinking', thinking: 't', signature: 's' }, { type: 'tool_use', id: 'toolu_1', name: 'get_weather', input: {} }] },
      { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: 'Sunny' }] },
    ];
    expect(thinking({ thinking: { type: 'adaptive' }, messages: toolLoop })).toEqual({ reasoning: { effort: 'medium' }, reasoning_effort: undefined });
    expect(thinking({ thinking: { type: 'adaptive' }, messages: toolLoop }, reasoner)).toEqual({ reasoning: undefined, reasoning_effort: 'medium' });
  });

  it('asks output_config.format (structured outputs) as the chat response_format', () => {
    const schema = { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false };
    expect(chatRequestOf(body({ output_config: { format: { type: 'json_schema', schema } } }), gpt).response_format).toEqual({ type: 'json_schema', json_schema: { name: 'answer', schema } });
    expect(chatRequestOf(body({ output_config: { effort: 'low' } }), gpt).response_format).toBeUndefined();
  });

  it("lowers a max_tokens above the model's output limit to it", () => {
    const limited = { ...gpt, info: { outputMax: 16384 } };
    expect(chatRequestOf(body({ max_tokens: 64000 }), limited).max_tokens).toBe(16384);
    expect(chatRequestOf(body({ max_tokens: 500 }), limited).max_tokens).toBe(500);
    expect(chatRequestOf(body({ max_tokens: 64000 }), gpt).max_tokens).toBe(64000);
  });

  it('counts the same prompt count_tokens is asked about', () => {
    expect(promptOf({ model: 'm', system: 'sys', messages: [{ role: 'user', content: 'hi' }] }, gpt)).toEqual({
      model: 'm',
      messages: [
        { role: 'system', content: 'sys' },
        { role: 'user', content: 'hi' },
      ],
    });
  });

  it('sends a base64 PDF as a chat file part (its title the filename), from a user turn or a tool result', () => {
    const pdf = { type: 'document', title: 'report.pdf', source: { type: 'base64', media_type: 'application/pdf', data: 'JVBERi0=' } };
    const file = { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBERi0=', filename: 'report.pdf' } };
    expect(chatRequestOf(body({ messages: [{ role: 'user', content: [pdf, { type: 'text', text: 'Summarise' }] }] }), gpt).messages).toEqual([
      { role: 'user', content: [file, { type: 'text', text: 'Summarise' }] },
    ]);
    const request = chatRequestOf(
      body({
        messages: [
          { role: 'user', content: 'Read it' },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [{ type: 'text', text: 'here' }, pdf] }] },
        ],
      }),
      gpt,
    );
    expect(request.messages.slice(2)).toEqual([
      { role: 'tool', tool_call_id: 't1', content: 'here' },
      { role: 'user', content: [file] },
    ]);
  });

  it('refuses, naming the block, what the chat request cannot carry', () => {
    const refusal = (content: MessagesRequestDto['messages'][number]['content'], role: 'user' | 'assistant' = 'user') => {
      try {
        chatRequestOf(body({ messages: [{ role, content }] }), gpt);
      } catch (error) {
        expect(error).toBeInstanceOf(GatewayException);
        return (error as GatewayException).message;
      }
      return undefined;
    };
    expect(refusal([{ type: 'image', source: { type: 'file', file_id: 'f' } }])).toBe(
      "Body validation error! messages[0].content[0].source: Expected a base64 source {type: 'base64', media_type, data} or {type: 'url', url}",
    );
    expect(refusal([{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } }])).toMatch(/^Body validation error! messages\[0\]\.content\[0\]\.source: only plain-text documents .* and PDFs as base64/);
    expect(refusal([{ type: 'document', source: { type: 'base64', media_type: 'application/msword', data: 'AAAA' } }])).toMatch(/^Body validation error! messages\[0\]\.content\[0\]\.source: only plain-text documents/);
    expect(refusal([{ type: 'server_tool_use', id: 's', name: 'web_search', input: {} }], 'assistant')).toMatch(/^Body validation error! messages\[0\]\.content\[0\]\.type: a "server_tool_use" block/);
  });

  it("carries a custom-content document as its text and images, in a user turn and in a tool result, so an image in it by URL is held as one", () => {
    const picture = { type: 'image', source: { type: 'url', url: 'https://example.com/chart.png' } };
    const document = { type: 'document', source: { type: 'content', content: [{ type: 'text', text: 'Figure 1' }, picture] } };
    const request = chatRequestOf(
      body({
        messages: [
          { role: 'user', content: [document] },
          { role: 'assistant', content: [{ type: 'tool_use', id: 't1', name: 'read', input: {} }] },
          { role: 'user', content: [{ type: 'tool_result', tool_use_id: 't1', content: [document] }] },
        ],
      }),
      gpt,
    );
    const image = { type: 'image_url', image_url: { url: 'https://example.com/chart.png' } };
    expect(request.messages).toEqual([
      { role: 'user', content: [{ type: 'text', text: 'Figure 1' }, image] },
      { role: 'assistant', content: null, tool_calls: [{ id: 't1', type: 'function', function: { name: 'read', arguments: '{}' } }] },
      { role: 'tool', tool_call_id: 't1', content: 'Figure 1' },
      { role: 'user', content: [image] },
    ]);
    expect(() => chatRequestOf(body({ messages: [{ role: 'user', content: [{ type: 'document', source: { type: 'content', content: [{ type: 'image' }] } }] }] }), gpt)).toThrow(
      "Body validation error! messages[0].content[0].source.content[0].source: Expected a base64 source {type: 'base64', media_type, data} or {type: 'url', url}",
    );
  });

  it('leaves out, rather than refuses, what the chat request cannot carry when Anthropic sources take the request natively, saying why', () => {
    const pdf = { type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf' } };
    const { request, untranslatable } = chatRequestForNative(body({ messages: [{ role: 'user', content: [pdf, { type: 'text', text: 'Summarise' }] }] }), claude);
    // The document stays as an empty file part: the native request carries it, so the hold counts one.
    expect(request.messages).toEqual([{ role: 'user', content: [{ type: 'file', file: {} }, { type: 'text', text: 'Summarise' }] }]);
    expect(untranslatable).toMatch(/^Body validation error! messages\[0\]\.content\[0\]\.source: only plain-text documents/);
    expect(chatRequestForNative(body({}), claude).untranslatable).toBeUndefined();
    // Only for that call: a translation after it refuses again.
    expect(() => chatRequestOf(body({ messages: [{ role: 'user', content: [pdf] }] }), gpt)).toThrow(GatewayException);
  });
});
