import { rejectionMessage, validatedBody } from '@igw/validation/testing';
import { ResponsesRequestDto } from './responses-request.dto';

// The Responses request contract run through the real global pipe, exactly as a request body
// reaches the controller: what Codex and the SDK send passes; a wrong field is named.

type Body = Record<string, unknown>;

const request = (fields: Body = {}): Body => ({ model: 'gpt-4o-mini', input: 'Hello', ...fields });
const weather = { type: 'function', name: 'get_weather', parameters: { type: 'object', properties: {} }, strict: false };

describe('POST /v1/responses body', () => {
  it.each<[string, Body]>([
    ['a string input', request()],
    [
      'items of every kind the translation reads',
      request({
        input: [
          { type: 'message', role: 'developer', content: [{ type: 'input_text', text: 'Rules' }] },
          { role: 'user', content: [{ type: 'input_text', text: 'Look' }, { type: 'input_image', image_url: 'https://example.com/a.png', detail: 'auto' }, { type: 'input_file', file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' }] },
          { type: 'reasoning', id: 'rs_1', summary: [], encrypted_content: 'opaque' },
          { type: 'message', role: 'assistant', content: [{ type: 'output_text', text: 'Sure', annotations: [] }] },
          { type: 'function_call', call_id: 'call_1', name: 'get_weather', arguments: '{}' },
          { type: 'function_call_output', call_id: 'call_1', output: 'Sunny' },
        ],
      }),
    ],
    [
      "Codex's fields",
      request({
        instructions: 'You are a coding agent.',
        tools: [weather, { type: 'namespace', name: 'crm', description: 'CRM', tools: [weather] }, { type: 'web_search', external_web_access: false }],
        tool_choice: 'auto',
        parallel_tool_calls: false,
        reasoning: { effort: 'medium', summary: 'auto' },
        store: false,
        stream: true,
        include: ['reasoning.encrypted_content'],
        prompt_cache_key: 'k',
        client_metadata: { originator: 'codex_exec' },
        text: { verbosity: 'low' },
      }),
    ],
    ['a json_schema format, sampling and limits', request({ text: { format: { type: 'json_schema', name: 'n', schema: { type: 'object' }, strict: true } }, temperature: 1.5, top_p: 0.5, max_output_tokens: 64, metadata: { a: 'b' }, user: 'u' })],
    ['a function tool_choice', request({ tools: [weather], tool_choice: { type: 'function', name: 'get_weather' } })],
  ])('accepts %s, keeping the items as sent', async (_name, body) => {
    const validated = (await validatedBody(ResponsesRequestDto, body)) as unknown as Body;
    expect(validated.input).toEqual(body.input);
    if (body.tools) expect(validated.tools).toEqual(body.tools);
  });

  it('accepts the values of unserved fields that mean leaving them out, and sends none of them on', async () => {
    const validated = (await validatedBody(ResponsesRequestDto, request({ background: false, truncation: 'disabled', service_tier: 'auto', conversation: null, prompt: null }))) as unknown as Body;
    for (const field of ['background', 'truncation', 'service_tier', 'conversation', 'prompt']) expect(validated).not.toHaveProperty(field);
  });

  it.each<[string, Body, string]>([
    ['background mode', request({ background: true }), "background: Expected false or nothing: background mode is not served here"],
    ['a conversation object', request({ conversation: 'conv_123' }), "conversation: Expected nothing: OpenAI's conversation objects live in an OpenAI account"],
    ['a prompt template', request({ prompt: { id: 'pmpt_1', version: '2' } }), 'prompt: Expected nothing: prompt templates live in an OpenAI account, not here'],
    ['automatic truncation', request({ truncation: 'auto' }), "truncation: Expected 'disabled' or nothing"],
    ['the flex service tier', request({ service_tier: 'flex' }), "service_tier: Expected 'auto', 'default' or nothing"],
    ['a field the API does not have', request({ temprature: 1 }), "temprature: Expected one of the fields 'model', 'input',"],
  ])('refuses %s with a 400 naming the field, never dropping it', async (_name, body, message) => {
    const refused = await rejectionMessage(ResponsesRequestDto, body);
    expect(refused).toContain(`Body validation error! ${message}`);
  });

  it.each<[string, Body, string]>([
    ['no input', { model: 'gpt-4o-mini' }, 'input: Expected a string or an array of input items. Received nothing'],
    ['an unknown role', request({ input: [{ role: 'robot', content: 'x' }] }), 'input[0].role: Expected one of'],
    ['a function call without its call_id', request({ input: [{ type: 'function_call', name: 'f', arguments: '{}' }] }), 'input[0].call_id: Expected a non-empty string'],
    ['arguments as an object', request({ input: [{ type: 'function_call', call_id: 'c', name: 'f', arguments: {} }] }), 'input[0].arguments: Expected a string (the arguments as JSON)'],
    ['a text part without text', request({ input: [{ role: 'user', content: [{ type: 'input_text' }] }] }), 'input[0].content[0].text: Expected a string'],
    ['an input_file part with file_data as an object', request({ input: [{ role: 'user', content: [{ type: 'input_file', file_data: { bytes: 'x' } }] }] }), 'input[0].content[0].file_data: Expected a string'],
    ['a function tool without a name', request({ tools: [{ type: 'function', parameters: {} }] }), 'tools[0].name: Expected a non-empty string'],
    ['a namespace without tools', request({ tools: [{ type: 'namespace', name: 'crm' }] }), 'tools[0].tools: Expected an array of function tools'],
    ['an unknown tool_choice mode', request({ tool_choice: 'sometimes' }), 'tool_choice: Expected one of'],
    ['a json_schema format without a schema', request({ text: { format: { type: 'json_schema', name: 'n' } } }), 'text.format.schema: Expected a JSON Schema object'],
    ['a temperature over 2', request({ temperature: 3 }), 'temperature: Expected a number from 0 to 2'],
    ['store as a string', request({ store: 'no' }), 'store: Expected a boolean'],
    // OpenAI's bounds on metadata, which is kept with a stored response.
    ['metadata of 17 pairs', request({ metadata: Object.fromEntries(Array.from({ length: 17 }, (_, index) => [`k${index}`, 'v'])) }), 'metadata: Expected at most 16 pairs. Received 17'],
    ['a metadata key of 65 characters', request({ metadata: { ['k'.repeat(65)]: 'v' } }), 'metadata: Expected keys of at most 64 characters'],
    ['a metadata value of 513 characters', request({ metadata: { note: 'v'.repeat(513) } }), 'metadata.note: Expected at most 512 characters. Received 513'],
    ['a metadata value that is not a string', request({ metadata: { nested: { deep: 'x' } } }), 'metadata.nested: Expected a string'],
  ])('refuses %s, naming the field', async (_name, body, message) => {
    const refused = await rejectionMessage(ResponsesRequestDto, body);
    expect(refused).toContain('Body validation error!');
    expect(refused).toContain(message);
  });
});
