import type { ChatCompletionDto } from '@igw/contracts';
import type { NativeEvent, StreamedChunk, UpstreamChatChunk } from '@igw/providers';
import { plainToInstance } from 'class-transformer';
import { GeminiGenerateContentRequestDto } from '@igw/contracts';
import type { StreamSettlement } from '../chat/chat-stream';
import { geminiNativeBody, GeminiNativeWriter } from './gemini-native';
import { finishReasonOf, generateContentResponseOf, usageMetadataOf } from './gemini-response';
import { GeminiFrames, geminiStreamEvents, type GeminiStreamFraming } from './gemini-stream';

const completion = (message: Record<string, unknown>, finishReason: string, usage: Record<string, unknown>) =>
  ({ id: 'chatcmpl-1', object: 'chat.completion', created: 1, model: 'acme/chat', choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason }], usage, meta: { usage: { credits_used: 3, usd_spent: 0.0000015 } } }) as unknown as ChatCompletionDto;

describe("the chat answer as Google's GenerateContentResponse", () => {
  it('puts thoughts (when asked for), text and calls in the candidate, the usage in Google’s names, and meta.usage beside', () => {
    const answer = generateContentResponseOf(
      completion(
        { content: 'It is sunny.', reasoning_content: 'Let me see.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { google: { thought_signature: 'sig' } } }] },
        'tool_calls',
        { prompt_tokens: 20, completion_tokens: 15, total_tokens: 35, prompt_tokens_details: { cached_tokens: 4 }, completion_tokens_details: { reasoning_tokens: 5 } },
      ),
      true,
    );
    expect(answer).toEqual({
      candidates: [
        {
          content: { role: 'model', parts: [{ text: 'Let me see.', thought: true }, { text: 'It is sunny.' }, { functionCall: { name: 'get_weather', args: { city: 'Paris' } }, thoughtSignature: 'sig' }] },
          finishReason: 'STOP',
          index: 0,
        },
      ],
      usageMetadata: { promptTokenCount: 20, candidatesTokenCount: 10, totalTokenCount: 35, thoughtsTokenCount: 5, cachedContentTokenCount: 4 },
      modelVersion: 'acme/chat',
      responseId: 'chatcmpl-1',
      meta: { usage: { credits_used: 3, usd_spent: 0.0000015 } },
    });
    expect(generateContentResponseOf(completion({ content: 'x', reasoning_content: 'hidden' }, 'stop', { prompt_tokens: 1, completion_tokens: 1 }), false).candidates[0].content.parts).toEqual([{ text: 'x' }]);
  });

  it.each([
    ['stop', 'STOP'],
    ['tool_calls', 'STOP'],
    ['length', 'MAX_TOKENS'],
    ['content_filter', 'SAFETY'],
    ['something_new', 'OTHER'],
  ])('maps finish_reason %s to %s', (chat, google) => {
    expect(finishReasonOf(chat)).toBe(google);
  });

  it('counts no thoughts or cache it was not told of', () => {
    expect(usageMetadataOf({ prompt_tokens: 3, completion_tokens: 2 })).toEqual({ promptTokenCount: 3, candidatesTokenCount: 2, totalTokenCount: 5 });
  });
});

type Delta = UpstreamChatChunk['choices'][number]['delta'];
const chunk = (delta: Delta, finishReason: string | null = null, index = 0): UpstreamChatChunk => ({ id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'upstream', choices: [{ index, delta, finish_reason: finishReason }] });
const usageChunk = (usage: UpstreamChatChunk['usage']): UpstreamChatChunk => ({ id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'upstream', choices: [], usage });

async function streamed(framing: GeminiStreamFraming, batches: UpstreamChatChunk[][], failWith?: Error) {
  const settlements: StreamSettlement[] = [];
  const stream: AsyncIterable<StreamedChunk[]> = {
    async *[Symbol.asyncIterator]() {
      for (const batch of batches) yield batch.map((item) => ({ chunk: item }));
      if (failWith) throw failWith;
    },
  };
  const events = geminiStreamEvents(framing, true)(stream, {
    modelId: 'acme/chat',
    includeUsage: true,
    prompt: { messages: [{ role: 'user', content: 'Weather?' }] },
    settle: (settlement) => {
      settlements.push(settlement);
      return { credits_used: 7, usd_spent: 0.0000035 };
    },
    describeError: (error) => (error as Error).message,
  });
  let text = '';
  for await (const piece of events) text += piece;
  return { text, settlements };
}

const sseData = (text: string) =>
  text
    .split('\r\n\r\n')
    .filter(Boolean)
    .map((event) => {
      expect(event.startsWith('data: ')).toBe(true);
      return JSON.parse(event.slice('data: '.length)) as Record<string, unknown>;
    });

describe("the chat stream as Google's streamGenerateContent", () => {
  const batches = [
    [chunk({ role: 'assistant', content: '' }), chunk({ reasoning_content: 'Hmm.' }), chunk({ content: 'Checking' })],
    [chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":' } }] }), chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] })],
    [chunk({}, 'tool_calls'), usageChunk({ prompt_tokens: 40, completion_tokens: 12, total_tokens: 52 } as UpstreamChatChunk['usage'])],
  ];

  it('sends each text and thought as an event, each call whole at the end with the finish reason, the usage and meta.usage', async () => {
    const { text, settlements } = await streamed('sse', batches);
    const events = sseData(text);
    expect(events.map((event) => event.candidates)).toEqual([
      [{ content: { role: 'model', parts: [{ text: 'Hmm.', thought: true }] }, index: 0 }],
      [{ content: { role: 'model', parts: [{ text: 'Checking' }] }, index: 0 }],
      [{ content: { role: 'model', parts: [{ functionCall: { name: 'get_weather', args: { city: 'Paris' } } }] }, finishReason: 'STOP', index: 0 }],
    ]);
    expect(events.every((event) => event.modelVersion === 'acme/chat' && event.responseId === 'chatcmpl-9')).toBe(true);
    expect(events.at(-1)).toMatchObject({ usageMetadata: { promptTokenCount: 40, candidatesTokenCount: 12, totalTokenCount: 52 }, meta: { usage: { credits_used: 7, usd_spent: 0.0000035 } } });
    expect(settlements).toHaveLength(1);
  });

  it('writes the same responses as one JSON array without alt=sse', async () => {
    const sse = sseData((await streamed('sse', batches)).text);
    const { text } = await streamed('json-array', batches);
    expect(text.startsWith('[{')).toBe(true);
    expect(JSON.parse(text)).toEqual(sse);
  });

  it("ends a failure half-way with Google's error, the array closed, and settles once", async () => {
    const { text, settlements } = await streamed('json-array', [[chunk({ content: 'Partial' })]], new Error('upstream went away'));
    expect(JSON.parse(text)).toEqual([
      expect.objectContaining({ candidates: [{ content: { role: 'model', parts: [{ text: 'Partial' }] }, index: 0 }] }),
      { error: { code: 500, message: 'upstream went away', status: 'INTERNAL' } },
    ]);
    expect(settlements).toHaveLength(1);
  });

  it('writes an empty array as [] and separate candidates by index', async () => {
    const frames = new GeminiFrames('json-array');
    expect(frames.close()).toBe('[]');
    const { text } = await streamed('sse', [[chunk({ content: 'A' }, null, 0), chunk({ content: 'B' }, null, 1)], [chunk({}, 'stop', 0), chunk({}, 'length', 1)]]);
    const last = sseData(text).at(-1) as { candidates: Array<{ index: number; finishReason: string }> };
    expect(last.candidates.map(({ index, finishReason }) => [index, finishReason])).toEqual([
      [0, 'STOP'],
      [1, 'MAX_TOKENS'],
    ]);
  });
});

describe('the native path', () => {
  it('sends the request as validated, maxOutputTokens lowered, tools Google would run unheld left out', () => {
    const body = plainToInstance(GeminiGenerateContentRequestDto, {
      contents: [{ role: 'user', parts: [{ text: 'hi', thoughtSignature: 'keep' }] }],
      systemInstruction: { parts: [{ text: 'sys' }] },
      tools: [{ functionDeclarations: [{ name: 'f' }], codeExecution: {} }, { googleSearch: {} }, { urlContext: {} }],
      generationConfig: { topK: 3, maxOutputTokens: 99_999, thinkingConfig: { includeThoughts: true } },
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
    });
    expect(geminiNativeBody(body, { max_tokens: 65536 })).toEqual({
      contents: [{ role: 'user', parts: [{ text: 'hi', thoughtSignature: 'keep' }] }],
      systemInstruction: { parts: [{ text: 'sys' }] },
      tools: [{ functionDeclarations: [{ name: 'f' }] }, { googleSearch: {} }],
      generationConfig: { topK: 3, maxOutputTokens: 65536, thinkingConfig: { includeThoughts: true } },
      safetySettings: [{ category: 'HARM_CATEGORY_HARASSMENT', threshold: 'BLOCK_NONE' }],
    });
  });

  it("refuses a file of the upstream account's Files API", () => {
    const body = plainToInstance(GeminiGenerateContentRequestDto, { contents: [{ role: 'user', parts: [{ fileData: { mimeType: 'application/pdf', fileUri: 'https://generativelanguage.googleapis.com/v1beta/files/abc123' } }] }] });
    expect(() => geminiNativeBody(body, {})).toThrow(/contents\[0\]\.parts\[0\]\.fileData\.fileUri: a file of the upstream account/);
  });

  it('passes events on with the catalogue id, meta.usage on the one that reports the usage, and closes the array', () => {
    const writer = new GeminiNativeWriter('google/gemini-x', new GeminiFrames('json-array'));
    const event = (parsed: Record<string, unknown>, usage?: NativeEvent['usage']): NativeEvent => ({ data: JSON.stringify(parsed), parsed, chunks: [], usage });
    const first = writer.event(event({ candidates: [{ content: { parts: [{ text: 'Hi' }] } }], modelVersion: 'gemini-x-001' }), () => undefined);
    const last = writer.event(event({ candidates: [{ finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 1 } }, { prompt_tokens: 1, completion_tokens: 1, total_tokens: 2 }), () => ({ credits_used: 1, usd_spent: 0.0000005 }));
    expect(JSON.parse(first + last + writer.end())).toEqual([
      { candidates: [{ content: { parts: [{ text: 'Hi' }] } }], modelVersion: 'google/gemini-x' },
      { candidates: [{ finishReason: 'STOP' }], usageMetadata: { promptTokenCount: 1 }, modelVersion: 'google/gemini-x', meta: { usage: { credits_used: 1, usd_spent: 0.0000005 } } },
    ]);
  });
});
