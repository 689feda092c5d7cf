import { acceptDto } from '@igw/validation';
import { rejectionMessage, validatedBody } from '@igw/validation/testing';
import { MessagesCountTokensRequestDto, MessagesRequestDto } from './messages-request.dto';

/** A turn of what Claude Code sends, shortened: every field it sets that the gateway does not use included. */
const claudeCodeBody = {
  model: 'claude-sonnet-4-5',
  max_tokens: 32000,
  system: [
    { type: 'text', text: "You are Claude Code, Anthropic's official CLI for Claude." },
    { type: 'text', text: 'Project instructions.', cache_control: { type: 'ephemeral' } },
  ],
  messages: [
    { role: 'system', content: 'Reminder.' },
    { role: 'user', content: [{ type: 'text', text: 'Create hello.txt', cache_control: { type: 'ephemeral' } }] },
    {
      role: 'assistant',
      content: [
        { type: 'thinking', thinking: 'A file.', signature: 'sig' },
        { type: 'tool_use', id: 'toolu_1', name: 'Write', input: { file_path: 'hello.txt', content: 'hi' } },
      ],
    },
    { role: 'user', content: [{ type: 'tool_result', tool_use_id: 'toolu_1', content: [{ type: 'text', text: 'done' }] }] },
  ],
  tools: [
    { name: 'Write', description: 'Writes a file', input_schema: { type: 'object', properties: { file_path: { type: 'string' } } } },
    { type: 'web_search_20250305', name: 'web_search', max_uses: 8 },
  ],
  tool_choice: { type: 'auto' },
  thinking: { type: 'adaptive' },
  output_config: { effort: 'high' },
  context_management: { edits: [{ type: 'clear_thinking_20251015', keep: 'all' }] },
  metadata: { user_id: 'user_abc_account_def_session_ghi' },
  temperature: 1,
  stream: true,
};

describe('the Messages request body', () => {
  it('accepts what Claude Code sends, every field and block kept as sent (an Anthropic source gets them natively)', async () => {
    const body = await validatedBody(MessagesRequestDto, claudeCodeBody);
    expect(JSON.parse(JSON.stringify(body))).toEqual(claudeCodeBody);
    // The compiled walk answers it the same, without the pipe.
    expect(JSON.parse(JSON.stringify(acceptDto(MessagesRequestDto, claudeCodeBody)))).toEqual(claudeCodeBody);
  });

  it.each([
    ['no max_tokens', { max_tokens: undefined }, 'max_tokens: Expected an integer. Received nothing'],
    ['a role Anthropic has not', { messages: [{ role: 'tool', content: 'x' }] }, "messages[0].role: Expected one of 'user', 'assistant', 'system'. Received 'tool'"],
    ['no messages', { messages: [] }, 'messages: Expected a non-empty array of messages. Received an empty array'],
    ['a tool_use without input', { messages: [{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'n' }] }] }, 'messages[0].content[0].input: Expected an object. Received nothing'],
    ['a block without a type', { messages: [{ role: 'user', content: [{ text: 'x' }] }] }, 'messages[0].content[0].type: Expected a non-empty string (the block type). Received nothing'],
    ['a system block that is not text', { system: [{ type: 'image', source: {} }] }, "system[0].type: Expected 'text'. Received 'image'"],
    ['a custom tool without a schema', { tools: [{ name: 'x' }] }, 'tools[0].input_schema: Expected a JSON Schema object (a custom tool needs one). Received nothing'],
    ['tool_choice tool without a name', { tool_choice: { type: 'tool' } }, 'tool_choice.name: Expected a non-empty string (the tool to call; required with type tool). Received nothing'],
    ['a thinking budget below the minimum', { thinking: { type: 'enabled', budget_tokens: 100 } }, 'thinking.budget_tokens: Expected an integer of at least 1024. Received 100'],
    ['a temperature above 1', { temperature: 1.5 }, 'temperature: Expected a number from 0 to 1. Received 1.5'],
    ['an output format that is not a JSON schema', { output_config: { format: { type: 'xml', schema: {} } } }, "output_config.format.type: Expected 'json_schema'. Received 'xml'"],
    ['an output format without its schema', { output_config: { format: { type: 'json_schema' } } }, 'output_config.format.schema: Expected a JSON Schema object. Received nothing'],
  ])('refuses %s, naming the field', async (_case, change, expected) => {
    expect(await rejectionMessage(MessagesRequestDto, { ...claudeCodeBody, ...change })).toBe(`Body validation error! ${expected}`);
  });

  it('keeps output_config.format (structured outputs) as sent', async () => {
    const output_config = { effort: 'low', format: { type: 'json_schema', schema: { type: 'object', properties: { answer: { type: 'string' } }, required: ['answer'], additionalProperties: false } } };
    const body = await validatedBody(MessagesRequestDto, { ...claudeCodeBody, output_config });
    expect(JSON.parse(JSON.stringify(body)).output_config).toEqual(output_config);
    expect(JSON.parse(JSON.stringify(acceptDto(MessagesRequestDto, { ...claudeCodeBody, output_config }))).output_config).toEqual(output_config);
  });

  it('takes a count_tokens body without max_tokens', async () => {
    const { max_tokens: _limit, stream: _stream, temperature: _temperature, metadata: _metadata, output_config: _config, context_management: _context, ...counted } = claudeCodeBody;
    expect(JSON.parse(JSON.stringify(await validatedBody(MessagesCountTokensRequestDto, { ...counted, max_tokens: 10 })))).toEqual(counted);
  });
});
