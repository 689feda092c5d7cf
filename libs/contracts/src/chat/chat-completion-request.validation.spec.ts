import { rejectionMessage, validatedBody } from '@igw/validation/testing';
import { AssistantMessageDto, ChatCompletionRequestDto, SystemMessageDto, ToolMessageDto, UserMessageDto } from './chat-completion-request.dto';

// The chat request contract (spec: "POST /v1/chat/completions", "Limits", "Errors") run through
// the real global pipe, exactly as a request body reaches the controller.

type Body = Record<string, unknown>;

const PREFIX = 'Body validation error!';

const validated = (body: unknown) => validatedBody(ChatCompletionRequestDto, body);
const rejection = (body: unknown) => rejectionMessage(ChatCompletionRequestDto, body);

/** What goes upstream: the JSON of the validated DTO. */
function wire(value: unknown): unknown {
  return JSON.parse(JSON.stringify(value));
}

const user = { role: 'user', content: 'Hello' };
const request = (fields: Body = {}): Body => ({ model: 'gpt-4o-mini', messages: [user], ...fields });
const conversation = (...messages: unknown[]): Body => request({ messages });

const functionCall = { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } };
const customCall = { id: 'call_2', type: 'custom', custom: { name: 'run_sql', input: 'select 1' } };
const functionTool = { type: 'function', function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } };
const manyTools = (count: number): unknown[] => Array.from({ length: count }, (_, index) => ({ type: 'function', function: { name: `tool_${index}` } }));

describe('POST /v1/chat/completions body: accepted requests go upstream exactly as sent', () => {
  it.each<[string, Body]>([
    ['the minimal request', request()],
    ['a system message', conversation({ role: 'system', content: 'Be brief.', name: 'rules' }, user)],
    ['a developer message (OpenAI SDK name for system)', conversation({ role: 'developer', content: 'Be brief.' }, user)],
    ['a user message with a name', conversation({ role: 'user', content: 'Hi', name: 'alice' })],
    ['an empty string as content', conversation({ role: 'user', content: '' })],
    ['text parts with cache_control ttl 5m and 1h', conversation({ role: 'system', content: [{ type: 'text', text: 'long prefix', cache_control: { type: 'ephemeral', ttl: '5m' } }, { type: 'text', text: 'more', cache_control: { type: 'ephemeral', ttl: '1h' } }] }, user)],
    ['cache_control without ttl', conversation({ role: 'user', content: [{ type: 'text', text: 'x', cache_control: { type: 'ephemeral' } }] })],
    ['an image part', conversation({ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'high' } }] })],
    ['an audio part', conversation({ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } }] })],
    ['a file part by id and by data', conversation({ role: 'user', content: [{ type: 'file', file: { file_id: 'file-1' } }, { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' } }] })],
    ['an assistant reply', conversation(user, { role: 'assistant', content: 'Hi!', name: 'bot', refusal: null }, user)],
    ['an assistant with text parts', conversation(user, { role: 'assistant', content: [{ type: 'text', text: 'Hi!' }] }, user)],
    ['an assistant function call without content', conversation(user, { role: 'assistant', tool_calls: [functionCall] })],
    ['an assistant custom call with null content', conversation(user, { role: 'assistant', content: null, tool_calls: [customCall] })],
    ['an assistant with the legacy function_call', conversation(user, { role: 'assistant', function_call: { name: 'get_weather', arguments: '{}' } })],
    ['tool calls with extra_content', conversation(user, { role: 'assistant', content: null, tool_calls: [{ ...functionCall, extra_content: { google: { thought_signature: 'c2ln' } } }, { ...customCall, extra_content: { trace: [1, { deep: null }] } }] })],
    ['a tool answer, name null', conversation(user, { role: 'assistant', tool_calls: [functionCall] }, { role: 'tool', tool_call_id: 'call_1', content: '18°C', name: null })],
    ['a tool answer in text parts', conversation(user, { role: 'assistant', tool_calls: [functionCall] }, { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '18°C' }] })],
    ['a function tool with strict and cache_control', request({ tools: [{ ...functionTool, function: { ...functionTool.function, strict: true }, cache_control: { type: 'ephemeral', ttl: '1h' } }] })],
    ['a function tool with strict null and a dashed name', request({ tools: [{ type: 'function', function: { name: 'get-weather_2', strict: null } }] })],
    ['a custom tool without format', request({ tools: [{ type: 'custom', custom: { name: 'run_sql', description: 'SQL' } }] })],
    ['a custom tool with text format', request({ tools: [{ type: 'custom', custom: { name: 'run_sql', format: { type: 'text' } } }] })],
    ['a custom tool with a grammar', request({ tools: [{ type: 'custom', custom: { name: 'run_sql', format: { type: 'grammar', grammar: { definition: 'start: "a"', syntax: 'lark' } } } }] })],
    ['any other tool with a type, fields kept', request({ tools: [{ type: 'web_search_preview', search_context_size: 'high', user_location: { city: 'Paris' } }] })],
    ['a 64-character function name', request({ tools: [{ type: 'function', function: { name: 'a'.repeat(64) } }] })],
    ['128 tools', request({ tools: manyTools(128) })],
    ['tool_choice none', request({ tool_choice: 'none' })],
    ['tool_choice auto', request({ tools: [functionTool], tool_choice: 'auto' })],
    ['tool_choice required', request({ tools: [functionTool], tool_choice: 'required' })],
    ['tool_choice forcing a function', request({ tools: [functionTool], tool_choice: { type: 'function', function: { name: 'get_weather' } } })],
    ['tool_choice forcing a custom tool by {name}', request({ tool_choice: { type: 'custom', custom: { name: 'run_sql' } } })],
    ['tool_choice forcing a custom tool by name', request({ tool_choice: { type: 'custom', custom: 'run_sql' } })],
    ['tool_choice allowed_tools', request({ tools: [functionTool], tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'get_weather' } }] } } })],
    ['reasoning effort', request({ reasoning: { effort: 'high', exclude: true } })],
    ['reasoning max_tokens', request({ reasoning: { max_tokens: 1, exclude: false } })],
    ['reasoning_effort none', request({ reasoning_effort: 'none' })],
    ['reasoning_effort high', request({ reasoning_effort: 'high' })],
    ['search', request({ enable_search: true, search_options: { forced_search: true, search_strategy: 'agent', enable_source: true } })],
    ['streaming with usage', request({ stream: true, stream_options: { include_usage: true } })],
    ['not streaming', request({ stream: false })],
    ['sampling bounds (low)', request({ temperature: 0, top_p: 0.01, max_tokens: 1, max_completion_tokens: 1 })],
    ['sampling bounds (high)', request({ temperature: 2, top_p: 1, max_tokens: 4096 })],
    ['stop as a string', request({ stop: 'END' })],
    ['4 stop sequences', request({ stop: ['a', 'b', 'c', 'd'] })],
    ['stop null', request({ stop: null })],
    ['logit_bias at the bounds', request({ logit_bias: { '50256': -100, '1': 100, '7': 0.5 } })],
    ['logit_bias null', request({ logit_bias: null })],
    ['logprobs with top_logprobs 0 and 20', request({ logprobs: true, top_logprobs: 20 })],
    ['top_logprobs 0', request({ logprobs: true, top_logprobs: 0 })],
    ['logprobs null', request({ logprobs: null })],
    ['null for optional fields (top_logprobs, stream_options, reasoning.effort)', request({ top_logprobs: null, stream_options: null, reasoning: { effort: null, max_tokens: 512 } })],
    ['normalize_tool_schemas and parallel_tool_calls', request({ tools: [functionTool], normalize_tool_schemas: true, parallel_tool_calls: false })],
    ['provider auto', request({ provider: 'auto' })],
    ['provider as a source key, any case', request({ provider: 'OpenAI' })],
    [
      'OpenAI fields the upstreams understand',
      request({
        n: 2,
        seed: -7,
        user: 'user-42',
        presence_penalty: -2,
        frequency_penalty: 2,
        metadata: { team: 'search' },
        store: false,
        service_tier: 'flex',
        modalities: ['text', 'audio'],
        audio: { voice: 'alloy', format: 'wav' },
        prediction: { type: 'content', content: 'old code' },
        web_search_options: { search_context_size: 'low' },
        verbosity: 'low',
      }),
    ],
    ['response_format text', request({ response_format: { type: 'text' } })],
    ['response_format json_object', request({ response_format: { type: 'json_object' } })],
    ['response_format json_schema', request({ response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema: { type: 'object', required: ['a'] } } } })],
  ])('%s', async (_name, body) => {
    const value = await validated(structuredClone(body));
    expect(value).toBeInstanceOf(ChatCompletionRequestDto);
    expect(wire(value)).toEqual(body);
  });
});

describe('POST /v1/chat/completions body: each violation is a 400 naming the field', () => {
  it.each<[string, unknown, string]>([
    // model and messages
    ['no model', { messages: [user] }, 'model: Expected a non-empty string. Received nothing'],
    ['a model of the wrong type', request({ model: 42 }), 'model: Expected a non-empty string. Received number 42'],
    ['an empty model', request({ model: '' }), "model: Expected a non-empty string. Received ''"],
    ['a model id over 256 characters', request({ model: 'm'.repeat(257) }), 'model: Expected at most 256 characters. Received 257 characters'],
    ['no messages', { model: 'm' }, 'messages: Expected a non-empty array of messages. Received nothing'],
    ['messages not an array', request({ messages: 'Hello' }), "messages: Expected a non-empty array of messages. Received string 'Hello'"],
    ['empty messages', request({ messages: [] }), 'messages: Expected a non-empty array of messages. Received an empty array'],
    ['a message that is not an object', conversation(user, 'Hello'), "messages[1]: Expected a message object with a role. Received string 'Hello'"],
    ['a null message', conversation(null), 'messages[0]: Expected a message object with a role. Received null'],
    ['a message wrapped in an array', conversation(user, [user]), 'messages[1]: Expected a message object with a role. Received array'],
    ['an unknown role', conversation(user, { role: 'robot', content: 'x' }), "messages[1].role: Expected one of 'system', 'user', 'assistant', 'tool', 'developer'. Received 'robot'"],
    ['a missing role', conversation({ content: 'x' }), "messages[0].role: Expected one of 'system', 'user', 'assistant', 'tool', 'developer'. Received nothing"],
    ['a role of the wrong type', conversation({ role: 1, content: 'x' }), "messages[0].role: Expected one of 'system', 'user', 'assistant', 'tool', 'developer'. Received number 1"],
    ['a role in the wrong case', conversation({ role: 'User', content: 'x' }), "messages[0].role: Expected one of 'system', 'user', 'assistant', 'tool', 'developer'. Received 'User'"],
    ['a user message without content', conversation({ role: 'user' }), 'messages[0].content: Expected a string or an array of content parts. Received nothing'],
    ['a user message with null content', conversation({ role: 'user', content: null }), 'messages[0].content: Expected a string or an array of content parts. Received null'],
    ['content of the wrong type', conversation({ role: 'user', content: 5 }), 'messages[0].content: Expected a string or an array of content parts. Received number 5'],
    ['a system message without content', conversation({ role: 'system' }, user), 'messages[0].content: Expected a string or an array of text parts. Received nothing'],
    ['a developer message with an object as content', conversation({ role: 'developer', content: { text: 'x' } }, user), 'messages[0].content: Expected a string or an array of text parts. Received object'],
    ['a name that is not a string', conversation({ role: 'user', content: 'x', name: 7 }), 'messages[0].name: Expected a string. Received number 7'],
    // content parts
    ['a part that is not an object', conversation({ role: 'user', content: ['Hello'] }), "messages[0].content[0]: Expected a content part object with a type. Received string 'Hello'"],
    ['an unknown part type', conversation({ role: 'user', content: [{ type: 'text', text: 'a' }, { type: 'video', video: {} }] }), "messages[0].content[1].type: Expected one of 'text', 'image_url', 'input_audio', 'file'. Received 'video'"],
    ['an image part in a system message', conversation({ role: 'system', content: [{ type: 'image_url', image_url: { url: 'https://x' } }] }, user), "messages[0].content[0].type: Expected 'text'. Received 'image_url'"],
    ['a text part without text', conversation({ role: 'user', content: [{ type: 'text' }] }), 'messages[0].content[0].text: Expected a string. Received nothing'],
    ['a text part with a number', conversation({ role: 'tool', tool_call_id: 'c', content: [{ type: 'text', text: 3 }] }), 'messages[0].content[0].text: Expected a string. Received number 3'],
    ['cache_control with another type', conversation({ role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'persistent' } }] }), "messages[0].content[0].cache_control.type: Expected 'ephemeral'. Received 'persistent'"],
    ['cache_control without type', conversation({ role: 'user', content: [{ type: 'text', text: 'a', cache_control: { ttl: '5m' } }] }), "messages[0].content[0].cache_control.type: Expected 'ephemeral'. Received nothing"],
    ['a cache_control ttl not 5m or 1h', conversation(user, { role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral', ttl: '10m' } }] }), "messages[1].content[0].cache_control.ttl: Expected one of '5m', '1h'. Received '10m'"],
    ['cache_control that is not an object', conversation({ role: 'user', content: [{ type: 'text', text: 'a', cache_control: 'ephemeral' }] }), "messages[0].content[0].cache_control: Expected an object. Received string 'ephemeral'"],
    ['an image part without image_url', conversation({ role: 'user', content: [{ type: 'image_url' }] }), 'messages[0].content[0].image_url: Expected an object. Received nothing'],
    ['an image part without url', conversation({ role: 'user', content: [{ type: 'image_url', image_url: { detail: 'low' } }] }), 'messages[0].content[0].image_url.url: Expected a non-empty string. Received nothing'],
    ['an image detail not auto, low or high', conversation({ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://x', detail: 'ultra' } }] }), "messages[0].content[0].image_url.detail: Expected one of 'auto', 'low', 'high'. Received 'ultra'"],
    ['an audio part without format', conversation({ role: 'user', content: [{ type: 'input_audio', input_audio: { data: 'UklGRg==' } }] }), 'messages[0].content[0].input_audio.format: Expected a non-empty string. Received nothing'],
    ['a file part with neither data nor id', conversation({ role: 'user', content: [{ type: 'file', file: { filename: 'a.pdf' } }] }), 'messages[0].content[0].file: Expected file_data or file_id. Received neither'],
    // assistant and tool messages
    ['an assistant without content or tool calls', conversation(user, { role: 'assistant' }), 'messages[1].content: Expected a string or an array of text parts (required unless tool_calls or function_call is given). Received nothing'],
    ['an assistant with null content and no tool calls', conversation(user, { role: 'assistant', content: null, tool_calls: [] }), 'messages[1].content: Expected a string or an array of text parts (required unless tool_calls or function_call is given). Received null'],
    ['a tool message without tool_call_id', conversation(user, { role: 'tool', content: '18°C' }), 'messages[1].tool_call_id: Expected a string (the id of the tool call this message answers). Received nothing'],
    ['a tool message without content', conversation(user, { role: 'tool', tool_call_id: 'c' }), 'messages[1].content: Expected a string or an array of text parts. Received nothing'],
    ['a refusal that is not a string', conversation(user, { role: 'assistant', content: 'x', refusal: 1 }), 'messages[1].refusal: Expected a string. Received number 1'],
    ['tool_calls not an array', conversation(user, { role: 'assistant', tool_calls: functionCall }), 'messages[1].tool_calls: Expected an array of tool calls. Received object'],
    ['a tool call that is not an object', conversation(user, { role: 'assistant', tool_calls: ['call_1'] }), "messages[1].tool_calls[0]: Expected a tool call object. Received string 'call_1'"],
    ['tool calls wrapped in an array', conversation(user, { role: 'assistant', tool_calls: [[functionCall]] }), 'messages[1].tool_calls[0]: Expected a tool call object. Received array'],
    ['an unknown tool call type', conversation(user, { role: 'assistant', tool_calls: [functionCall, { id: 'x', type: 'code' }] }), "messages[1].tool_calls[1].type: Expected one of 'function', 'custom'. Received 'code'"],
    ['a tool call without id', conversation(user, { role: 'assistant', tool_calls: [{ type: 'function', function: { name: 'f', arguments: '{}' } }] }), 'messages[1].tool_calls[0].id: Expected a string. Received nothing'],
    ['function arguments that are not a string', conversation(user, { role: 'assistant', tool_calls: [{ ...functionCall, function: { name: 'f', arguments: { city: 'Paris' } } }] }), 'messages[1].tool_calls[0].function.arguments: Expected a string. Received object'],
    ['a custom call without input', conversation(user, { role: 'assistant', tool_calls: [{ ...customCall, custom: { name: 'run_sql' } }] }), 'messages[1].tool_calls[0].custom.input: Expected a string. Received nothing'],
    ['extra_content that is not an object', conversation(user, { role: 'assistant', tool_calls: [{ ...functionCall, extra_content: 'sig' }] }), "messages[1].tool_calls[0].extra_content: Expected an object. Received string 'sig'"],
    ['a legacy function_call without arguments', conversation(user, { role: 'assistant', function_call: { name: 'f' } }), 'messages[1].function_call.arguments: Expected a string. Received nothing'],
    // tools
    ['tools not an array', request({ tools: functionTool }), 'tools: Expected an array of tools. Received object'],
    ['129 tools', request({ tools: manyTools(129) }), 'tools: Expected at most 128 tools. Received 129'],
    ['a tool that is not an object', request({ tools: [functionTool, 'get_weather'] }), "tools[1]: Expected a tool object with a non-empty string type. Received string 'get_weather'"],
    ['a tool without type', request({ tools: [{ function: { name: 'f' } }] }), 'tools[0].type: Expected a non-empty string. Received nothing'],
    ['a tool with an empty type', request({ tools: [{ type: '' }] }), "tools[0].type: Expected a non-empty string. Received ''"],
    ['a function name with a space and a bang', request({ tools: [functionTool, functionTool, functionTool, { type: 'function', function: { name: 'bad name!' } }] }), "tools[3].function.name: Expected 1-64 letters, digits, underscores or dashes. Received 'bad name!'"],
    ['a 65-character function name', request({ tools: [{ type: 'function', function: { name: 'a'.repeat(65) } }] }), `tools[0].function.name: Expected 1-64 letters, digits, underscores or dashes. Received '${'a'.repeat(60)}…'`],
    ['a function tool without function', request({ tools: [{ type: 'function' }] }), 'tools[0].function: Expected an object. Received nothing'],
    ['parameters that are not an object', request({ tools: [{ type: 'function', function: { name: 'f', parameters: '{}' } }] }), "tools[0].function.parameters: Expected a JSON Schema object. Received string '{}'"],
    ['strict that is not a boolean', request({ tools: [{ type: 'function', function: { name: 'f', strict: 'yes' } }] }), "tools[0].function.strict: Expected a boolean. Received string 'yes'"],
    ['a tool cache_control ttl', request({ tools: [{ ...functionTool, cache_control: { type: 'ephemeral', ttl: '1d' } }] }), "tools[0].cache_control.ttl: Expected one of '5m', '1h'. Received '1d'"],
    ['a custom tool without name', request({ tools: [{ type: 'custom', custom: {} }] }), 'tools[0].custom.name: Expected a non-empty string. Received nothing'],
    ['a custom tool format of another type', request({ tools: [{ type: 'custom', custom: { name: 'c', format: { type: 'json' } } }] }), "tools[0].custom.format.type: Expected one of 'text', 'grammar'. Received 'json'"],
    ['a grammar format without grammar', request({ tools: [{ type: 'custom', custom: { name: 'c', format: { type: 'grammar' } } }] }), 'tools[0].custom.format.grammar: Expected an object (required with type grammar). Received nothing'],
    ['a grammar syntax not lark or regex', request({ tools: [{ type: 'custom', custom: { name: 'c', format: { type: 'grammar', grammar: { definition: 'x', syntax: 'ebnf' } } } }] }), "tools[0].custom.format.grammar.syntax: Expected one of 'lark', 'regex'. Received 'ebnf'"],
    // tool_choice
    ['an unknown tool_choice string', request({ tool_choice: 'any' }), "tool_choice: Expected one of 'none', 'auto', 'required', or an object with type 'function', 'custom', 'allowed_tools'. Received 'any'"],
    ['a tool_choice of the wrong type', request({ tool_choice: true }), "tool_choice: Expected one of 'none', 'auto', 'required', or an object with type 'function', 'custom', 'allowed_tools'. Received boolean true"],
    ['an unknown tool_choice type', request({ tool_choice: { type: 'tool', name: 'f' } }), "tool_choice.type: Expected one of 'function', 'custom', 'allowed_tools'. Received 'tool'"],
    ['a forced function without name', request({ tool_choice: { type: 'function', function: {} } }), 'tool_choice.function.name: Expected a non-empty string. Received nothing'],
    ['a forced function given as a string', request({ tool_choice: { type: 'function', function: 'get_weather' } }), "tool_choice.function: Expected an object. Received string 'get_weather'"],
    ['a forced custom tool without a name', request({ tool_choice: { type: 'custom' } }), 'tool_choice.custom: Expected a tool name or an object {name}. Received nothing'],
    ['a forced custom tool with an empty name', request({ tool_choice: { type: 'custom', custom: { name: '' } } }), "tool_choice.custom.name: Expected a non-empty string. Received ''"],
    ['an allowed_tools mode', request({ tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'none', tools: [] } } }), "tool_choice.allowed_tools.mode: Expected one of 'auto', 'required'. Received 'none'"],
    ['allowed_tools tools with a bad name', request({ tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [functionTool, { type: 'function', function: { name: 'a.b' } }] } } }), "tool_choice.allowed_tools.tools[1].function.name: Expected 1-64 letters, digits, underscores or dashes. Received 'a.b'"],
    ['allowed_tools without tools', request({ tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto' } } }), 'tool_choice.allowed_tools.tools: Expected an array of tools. Received nothing'],
    // sampling and limits
    ['temperature above 2', request({ temperature: 3 }), 'temperature: Expected a number from 0 to 2. Received 3'],
    ['temperature below 0', request({ temperature: -0.1 }), 'temperature: Expected a number from 0 to 2. Received -0.1'],
    ['temperature as a string', request({ temperature: 'hot' }), "temperature: Expected a number. Received string 'hot'"],
    ['a numeric string temperature', request({ temperature: '1' }), "temperature: Expected a number. Received string '1'"],
    ['top_p below 0.01', request({ top_p: 0 }), 'top_p: Expected a number from 0.01 to 1. Received 0'],
    ['top_p above 1', request({ top_p: 1.5 }), 'top_p: Expected a number from 0.01 to 1. Received 1.5'],
    ['max_tokens 0', request({ max_tokens: 0 }), 'max_tokens: Expected an integer of at least 1. Received 0'],
    ['max_tokens as a string', request({ max_tokens: '100' }), "max_tokens: Expected an integer. Received string '100'"],
    ['a fractional max_tokens', request({ max_tokens: 40.5 }), 'max_tokens: Expected an integer. Received 40.5'],
    ['max_tokens beyond the safe integers', request({ max_tokens: 1e300 }), 'max_tokens: Expected an integer of at most 9007199254740991. Received 1e+300'],
    ['max_completion_tokens beyond the safe integers', request({ max_completion_tokens: 2 ** 53 }), 'max_completion_tokens: Expected an integer of at most 9007199254740991. Received 9007199254740992'],
    ['reasoning.max_tokens fractional', request({ reasoning: { max_tokens: 0.5 } }), 'reasoning.max_tokens: Expected an integer. Received 0.5'],
    ['a seed beyond the safe integers', request({ seed: -1e300 }), 'seed: Expected an integer of at least -9007199254740991. Received -1e+300'],
    ['n fractional', request({ n: 1.5 }), 'n: Expected an integer. Received 1.5'],
    ['max_completion_tokens 0', request({ max_completion_tokens: 0 }), 'max_completion_tokens: Expected an integer of at least 1. Received 0'],
    ['a fractional max_completion_tokens', request({ max_completion_tokens: 10.5 }), 'max_completion_tokens: Expected an integer. Received 10.5'],
    ['5 stop sequences', request({ stop: ['a', 'b', 'c', 'd', 'e'] }), 'stop: Expected at most 4 stop sequences. Received 5'],
    ['a stop sequence that is not a string', request({ stop: ['a', 3] }), 'stop[1]: Expected a string. Received number 3'],
    ['stop of the wrong type', request({ stop: 5 }), 'stop: Expected a string, an array of at most 4 strings, or null. Received number 5'],
    ['a logit bias above 100', request({ logit_bias: { '50256': 150 } }), 'logit_bias.50256: Expected a number from -100 to 100. Received 150'],
    ['a logit bias below -100', request({ logit_bias: { '42': -101 } }), 'logit_bias.42: Expected a number from -100 to 100. Received -101'],
    ['a logit bias that is not a number', request({ logit_bias: { '42': 'up' } }), "logit_bias.42: Expected a number. Received string 'up'"],
    ['a logit bias key that is not a token id', request({ logit_bias: { hello: 1 } }), "logit_bias: Expected token ids (integers) as keys. Received key 'hello'"],
    ['logit_bias as an array', request({ logit_bias: [1] }), 'logit_bias: Expected an object mapping token ids to numbers from -100 to 100, or null. Received array'],
    ['logprobs as a string', request({ logprobs: 'true' }), "logprobs: Expected a boolean. Received string 'true'"],
    ['top_logprobs without logprobs', request({ top_logprobs: 5 }), 'top_logprobs: Expected logprobs: true alongside top_logprobs. Received no logprobs'],
    ['top_logprobs with logprobs false', request({ logprobs: false, top_logprobs: 5 }), 'top_logprobs: Expected logprobs: true alongside top_logprobs. Received logprobs: false'],
    ['top_logprobs above 20', request({ logprobs: true, top_logprobs: 21 }), 'top_logprobs: Expected an integer from 0 to 20. Received 21'],
    ['a negative top_logprobs', request({ logprobs: true, top_logprobs: -1 }), 'top_logprobs: Expected an integer from 0 to 20. Received -1'],
    // reasoning
    ['an unknown reasoning_effort', request({ reasoning_effort: 'minimal' }), "reasoning_effort: Expected one of 'none', 'low', 'medium', 'high'. Received 'minimal'"],
    ['reasoning effort none (only reasoning_effort takes it)', request({ reasoning: { effort: 'none' } }), "reasoning.effort: Expected one of 'low', 'medium', 'high'. Received 'none'"],
    ['reasoning max_tokens 0', request({ reasoning: { max_tokens: 0 } }), 'reasoning.max_tokens: Expected an integer of at least 1. Received 0'],
    ['reasoning max_tokens with effort', request({ reasoning: { effort: 'low', max_tokens: 2048 } }), "reasoning.max_tokens: Expected either reasoning.effort or reasoning.max_tokens, not both. Received effort: 'low'"],
    ['reasoning exclude as a string', request({ reasoning: { exclude: 'yes' } }), "reasoning.exclude: Expected a boolean. Received string 'yes'"],
    ['reasoning that is not an object', request({ reasoning: 'high' }), "reasoning: Expected an object. Received string 'high'"],
    // streaming, search, routing
    ['stream as a string', request({ stream: 'true' }), "stream: Expected a boolean. Received string 'true'"],
    ['stream_options without stream', request({ stream_options: { include_usage: true } }), 'stream_options: Expected stream: true alongside stream_options. Received no stream'],
    ['stream_options with stream false', request({ stream: false, stream_options: { include_usage: true } }), 'stream_options: Expected stream: true alongside stream_options. Received stream: false'],
    ['stream_options without include_usage', request({ stream: true, stream_options: {} }), 'stream_options.include_usage: Expected a boolean. Received nothing'],
    ['stream_options that is not an object', request({ stream: true, stream_options: true }), 'stream_options: Expected an object. Received boolean true'],
    ['enable_search as a string', request({ enable_search: 'yes' }), "enable_search: Expected a boolean. Received string 'yes'"],
    ['an unknown search_strategy', request({ enable_search: true, search_options: { search_strategy: 'deep' } }), "search_options.search_strategy: Expected one of 'turbo', 'max', 'agent'. Received 'deep'"],
    ['forced_search as a string', request({ search_options: { forced_search: 'always' } }), "search_options.forced_search: Expected a boolean. Received string 'always'"],
    ['normalize_tool_schemas as a number', request({ normalize_tool_schemas: 1 }), 'normalize_tool_schemas: Expected a boolean. Received number 1'],
    ['parallel_tool_calls as a string', request({ parallel_tool_calls: 'no' }), "parallel_tool_calls: Expected a boolean. Received string 'no'"],
    ['an empty provider', request({ provider: '' }), "provider: Expected a non-empty string. Received ''"],
    ['provider as a number', request({ provider: 1 }), 'provider: Expected a non-empty string. Received number 1'],
    // OpenAI fields passed through
    ['n 0', request({ n: 0 }), 'n: Expected an integer from 1 to 128. Received 0'],
    ['n 129', request({ n: 129 }), 'n: Expected an integer from 1 to 128. Received 129'],
    ['a fractional seed', request({ seed: 1.5 }), 'seed: Expected an integer. Received 1.5'],
    ['presence_penalty above 2', request({ presence_penalty: 2.5 }), 'presence_penalty: Expected a number from -2 to 2. Received 2.5'],
    ['frequency_penalty below -2', request({ frequency_penalty: -3 }), 'frequency_penalty: Expected a number from -2 to 2. Received -3'],
    ['an unknown response_format type', request({ response_format: { type: 'xml' } }), "response_format.type: Expected one of 'text', 'json_object', 'json_schema'. Received 'xml'"],
    ['json_schema format without its schema', request({ response_format: { type: 'json_schema' } }), 'response_format.json_schema: Expected an object (required with type json_schema). Received nothing'],
    ['metadata that is not an object', request({ metadata: 'x' }), "metadata: Expected an object. Received string 'x'"],
    ['modalities with a number', request({ modalities: ['text', 1] }), 'modalities[1]: Expected a string. Received number 1'],
    ['store as a string', request({ store: 'yes' }), "store: Expected a boolean. Received string 'yes'"],
    ['user as a number', request({ user: 42 }), 'user: Expected a string. Received number 42'],
  ])('%s', async (_name, body, detail) => {
    expect(await rejection(body)).toBe(`${PREFIX} ${detail}`);
  });

  it('reports every violation, each with its own path, in body order', async () => {
    const message = await rejection({
      model: 7,
      messages: [{ role: 'robot' }, { role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral', ttl: '2h' } }] }],
      temperature: 9,
      tools: [{ type: 'function', function: { name: 'x y' } }],
    });
    expect(message).toBe(
      [
        `${PREFIX} model: Expected a non-empty string. Received number 7`,
        "messages[0].role: Expected one of 'system', 'user', 'assistant', 'tool', 'developer'. Received 'robot'",
        "messages[1].content[0].cache_control.ttl: Expected one of '5m', '1h'. Received '2h'",
        "tools[0].function.name: Expected 1-64 letters, digits, underscores or dashes. Received 'x y'",
        'temperature: Expected a number from 0 to 2. Received 9',
      ].join('; '),
    );
  });

  it('reports several problems of one content array, tool list or value by their own paths', async () => {
    const message = await rejection(
      request({
        messages: [{ role: 'user', content: [{ type: 'text' }, 5, { type: 'image_url', image_url: { url: '' } }] }],
        tools: [{ type: 'custom', custom: { name: '' } }, {}],
        logprobs: false,
        top_logprobs: 99,
      }),
    );
    expect(message.split('; ')).toEqual([
      `${PREFIX} messages[0].content[0].text: Expected a string. Received nothing`,
      'messages[0].content[1]: Expected a content part object with a type. Received number 5',
      "messages[0].content[2].image_url.url: Expected a non-empty string. Received ''",
      "tools[0].custom.name: Expected a non-empty string. Received ''",
      'tools[1].type: Expected a non-empty string. Received nothing',
      'top_logprobs: Expected an integer from 0 to 20. Received 99',
      'top_logprobs: Expected logprobs: true alongside top_logprobs. Received logprobs: false',
    ]);
  });

  it.each([null, [], 'hello', 42])('refuses a body that is not an object (%p)', async (body) => {
    expect(await rejection(body)).toBe(`${PREFIX} model: Expected a non-empty string. Received nothing; messages: Expected a non-empty array of messages. Received nothing`);
  });
});

describe('POST /v1/chat/completions body: what the gateway forwards', () => {
  it('keeps extra_content of assistant tool calls byte for byte', async () => {
    const functionExtra = { google: { thought_signature: 'CiQB0e2Kb+/x==', nested: [1, 'two', { three: null, four: false }] }, 'odd key': { '': 0 } };
    const customExtra = { provider: 'x', blob: { b: 2, a: 1 } };
    const body = conversation(user, {
      role: 'assistant',
      content: null,
      tool_calls: [
        { ...functionCall, extra_content: functionExtra },
        { ...customCall, extra_content: customExtra },
      ],
    });
    const value = await validated(structuredClone(body));
    const assistant = value.messages[1] as AssistantMessageDto;
    expect(JSON.stringify(assistant.tool_calls?.[0].extra_content)).toBe(JSON.stringify(functionExtra));
    expect(JSON.stringify(assistant.tool_calls?.[1].extra_content)).toBe(JSON.stringify(customExtra));
  });

  it('keeps the OpenAI pass-through fields byte for byte', async () => {
    const passthrough = {
      n: 3,
      seed: 12345,
      user: 'end-user-1',
      response_format: { type: 'json_schema', json_schema: { name: 'r', strict: true, schema: { type: 'object', properties: { a: { type: 'array', items: { type: 'integer' } } }, additionalProperties: false } } },
      presence_penalty: 0.5,
      frequency_penalty: -0.5,
      metadata: { team: 'search', run: '7' },
      store: true,
      service_tier: 'priority',
      modalities: ['text', 'audio'],
      audio: { voice: 'alloy', format: 'mp3' },
      prediction: { type: 'content', content: [{ type: 'text', text: 'old' }] },
      web_search_options: { search_context_size: 'medium', user_location: { type: 'approximate', approximate: { city: 'Oslo' } } },
      verbosity: 'high',
    };
    const value = (await validated(request(structuredClone(passthrough)))) as unknown as Record<string, unknown>;
    for (const [field, sent] of Object.entries(passthrough)) expect([field, JSON.stringify(value[field])]).toEqual([field, JSON.stringify(sent)]);
  });

  it('drops undeclared fields at every level, but forwards tools exactly as sent', async () => {
    const tools = [
      { type: 'function', function: { name: 'f', parameters: { type: 'object' }, vendor_hint: true }, defer_loading: true },
      { type: 'code_interpreter', container: { type: 'auto' } },
    ];
    const value = await validated({
      model: 'm',
      junk: 1,
      __internal: { admin: true },
      stream: true,
      stream_options: { include_usage: true, junk: 2 },
      reasoning: { effort: 'low', junk: 3 },
      search_options: { forced_search: true, junk: 4 },
      response_format: { type: 'json_object', junk: 5 },
      tool_choice: { type: 'function', function: { name: 'f', junk: 6 }, junk: 7 },
      tools,
      messages: [
        { role: 'system', content: 'S', junk: 8 },
        { role: 'user', content: [{ type: 'text', text: 'a', junk: 9, cache_control: { type: 'ephemeral', junk: 10 } }, { type: 'image_url', image_url: { url: 'u', junk: 11 } }] },
        { role: 'assistant', content: null, tool_call_id: 'not-for-assistants', tool_calls: [{ ...functionCall, junk: 12, function: { ...functionCall.function, junk: 13 } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'r', tool_calls: [] },
      ],
    });
    expect(wire(value)).toEqual({
      model: 'm',
      stream: true,
      stream_options: { include_usage: true },
      reasoning: { effort: 'low' },
      search_options: { forced_search: true },
      response_format: { type: 'json_object' },
      tool_choice: { type: 'function', function: { name: 'f' } },
      tools,
      messages: [
        { role: 'system', content: 'S' },
        { role: 'user', content: [{ type: 'text', text: 'a', cache_control: { type: 'ephemeral' } }, { type: 'image_url', image_url: { url: 'u' } }] },
        { role: 'assistant', content: null, tool_calls: [functionCall] },
        { role: 'tool', tool_call_id: 'call_1', content: 'r' },
      ],
    });
  });

  it('gives each message its role class; developer messages are system messages', async () => {
    const value = await validated(
      conversation(
        { role: 'developer', content: 'D' },
        { role: 'system', content: 'S' },
        user,
        { role: 'assistant', tool_calls: [functionCall] },
        { role: 'tool', tool_call_id: 'call_1', content: 'r' },
      ),
    );
    expect(value.messages.map((message) => message.constructor)).toEqual([SystemMessageDto, SystemMessageDto, UserMessageDto, AssistantMessageDto, ToolMessageDto]);
    expect(value.messages.map((message) => message.role)).toEqual(['developer', 'system', 'user', 'assistant', 'tool']);
  });

  it('documents the defaults (stream false, provider auto, enable_search false) without filling them in', async () => {
    const value = await validated(request());
    expect(value.stream).toBeUndefined();
    expect(value.provider).toBeUndefined();
    expect(value.enable_search).toBeUndefined();
    expect(wire(value)).toEqual(request());
  });

  it.each<[string, Body]>([
    ['a valid body', conversation({ role: 'user', content: [{ type: 'text', text: 'a', junk: 1 }] }, { role: 'assistant', content: 'x', junk: 2 })],
    ['tool_calls given as an object', conversation(user, { role: 'assistant', tool_calls: { ...functionCall, junk: 1 } })],
    ['a nested messages array', conversation([{ ...user, junk: 1 }])],
    ['stream_options given as an array', request({ stream: true, stream_options: [{ include_usage: true, junk: 1 }] })],
    ['a tool_choice of an unknown type', request({ tool_choice: { type: 'tool', junk: 1 } })],
  ])('leaves the client body untouched (%s)', async (_name, body) => {
    const copy = structuredClone(body);
    await validated(body).catch(() => undefined);
    expect(body).toEqual(copy);
  });
});
