import type { UpstreamChatChunk } from '../provider.types';
import { BedrockTranslationError, ConverseStreamTranslator, fromConverseResponse, toConverseRequest } from './bedrock.converse';
import { bedrockMessagesCall } from './bedrock.messages';

describe('toConverseRequest', () => {
  it('carries system, images, tool calls and results, inference settings and tools', () => {
    const converse = toConverseRequest({
      model: 'meta.llama3-3-70b-instruct-v1:0',
      messages: [
        { role: 'system', content: 'Be brief.' },
        { role: 'user', content: [{ type: 'text', text: 'What is here?' }, { type: 'image_url', image_url: { url: 'data:image/png;base64,iVBORw0KGgo=' } }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'look', arguments: '{"at":"left"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: 'A cat' },
        { role: 'user', content: 'And?' },
      ],
      max_tokens: 100,
      temperature: 0.2,
      top_p: 0.9,
      stop: ['END'],
      tools: [{ type: 'function', function: { name: 'look', description: 'Looks', parameters: { type: 'object', properties: { at: { type: 'string' } } } } }],
      tool_choice: { type: 'function', function: { name: 'look' } },
    });
    expect(converse).toEqual({
      system: [{ text: 'Be brief.' }],
      messages: [
        { role: 'user', content: [{ text: 'What is here?' }, { image: { format: 'png', source: { bytes: 'iVBORw0KGgo=' } } }] },
        { role: 'assistant', content: [{ toolUse: { toolUseId: 'call_1', name: 'look', input: { at: 'left' } } }] },
        { role: 'user', content: [{ toolResult: { toolUseId: 'call_1', content: [{ text: 'A cat' }] } }, { text: 'And?' }] },
      ],
      inferenceConfig: { maxTokens: 100, temperature: 0.2, topP: 0.9, stopSequences: ['END'] },
      toolConfig: {
        tools: [{ toolSpec: { name: 'look', description: 'Looks', inputSchema: { json: { type: 'object', properties: { at: { type: 'string' } } } } } }],
        toolChoice: { tool: { name: 'look' } },
      },
    });
  });

  it.each([
    [{ messages: [{ role: 'user', content: [{ type: 'image_url', image_url: { url: 'https://example.com/cat.png' } }] }] }, 'messages[0].content[0].image_url.url'],
    [{ messages: [{ role: 'user', content: [{ type: 'input_audio', input_audio: {} }] }] }, 'messages[0].content[0]'],
    [{ messages: [{ role: 'user', content: 'hi' }], n: 2 }, 'n'],
    [{ messages: [{ role: 'user', content: 'hi' }], tools: [{ type: 'function', function: { name: 't' } }], tool_choice: 'none' }, 'tool_choice'],
    [{ messages: [{ role: 'assistant', content: 'hi' }] }, 'messages'],
    [{ messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_schema', json_schema: { name: 'a', schema: { type: 'object' } } } }, 'response_format'],
    [{ messages: [{ role: 'user', content: 'hi' }], response_format: { type: 'json_object' } }, 'response_format'],
    [{ messages: [{ role: 'user', content: 'hi' }], enable_search: true }, 'enable_search'],
  ])('refuses what Converse cannot carry with a 400 naming the field (%#)', (request, param) => {
    expect(() => toConverseRequest({ model: 'm', ...request } as never)).toThrow(expect.objectContaining({ name: 'BedrockTranslationError', param }));
    expect(() => toConverseRequest({ model: 'm', ...request } as never)).toThrow(BedrockTranslationError);
  });
});

describe('Converse answers', () => {
  it('reads text, tool calls, the stop reason and cache counts as Anthropic usage is read', () => {
    const answer = fromConverseResponse(
      {
        output: { message: { role: 'assistant', content: [{ text: 'Calling.' }, { toolUse: { toolUseId: 't1', name: 'look', input: { at: 'left' } } }] } },
        stopReason: 'tool_use',
        usage: { inputTokens: 10, outputTokens: 5, totalTokens: 45, cacheReadInputTokens: 20, cacheWriteInputTokens: 10 },
      },
      'amazon.nova-pro-v1:0',
    );
    expect(answer.choices[0]).toMatchObject({ finish_reason: 'tool_calls', message: { content: 'Calling.', tool_calls: [{ id: 't1', function: { name: 'look', arguments: '{"at":"left"}' } }] } });
    expect(answer.usage).toMatchObject({ prompt_tokens: 40, completion_tokens: 5, total_tokens: 45, prompt_tokens_details: { cached_tokens: 20, cache_write_tokens: 10 } });
  });

  it('streams chunks from ConverseStream events, the last one with the finish reason and the usage', () => {
    const translator = new ConverseStreamTranslator('bedrock', 'amazon.nova-pro-v1:0');
    const chunks: UpstreamChatChunk[] = [];
    const events: Array<[string, object]> = [
      ['messageStart', { role: 'assistant' }],
      ['contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } }],
      ['contentBlockStop', { contentBlockIndex: 0 }],
      ['contentBlockStart', { contentBlockIndex: 1, start: { toolUse: { toolUseId: 't1', name: 'look' } } }],
      ['contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '{"at":' } } }],
      ['contentBlockDelta', { contentBlockIndex: 1, delta: { toolUse: { input: '"left"}' } } }],
      ['contentBlockStop', { contentBlockIndex: 1 }],
      ['messageStop', { stopReason: 'tool_use' }],
    ];
    for (const [event, data] of events) expect(translator.read({ event, data: JSON.stringify(data) }, (chunk) => chunks.push(chunk))).toBe(false);
    expect(() => translator.end()).toThrow(/before its metadata/);
    expect(translator.read({ event: 'metadata', data: JSON.stringify({ usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7 } }) }, (chunk) => chunks.push(chunk))).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0].delta.content ?? '').join('')).toBe('Hi');
    expect(chunks.flatMap((chunk) => chunk.choices[0].delta.tool_calls ?? [])).toEqual([
      { index: 0, id: 't1', type: 'function', function: { name: 'look', arguments: '' } },
      { index: 0, function: { arguments: '{"at":' } },
      { index: 0, function: { arguments: '"left"}' } },
    ]);
    expect(chunks[chunks.length - 1]).toMatchObject({ choices: [{ finish_reason: 'tool_calls' }], usage: { prompt_tokens: 3, completion_tokens: 4 } });
  });
});

describe('bedrockMessagesCall', () => {
  it('puts the model in the path, the version and betas in the body, and reads streams as AWS event streams', () => {
    const target = { provider: 'bedrock', model: 'eu.anthropic.claude-sonnet-4-5-20250929-v1:0', baseUrl: 'https://bedrock-runtime.eu-west-1.amazonaws.com/' };
    const call = bedrockMessagesCall(target, { body: { model: 'x', stream: true, max_tokens: 10, messages: [] }, stream: true, beta: 'interleaved-thinking-2025-05-14, context-management-2025-06-27' });
    expect(call.url).toBe('https://bedrock-runtime.eu-west-1.amazonaws.com/model/eu.anthropic.claude-sonnet-4-5-20250929-v1%3A0/invoke-with-response-stream');
    expect(call.body).toEqual({ anthropic_version: 'bedrock-2023-05-31', max_tokens: 10, messages: [], anthropic_beta: ['interleaved-thinking-2025-05-14', 'context-management-2025-06-27'] });
    expect(call.framing).toBe('aws-event-stream');
    expect(bedrockMessagesCall(target, { body: { model: 'x', max_tokens: 10, messages: [] }, stream: false }).url).toMatch(/\/invoke$/);
  });
});
