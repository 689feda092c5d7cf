import type { ResponsesRequestDto } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import { chatRequestOf } from './responses-request';

const OPENAI = { type: 'openai/chat-completions', capabilities: ['streaming', 'tools'] };
const OPENAI_REASONING = { type: 'openai/chat-completions', capabilities: ['reasoning'] };
const ANTHROPIC = { type: 'anthropic/chat-completions', capabilities: [] };

const body = (fields: Partial<ResponsesRequestDto>): ResponsesRequestDto => ({ model: 'mini', input: 'hi', ...fields }) as ResponsesRequestDto;
const weather = { type: 'function', name: 'get_weather', description: 'The weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } };

function refusal(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(error).toBeInstanceOf(GatewayException);
    expect((error as GatewayException).getStatus()).toBe(400);
    return (error as GatewayException).message;
  }
  throw new Error('expected a 400');
}

describe('a Responses request as the chat request', () => {
  it('makes instructions a system message and a string input one user message, with the settings renamed', () => {
    const { request, droppedTools } = chatRequestOf(
      body({ instructions: 'Be brief.', input: 'Hello', max_output_tokens: 50, temperature: 0.3, top_p: 0.9, user: 'u1', stream: true, metadata: { a: '1' }, store: false, prompt_cache_key: 'k' }),
      OPENAI,
    );
    expect(request).toEqual({
      model: 'mini',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: 'Hello' },
      ],
      stream: true,
      max_completion_tokens: 50,
      temperature: 0.3,
      top_p: 0.9,
      user: 'u1',
    });
    expect(droppedTools).toEqual([]);
  });

  it('is never handed conversation state: previous_response_id or an item_reference left unresolved is a gateway fault, not a 400', () => {
    expect(() => chatRequestOf(body({ previous_response_id: 'resp_1' }), OPENAI)).toThrow(/unresolved/);
    expect(() => chatRequestOf(body({ input: [{ type: 'item_reference', id: 'msg_1' }] }), OPENAI)).toThrow(/unresolved/);
    expect(() => chatRequestOf(body({ previous_response_id: 'resp_1' }), OPENAI)).not.toThrow(GatewayException);
  });

  it('takes null for a field not set, as the SDK types allow', () => {
    const sent = { model: 'mini', input: 'Hello', instructions: null, temperature: null, top_p: null, max_output_tokens: null, previous_response_id: null, tools: null, tool_choice: null, text: null, reasoning: { effort: null, summary: null }, user: null };
    expect(chatRequestOf(sent as unknown as ResponsesRequestDto, OPENAI_REASONING).request).toEqual({ model: 'mini', messages: [{ role: 'user', content: 'Hello' }] });
  });

  it('translates message items with text and image parts, every role, and a function call round trip', () => {
    const { request } = chatRequestOf(
      body({
        input: [
          { role: 'developer', content: 'Use tools.' },
          { type: 'message', role: 'user', content: [{ type: 'input_text', text: 'Weather here?' }, { type: 'input_image', image_url: 'data:image/png;base64,AAA', detail: 'low' }] },
          { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'opaque' },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Let me ' }, { type: 'output_text', text: 'check.' }] },
          { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
          { type: 'function_call', call_id: 'call_2', name: 'lookup', namespace: 'crm', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'Sunny' },
          { type: 'function_call_output', call_id: 'call_2', output: [{ type: 'input_text', text: 'none' }] },
          { role: 'system', content: [{ type: 'input_text', text: 'Answer now.' }] },
        ],
      }),
      OPENAI,
    );
    expect(request.messages).toEqual([
      { role: 'developer', content: 'Use tools.' },
      { role: 'user', content: [{ type: 'text', text: 'Weather here?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,AAA', detail: 'low' } }] },
      {
        role: 'assistant',
        content: 'Let me check.',
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
          { id: 'call_2', type: 'function', function: { name: 'crm__lookup', arguments: '{}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: 'Sunny' },
      { role: 'tool', tool_call_id: 'call_2', content: 'none' },
      { role: 'system', content: 'Answer now.' },
    ]);
  });

  it('starts an assistant turn for calls that follow no assistant message', () => {
    const { request } = chatRequestOf(
      body({ input: [{ role: 'user', content: 'Go' }, { type: 'function_call', call_id: 'c', name: 'get_weather', arguments: '{}' }, { type: 'function_call_output', call_id: 'c', output: 'ok' }] }),
      OPENAI,
    );
    expect(request.messages[1]).toEqual({ role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'get_weather', arguments: '{}' } }] });
  });

  it('flattens namespaces, drops built-in tools and names them, and keeps tool_choice and parallel_tool_calls', () => {
    const { request, droppedTools, namespaced } = chatRequestOf(
      body({
        tools: [
          weather,
          { type: 'namespace', name: 'crm', description: 'The CRM', tools: [{ type: 'function', name: 'lookup', parameters: { type: 'object', properties: {} } }] },
          { type: 'web_search' },
          { type: 'custom', name: 'apply_patch' },
        ],
        tool_choice: 'auto',
        parallel_tool_calls: false,
      }),
      OPENAI,
    );
    expect(request.tools).toEqual([
      { type: 'function', function: { name: 'get_weather', description: 'The weather', parameters: weather.parameters } },
      { type: 'function', function: { name: 'crm__lookup', parameters: { type: 'object', properties: {} } } },
    ]);
    expect(request.tool_choice).toBe('auto');
    expect(request.parallel_tool_calls).toBe(false);
    expect(droppedTools).toEqual(['web_search', 'apply_patch']);
    expect(namespaced.get('crm__lookup')).toEqual({ namespace: 'crm', name: 'lookup' });
  });

  it('forces a named function, a namespaced one included, and limits the calls to allowed functions', () => {
    const tools = [weather, { type: 'namespace', name: 'crm', description: '', tools: [{ type: 'function', name: 'lookup' }] }];
    expect(chatRequestOf(body({ tools, tool_choice: { type: 'function', name: 'get_weather' } }), OPENAI).request.tool_choice).toEqual({ type: 'function', function: { name: 'get_weather' } });
    expect(chatRequestOf(body({ tools, tool_choice: { type: 'function', name: 'lookup', namespace: 'crm' } }), OPENAI).request.tool_choice).toEqual({ type: 'function', function: { name: 'crm__lookup' } });
    expect(refusal(() => chatRequestOf(body({ tools, tool_choice: { type: 'function', name: 'nope' } }), OPENAI))).toContain('tool_choice.name: no function tool named "nope"');
    expect(chatRequestOf(body({ tools, tool_choice: { type: 'allowed_tools', mode: 'required', tools: [{ type: 'function', name: 'get_weather' }, { type: 'web_search' }] } }), OPENAI).request.tool_choice).toEqual({
      type: 'allowed_tools',
      allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'get_weather' } }] },
    });
  });

  it('refuses a tool_choice that forces a built-in tool, and one that requires a call when only built-in tools are left', () => {
    expect(refusal(() => chatRequestOf(body({ tools: [weather, { type: 'web_search' }], tool_choice: { type: 'web_search' } }), OPENAI))).toContain('forces the built-in tool "web_search"');
    expect(refusal(() => chatRequestOf(body({ tools: [{ type: 'web_search' }], tool_choice: 'required' }), OPENAI))).toContain('no function tool is left to call');
    // Not forced: accepted, the tool dropped and tool_choice with it.
    const { request, droppedTools } = chatRequestOf(body({ tools: [{ type: 'web_search' }], tool_choice: 'auto' }), OPENAI);
    expect([request.tools, request.tool_choice, droppedTools]).toEqual([undefined, undefined, ['web_search']]);
  });

  it('maps text.format to response_format', () => {
    const schema = { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'] };
    expect(chatRequestOf(body({ text: { format: { type: 'json_schema', name: 'count', schema, strict: true } } }), OPENAI).request.response_format).toEqual({
      type: 'json_schema',
      json_schema: { name: 'count', schema, strict: true },
    });
    expect(chatRequestOf(body({ text: { format: { type: 'json_object' } } }), OPENAI).request.response_format).toEqual({ type: 'json_object' });
    expect(chatRequestOf(body({ text: { format: { type: 'text' }, verbosity: 'low' } }), OPENAI).request).not.toHaveProperty('response_format');
  });

  it('sends a reasoning effort only to a model that reasons, in the form its source reads', () => {
    expect(chatRequestOf(body({ reasoning: { effort: 'minimal', summary: 'auto' } }), OPENAI_REASONING).request.reasoning_effort).toBe('low');
    expect(chatRequestOf(body({ reasoning: { effort: 'high' } }), ANTHROPIC).request.reasoning).toEqual({ effort: 'high' });
    const plain = chatRequestOf(body({ reasoning: { effort: 'high', summary: 'auto' } }), OPENAI).request;
    expect([plain.reasoning_effort, plain.reasoning]).toEqual([undefined, undefined]);
    expect(refusal(() => chatRequestOf(body({ reasoning: { effort: 'extreme' } }), OPENAI_REASONING))).toContain('reasoning.effort');
  });

  it('refuses an input with no message, unknown items and images by file id, naming the field', () => {
    expect(refusal(() => chatRequestOf(body({ input: [] }), OPENAI))).toContain('input: Expected a string or a non-empty array');
    expect(refusal(() => chatRequestOf(body({ input: [{ type: 'reasoning', summary: [] }] }), OPENAI))).toContain('Received no message to answer');
    expect(refusal(() => chatRequestOf(body({ input: [{ type: 'computer_call_output', call_id: 'c' }] }), OPENAI))).toContain('input[0].type: a "computer_call_output" item');
    expect(refusal(() => chatRequestOf(body({ input: [{ role: 'user', content: [{ type: 'input_image', file_id: 'file_1' }] }] }), OPENAI))).toContain('input[0].content[0].image_url');
  });

  it('sends an input_file part with file_data as the chat file part, its filename kept', () => {
    const pdf = 'data:application/pdf;base64,JVBERi0xLjQ=';
    const { request } = chatRequestOf(
      body({ input: [{ role: 'user', content: [{ type: 'input_text', text: 'Summarize' }, { type: 'input_file', file_data: pdf, filename: 'a.pdf' }, { type: 'input_file', file_data: pdf, filename: null }] }] }),
      ANTHROPIC,
    );
    expect(request.messages).toEqual([
      {
        role: 'user',
        content: [
          { type: 'text', text: 'Summarize' },
          { type: 'file', file: { file_data: pdf, filename: 'a.pdf' } },
          { type: 'file', file: { file_data: pdf } },
        ],
      },
    ]);
  });

  it.each([
    ['file_id', { file_id: 'file-abc' }, "input[0].content[0].file_id: a file id names a file in the operator's own provider account, which this gateway does not send: send the file itself as file_data"],
    ['file_url', { file_url: 'https://example.com/a.pdf' }, 'input[0].content[0].file_url: a file by URL cannot be sent by this gateway: send the file itself as file_data'],
    ['neither', { filename: 'a.pdf' }, 'input[0].content[0].file_data: Expected a base64 data URL. Received no file_data, file_url or file_id'],
  ])('refuses an input_file part by %s, naming the field and saying to send file_data', (_label, fields, message) => {
    for (const model of [OPENAI, ANTHROPIC]) {
      expect(refusal(() => chatRequestOf(body({ input: [{ role: 'user', content: [{ type: 'input_file', ...fields }] }] }), model))).toContain(message);
    }
  });
});
