import type { MessagesRequestDto } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import type { UpstreamTarget } from '../paid-requests/upstream-route';
import { messagesNative, messagesNativePlan, MessagesNativeWriter } from './messages-native';

const body = (fields: Partial<MessagesRequestDto>): MessagesRequestDto => ({ model: 'claude', max_tokens: 64000, messages: [{ role: 'user', content: 'hi' }], ...fields }) as MessagesRequestDto;

describe("the Messages request sent natively to Anthropic", () => {
  it("keeps the client's fields and blocks, lowers max_tokens to the model's limit, and moves system messages into system", () => {
    const thinking = { type: 'thinking', thinking: 'plan', signature: 'sig' };
    const plan = messagesNativePlan(
      body({
        system: 'Top.',
        messages: [
          { role: 'system', content: [{ type: 'text', text: 'Inner.', cache_control: { type: 'ephemeral' } }] },
          { role: 'user', content: 'hi' },
          { role: 'assistant', content: [thinking, { type: 'text', text: 'yo' }] },
          { role: 'user', content: 'again' },
        ],
        top_k: 3,
        stop_sequences: ['END'],
        thinking: { type: 'adaptive' },
        stream: true,
      }),
      { max_tokens: 8192 },
    );
    expect(plan.body).toEqual({
      max_tokens: 8192,
      system: [
        { type: 'text', text: 'Top.' },
        { type: 'text', text: 'Inner.', cache_control: { type: 'ephemeral' } },
      ],
      messages: [
        { role: 'user', content: 'hi' },
        { role: 'assistant', content: [thinking, { type: 'text', text: 'yo' }] },
        { role: 'user', content: 'again' },
      ],
      top_k: 3,
      stop_sequences: ['END'],
      thinking: { type: 'adaptive' },
    });
  });

  it("sends client tools, Anthropic's web search only where the source has it (max_uses capped), and leaves out the other tools Anthropic runs", () => {
    const tools = [
      { name: 'get_weather', input_schema: { type: 'object' } },
      { type: 'bash_20250124', name: 'bash' },
      { type: 'web_search_20250305', name: 'web_search', max_uses: 99 },
      { type: 'code_execution_20250522', name: 'code_execution' },
    ] as MessagesRequestDto['tools'];
    const plan = messagesNativePlan(body({ tools }), { max_tokens: 100 });
    expect(plan.withSearch).toEqual({ tools: [tools![0], tools![1], { type: 'web_search_20250305', name: 'web_search', max_uses: 10 }], dropped: ['code_execution'] });
    expect(plan.withoutSearch).toEqual({ tools: [tools![0], tools![1]], dropped: ['web_search', 'code_execution'] });
    expect(plan.searches).toBe(10);
  });

  it('sends output_config.format natively only to a source that takes structured outputs; another Anthropic source gets the translation', () => {
    const format = { type: 'json_schema' as const, schema: { type: 'object', properties: { answer: { type: 'string' } } } };
    const options = { chatRequest: { max_tokens: 100 } as never, betaHeader: undefined, translatedDropped: [], dropped: () => undefined, sources: [] };
    const structured = messagesNative({ ...options, body: body({ output_config: { format } }) });
    const plain = messagesNative({ ...options, body: body({}) });
    const source = (native?: string[]) => ({ definition: { kind: 'anthropic' }, native }) as unknown as UpstreamTarget;
    expect(structured.takes(source(['web_search', 'structured_outputs']))).toBe(true);
    expect(structured.takes(source(['web_search']))).toBe(false);
    expect(plain.takes(source())).toBe(true);
    expect(messagesNativePlan(body({ output_config: { format } }), { max_tokens: 100 }).body.output_config).toEqual({ format });
  });

  it('forwards only the tool types it knows: a server tool type it has never heard of is left out and named', () => {
    const tools = [
      { type: 'custom', name: 'get_weather', input_schema: { type: 'object' } },
      { type: 'text_editor_20250728', name: 'str_replace_based_edit_tool' },
      { type: 'memory_20250818', name: 'memory' },
      { type: 'computer_20250124', name: 'computer', display_width_px: 1024, display_height_px: 768 },
      { type: 'advisor_20260101', name: 'advisor' },
      { type: 'mcp_toolset', name: 'remote' },
      { type: 'web_search_preview', name: 'search_preview' },
    ] as MessagesRequestDto['tools'];
    const plan = messagesNativePlan(body({ tools }), { max_tokens: 100 });
    expect(plan.withSearch).toEqual({ tools: tools!.slice(0, 4), dropped: ['advisor', 'remote', 'search_preview'] });
    expect(plan.withoutSearch).toEqual(plan.withSearch);
    expect(plan.searches).toBe(0);
  });

  it("refuses a block that points into the upstream account's files, wherever it is", () => {
    const file = { type: 'document', source: { type: 'file', file_id: 'file_other_tenant' } };
    const refusal = (messages: MessagesRequestDto['messages']) => {
      try {
        messagesNativePlan(body({ messages }), { max_tokens: 100 });
      } catch (error) {
        expect(error).toBeInstanceOf(GatewayException);
        return (error as GatewayException).message;
      }
      return undefined;
    };
    expect(refusal([{ role: 'user', content: [file] }])).toMatch(/^Body validation error! messages\[0\]\.content\[0\]\.source: a file of the upstream account/);
    expect(refusal([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] }] }])).toMatch(/messages\[0\]\.content\[0\]\.content\[0\]\.source/);
    // Inside a document of custom content, in a tool result's document, and a block naming a file id.
    const inContent = { type: 'document', source: { type: 'content', content: [{ type: 'image', source: { type: 'file', file_id: 'f' } }] } };
    expect(refusal([{ role: 'user', content: [inContent] }])).toMatch(/^Body validation error! messages\[0\]\.content\[0\]\.source\.content\[0\]\.source: a file of the upstream account/);
    expect(refusal([{ role: 'user', content: [{ type: 'tool_result', tool_use_id: 't', content: [inContent] }] }])).toMatch(/messages\[0\]\.content\[0\]\.content\[0\]\.source\.content\[0\]\.source:/);
    expect(refusal([{ role: 'user', content: [{ type: 'document', source: { type: 'url', url: 'https://example.com/a.pdf', file_id: 'f' } }] }])).toMatch(/messages\[0\]\.content\[0\]\.source: a file/);
    expect(refusal([{ role: 'user', content: [{ type: 'container_upload', file_id: 'file_other_tenant' }] }])).toMatch(/^Body validation error! messages\[0\]\.content\[0\]\.file_id: a file of the upstream account/);
    expect(refusal([{ role: 'user', content: [{ type: 'search_result', source: 'https://example.com', title: 't', content: [{ type: 'text', text: 'x' }] }] }])).toBeUndefined();
    // A tool call's arguments are the model's words, not blocks.
    expect(refusal([{ role: 'assistant', content: [{ type: 'tool_use', id: 't', name: 'n', input: { file_id: 'anything', source: { type: 'file' } } }] }])).toBeUndefined();
    expect(refusal([{ role: 'user', content: [{ type: 'image', source: { type: 'base64', media_type: 'image/png', data: 'AAAA' } }] }])).toBeUndefined();
  });

  it("writes Anthropic's events as they came, message_start with the catalogue's model and message_delta with meta.usage", () => {
    const writer = new MessagesNativeWriter('anthropic/claude');
    const start = { type: 'message_start', message: { id: 'msg_1', model: 'claude-upstream', usage: { input_tokens: 3 } } };
    expect(writer.event({ name: 'message_start', data: JSON.stringify(start), parsed: start, chunks: [] }, () => undefined)).toBe(
      `event: message_start\ndata: ${JSON.stringify({ type: 'message_start', message: { id: 'msg_1', model: 'anthropic/claude', usage: { input_tokens: 3 } } })}\n\n`,
    );
    const raw = '{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"Hi"}}';
    expect(writer.event({ name: 'content_block_delta', data: raw, parsed: JSON.parse(raw), chunks: [] }, () => undefined)).toBe(`event: content_block_delta\ndata: ${raw}\n\n`);
    const delta = { type: 'message_delta', delta: { stop_reason: 'end_turn' }, usage: { output_tokens: 2 } };
    expect(writer.event({ name: 'message_delta', data: JSON.stringify(delta), parsed: delta, chunks: [] }, () => ({ credits_used: 4, usd_spent: 0.000002 }))).toBe(
      `event: message_delta\ndata: ${JSON.stringify({ ...delta, meta: { usage: { credits_used: 4, usd_spent: 0.000002 } } })}\n\n`,
    );
    expect(writer.failure('gone')).toBe('event: error\ndata: {"type":"error","error":{"type":"api_error","message":"gone"}}\n\n');
  });
});
