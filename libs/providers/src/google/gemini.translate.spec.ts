import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { ChatMessage, ChatTool, ToolChoice } from '@igw/contracts';
import type { UpstreamChatChunk, UpstreamChatRequest } from '../provider.types';
import { chunkBatches } from '../transport/chunk-stream';
import { parseSse } from '../transport/sse';
import { UpstreamHttpError, UpstreamProtocolError } from '../upstream.errors';
import { GeminiChunks } from './gemini.chat';
import {
  fromGeminiResponse,
  GeminiStreamTranslator,
  GeminiTranslationError,
  mapFinishReason,
  toGeminiRequest,
  type TranslationContext,
} from './gemini.translate';
import type { GeminiGenerateContentResponse } from './gemini.types';

const FIXTURES = path.join(__dirname, '__fixtures__');
const fixtureText = (name: string): string => readFileSync(path.join(FIXTURES, name), 'utf8');
const fixture = <T>(name: string): T => JSON.parse(fixtureText(name)) as T;

/** Deterministic ids (test0, test1, ...) and timestamp, as the golden files expect. */
function testContext(model = 'gemini-2.5-pro'): TranslationContext {
  let next = 0;
  return { model, created: 1_700_000_000, newId: () => `test${next++}` };
}

function request(messages: ChatMessage[], extra: Partial<UpstreamChatRequest> = {}): UpstreamChatRequest {
  return { model: 'gemini-2.5-flash', messages, ...extra };
}

async function* sseSource(text: string): AsyncGenerator<Uint8Array> {
  // Split mid-event to exercise incremental parsing.
  const bytes = new TextEncoder().encode(text);
  for (let i = 0; i < bytes.length; i += 37) yield bytes.subarray(i, i + 37);
}

async function* oneEventPerRead<T>(events: AsyncIterable<T>): AsyncGenerator<T[]> {
  for await (const event of events) yield [event];
}

async function translateStream(text: string, context = testContext()): Promise<UpstreamChatChunk[]> {
  const chunks: UpstreamChatChunk[] = [];
  for await (const batch of chunkBatches(oneEventPerRead(parseSse(sseSource(text))), new GeminiChunks('google', new GeminiStreamTranslator(context)))) {
    for (const { chunk } of batch) chunks.push(chunk);
  }
  return chunks;
}

describe('golden fixtures', () => {
  it.each(['request-basic', 'request-tools', 'request-system-only'])('%s: OpenAI request → Gemini request', (name) => {
    const openai = fixture<UpstreamChatRequest>(`${name}.openai.json`);
    // Compare what goes on the wire (undefined fields never reach JSON).
    expect(JSON.parse(JSON.stringify(toGeminiRequest(openai)))).toStrictEqual(fixture(`${name}.gemini.json`));
  });

  it.each(['response-text', 'response-tool-call', 'response-grounded', 'response-candidates', 'response-blocked'])(
    '%s: Gemini response → OpenAI completion',
    (name) => {
      const gemini = fixture<GeminiGenerateContentResponse>(`${name}.gemini.json`);
      expect(JSON.parse(JSON.stringify(fromGeminiResponse(gemini, testContext())))).toStrictEqual(fixture(`${name}.openai.json`));
    },
  );

  it.each(['stream-text', 'stream-tool-call', 'stream-grounded', 'stream-blocked'])('%s: Gemini SSE → OpenAI chunks', async (name) => {
    const chunks = await translateStream(fixtureText(`${name}.gemini.sse`));
    expect(JSON.parse(JSON.stringify(chunks))).toStrictEqual(fixture(`${name}.openai.json`));
  });
});

describe('toGeminiRequest', () => {
  it('merges consecutive same-role contents, tool results included, and skips empty turns', () => {
    const body = toGeminiRequest(
      request([
        { role: 'user', content: 'a' },
        { role: 'user', content: '' },
        { role: 'user', content: [{ type: 'text', text: 'b' }] },
        { role: 'assistant', content: null, tool_calls: [{ id: 'c1', type: 'function', function: { name: 'f', arguments: '{"x":1}' } }] },
        { role: 'assistant', content: 'and' },
        { role: 'tool', tool_call_id: 'c1', content: 'r1' },
        { role: 'user', content: 'c' },
        { role: 'assistant', content: '' },
        { role: 'user', content: 'd' },
      ]),
    );
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'a' }, { text: 'b' }] },
      { role: 'model', parts: [{ functionCall: { name: 'f', args: { x: 1 } } }, { text: 'and' }] },
      { role: 'user', parts: [{ functionResponse: { name: 'f', response: { content: 'r1' } } }, { text: 'c' }, { text: 'd' }] },
    ]);
  });

  it('sends file parts given as base64 data URLs as inline data, a PDF and plain text alike', () => {
    const pdf = Buffer.from('%PDF-1.4 minimal').toString('base64');
    const text = Buffer.from('plain words').toString('base64');
    const body = toGeminiRequest(
      request([
        {
          role: 'user',
          content: [
            { type: 'text', text: 'Summarize' },
            { type: 'file', file: { file_data: `data:application/pdf;base64,${pdf}`, filename: 'report.pdf' } },
            { type: 'file', file: { file_data: `data:text/plain;base64,${text}` } },
          ],
        },
      ]),
    );
    expect(body.contents).toEqual([
      { role: 'user', parts: [{ text: 'Summarize' }, { inlineData: { mimeType: 'application/pdf', data: pdf } }, { inlineData: { mimeType: 'text/plain', data: text } }] },
    ]);
  });

  it.each([
    ['a file_id', { file_id: 'file-abc' }, 'messages[1].content[0].file.file_id', /^a file id cannot be sent to Gemini; send the file itself as file_data/],
    ['a URL', { file_data: 'https://example.com/a.pdf' }, 'messages[1].content[0].file.file_data', /^Expected a base64 data URL of a PDF or plain text/],
    ['another media type', { file_data: 'data:application/msword;base64,0M8R4A==' }, 'messages[1].content[0].file.file_data', /^media type "application\/msword" cannot be sent to Gemini; it takes application\/pdf and text\/plain/],
  ])('refuses a file part with %s, naming the field and what is accepted', (_label, file, param, message) => {
    let caught: unknown;
    try {
      toGeminiRequest(request([{ role: 'system', content: 'Be brief.' }, { role: 'user', content: [{ type: 'file', file }] }]));
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(GeminiTranslationError);
    expect((caught as GeminiTranslationError).param).toBe(param);
    expect((caught as GeminiTranslationError).message).toMatch(message);
  });

  it('names each tool result after the assistant call with its tool_call_id, the latest one first', () => {
    const body = toGeminiRequest(
      request([
        { role: 'user', content: 'go' },
        {
          role: 'assistant',
          tool_calls: [
            { id: 'x', type: 'function', function: { name: 'first', arguments: '{}' } },
            { id: 'y', type: 'function', function: { name: 'second', arguments: '{}' } },
          ],
        },
        { role: 'tool', tool_call_id: 'y', content: 'Y' },
        { role: 'tool', tool_call_id: 'x', content: 'X' },
        { role: 'assistant', tool_calls: [{ id: 'x', type: 'function', function: { name: 'third', arguments: '{}' } }] },
        { role: 'tool', tool_call_id: 'x', content: 'X2' },
      ]),
    );
    const names = body.contents.flatMap((content) => content.parts.flatMap((part) => (part.functionResponse ? [part.functionResponse.name] : [])));
    expect(names).toEqual(['second', 'first', 'third']);
  });

  it('falls back to the tool message name, else rejects an unknown tool_call_id', () => {
    const named = toGeminiRequest(request([{ role: 'user', content: 'q' }, { role: 'tool', tool_call_id: 'nope', name: 'lookup', content: 'r' }]));
    expect(named.contents[0].parts[1]).toEqual({ functionResponse: { name: 'lookup', response: { content: 'r' } } });
    expect(() => toGeminiRequest(request([{ role: 'user', content: 'q' }, { role: 'tool', tool_call_id: 'nope', content: 'r' }]))).toThrow(
      GeminiTranslationError,
    );
  });

  it.each([
    ['not JSON', '{"a":'],
    ['a JSON array', '[1,2]'],
    ['a JSON string', '"x"'],
  ])('rejects assistant tool call arguments that are %s', (_label, args) => {
    const messages: ChatMessage[] = [
      { role: 'user', content: 'q' },
      { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: args } }] },
    ];
    expect(() => toGeminiRequest(request(messages))).toThrow(GeminiTranslationError);
  });

  it('accepts empty arguments as {}', () => {
    const body = toGeminiRequest(
      request([
        { role: 'user', content: 'q' },
        { role: 'assistant', tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: ' ' } }] },
      ]),
    );
    expect(body.contents[1].parts).toEqual([{ functionCall: { name: 'f', args: {} } }]);
  });

  it('rejects a conversation with nothing to send', () => {
    expect(() => toGeminiRequest(request([{ role: 'user', content: '' }]))).toThrow(GeminiTranslationError);
  });

  const tools: ChatTool[] = [
    { type: 'function', function: { name: 'a' } },
    { type: 'function', function: { name: 'b' } },
  ];
  it.each<[ToolChoice, unknown]>([
    ['auto', { mode: 'AUTO' }],
    ['required', { mode: 'ANY' }],
    ['none', { mode: 'NONE' }],
    [{ type: 'function', function: { name: 'b' } }, { mode: 'ANY', allowedFunctionNames: ['b'] }],
    [{ type: 'allowed_tools', allowed_tools: { mode: 'required', tools: [{ type: 'function', function: { name: 'a' } }] } }, { mode: 'ANY', allowedFunctionNames: ['a'] }],
  ])('tool_choice %j → functionCallingConfig %j', (toolChoice, config) => {
    const body = toGeminiRequest(request([{ role: 'user', content: 'q' }], { tools, tool_choice: toolChoice }));
    expect(body.toolConfig).toEqual({ functionCallingConfig: config });
    expect(body.tools).toEqual([{ functionDeclarations: [{ name: 'a' }, { name: 'b' }] }]);
  });

  it('allowed_tools in auto mode declares only the allowed functions', () => {
    const choice: ToolChoice = { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'b' } }] } };
    const body = toGeminiRequest(request([{ role: 'user', content: 'q' }], { tools, tool_choice: choice }));
    expect(body.toolConfig).toEqual({ functionCallingConfig: { mode: 'AUTO' } });
    expect(body.tools).toEqual([{ functionDeclarations: [{ name: 'b' }] }]);
  });

  it('sends no toolConfig without a tool_choice or without function tools', () => {
    expect(toGeminiRequest(request([{ role: 'user', content: 'q' }], { tools })).toolConfig).toBeUndefined();
    const searchOnly = toGeminiRequest(request([{ role: 'user', content: 'q' }], { tool_choice: 'required', enable_search: true }));
    expect(searchOnly.toolConfig).toBeUndefined();
    expect(searchOnly.tools).toEqual([{ googleSearch: {} }]);
  });

  it.each<[Partial<UpstreamChatRequest>, unknown]>([
    [{ reasoning: { effort: 'low' } }, { thinkingBudget: 1024 }],
    [{ reasoning: { effort: 'medium' } }, { thinkingBudget: 4096 }],
    [{ reasoning: { effort: 'high' } }, { thinkingBudget: 16384 }],
    [{ reasoning_effort: 'none' }, { thinkingBudget: 0 }],
    [{ reasoning: { max_tokens: 300 }, reasoning_effort: 'high' }, { thinkingBudget: 300 }],
    [{ reasoning: { exclude: true } }, { includeThoughts: false }],
    [{}, undefined],
  ])('reasoning %j → thinkingConfig %j', (extra, expected) => {
    expect(toGeminiRequest(request([{ role: 'user', content: 'q' }], extra)).generationConfig?.thinkingConfig).toEqual(expected);
  });

  it('takes max_completion_tokens over max_tokens and top_logprobs only with logprobs', () => {
    const config = toGeminiRequest(request([{ role: 'user', content: 'q' }], { max_tokens: 10, top_logprobs: 2 })).generationConfig;
    expect(config).toEqual({ maxOutputTokens: 10 });
  });

  it('drops fields Gemini has no equivalent for', () => {
    const body = toGeminiRequest(request([{ role: 'user', content: 'q' }], { user: 'x', logit_bias: { 1: 1 }, store: true }));
    expect(body).toEqual({ contents: [{ role: 'user', parts: [{ text: 'q' }] }] });
  });
});

describe('finish reasons', () => {
  it.each([
    ['STOP', false, 'stop'],
    ['STOP', true, 'tool_calls'],
    [undefined, false, 'stop'],
    [undefined, true, 'tool_calls'],
    ['MAX_TOKENS', false, 'length'],
    ['MAX_TOKENS', true, 'length'],
    ['SAFETY', false, 'content_filter'],
    ['RECITATION', false, 'content_filter'],
    ['BLOCKLIST', false, 'content_filter'],
    ['PROHIBITED_CONTENT', false, 'content_filter'],
    ['SPII', true, 'content_filter'],
    ['IMAGE_SAFETY', false, 'content_filter'],
    ['OTHER', false, 'stop'],
    ['LANGUAGE', false, 'stop'],
    ['MALFORMED_FUNCTION_CALL', false, 'stop'],
    ['FINISH_REASON_UNSPECIFIED', false, 'stop'],
  ])('%s (function call: %s) → %s', (reason, hasToolCalls, expected) => {
    expect(mapFinishReason(reason, hasToolCalls)).toBe(expected);
  });

  it('applies in complete responses', () => {
    const response: GeminiGenerateContentResponse = { candidates: [{ content: { parts: [{ text: 'x' }] }, finishReason: 'RECITATION' }] };
    expect(fromGeminiResponse(response, testContext()).choices[0].finish_reason).toBe('content_filter');
  });
});

describe('fromGeminiResponse', () => {
  it('falls back to a generated id and the requested model', () => {
    const completion = fromGeminiResponse({ candidates: [{ content: { parts: [{ functionCall: { name: 'f' } }] } }] }, testContext('m'));
    expect(completion.model).toBe('m');
    expect(completion.id).toMatch(/^chatcmpl-gemini-/);
    expect(completion.usage).toBeUndefined();
    expect(completion.choices[0].message).toEqual({
      role: 'assistant',
      content: null,
      tool_calls: [{ id: 'call_test0', type: 'function', function: { name: 'f', arguments: '{}' } }],
    });
  });
});

describe('GeminiStreamTranslator', () => {
  it('keeps tool call indexes per candidate and a role chunk per candidate', () => {
    const translator = new GeminiStreamTranslator(testContext());
    const chunks = [
      ...translator.push({
        candidates: [
          { content: { parts: [{ functionCall: { name: 'a', args: {} } }] }, index: 0 },
          { content: { parts: [{ text: 'hi' }] }, index: 1 },
        ],
        responseId: 'r',
      }),
      ...translator.push({
        candidates: [
          { content: { parts: [{ functionCall: { name: 'b', args: { k: 'v' } } }] }, finishReason: 'STOP', index: 0 },
          { content: { parts: [{ text: '!' }] }, finishReason: 'MAX_TOKENS', index: 1 },
        ],
        usageMetadata: { promptTokenCount: 1, candidatesTokenCount: 2 },
      }),
      ...translator.finish(),
    ];
    expect(translator.complete).toBe(true);
    expect(chunks.map((chunk) => chunk.choices[0] ?? chunk.usage)).toEqual([
      { index: 0, delta: { role: 'assistant', tool_calls: [{ index: 0, id: 'call_test0', type: 'function', function: { name: 'a', arguments: '{}' } }] }, finish_reason: null },
      { index: 1, delta: { role: 'assistant', content: 'hi' }, finish_reason: null },
      { index: 0, delta: { tool_calls: [{ index: 1, id: 'call_test1', type: 'function', function: { name: 'b', arguments: '{"k":"v"}' } }] }, finish_reason: null },
      { index: 0, delta: {}, finish_reason: 'tool_calls' },
      { index: 1, delta: { content: '!' }, finish_reason: null },
      { index: 1, delta: {}, finish_reason: 'length' },
      { prompt_tokens: 1, completion_tokens: 2, total_tokens: 3, prompt_tokens_details: { cached_tokens: 0 }, completion_tokens_details: { reasoning_tokens: 0 } },
    ]);
  });

  it('rejects a stream that ends before a finish reason', async () => {
    const text = 'data: {"candidates":[{"content":{"parts":[{"text":"Hel"}]},"index":0}]}\n\n';
    await expect(translateStream(text)).rejects.toBeInstanceOf(UpstreamProtocolError);
    await expect(translateStream('')).rejects.toBeInstanceOf(UpstreamProtocolError);
  });

  it('turns an error event into an UpstreamHttpError and bad JSON into an UpstreamProtocolError', async () => {
    await expect(translateStream('data: {"error":{"code":503,"message":"overloaded","status":"UNAVAILABLE"}}\n\n')).rejects.toThrow(
      new UpstreamHttpError('google', 502, 'overloaded'),
    );
    await expect(translateStream('data: {nope\n\n')).rejects.toBeInstanceOf(UpstreamProtocolError);
  });
});
