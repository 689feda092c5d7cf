import type { StreamedChunk, UpstreamChatChunk } from '@igw/providers';
import { countTokens, estimateChatPromptTokens } from '@igw/tokenizer';
import { chatStreamEvents, type StreamSettlement } from './chat-stream';

const chunk = (delta: UpstreamChatChunk['choices'][number]['delta'], usage?: UpstreamChatChunk['usage']): UpstreamChatChunk => ({
  id: 'c',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'upstream',
  choices: usage ? [] : [{ index: 0, delta, finish_reason: null }],
  ...(usage ? { usage } : {}),
});

/** Chunks handed out one by one (batches of one) as the test releases them. */
function gatedChunks(chunks: UpstreamChatChunk[]): { iterable: AsyncIterable<StreamedChunk[]>; release(count: number): void; readonly read: number } {
  let allowed = 0;
  let read = 0;
  let wake: (() => void) | undefined;
  return {
    iterable: {
      async *[Symbol.asyncIterator]() {
        for (const next of chunks) {
          while (read >= allowed) await new Promise<void>((resolve) => (wake = resolve));
          read++;
          yield [{ chunk: next }];
        }
      },
    },
    release(count) {
      allowed += count;
      wake?.();
    },
    get read() {
      return read;
    },
  };
}

const prompt = {
  messages: [{ role: 'user', content: 'look this up' }],
  tools: [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: { id: { type: 'string' } } } } }],
};

describe('chatStreamEvents settlement', () => {
  it('counts reasoning, tool call arguments and tool schemas when no usage comes', async () => {
    const settlements: StreamSettlement[] = [];
    const events = chatStreamEvents(
      (async function* () {
        yield [{ chunk: chunk({ reasoning_content: 'First I think about the order carefully.' }) }, { chunk: chunk({ content: 'Looking it up.' }) }];
        yield [{ chunk: chunk({ tool_calls: [{ index: 0, function: { name: 'lookup', arguments: '{"id":"A-17"}' } }] }) }];
      })(),
      { modelId: 'm', includeUsage: false, prompt, settle: (s) => (settlements.push(s), { credits_used: 0, usd_spent: 0 }), describeError: () => 'x' },
    );
    const written: string[] = [];
    for await (const piece of events) written.push(piece);
    // The chunks of one upstream read leave as one piece of the answer.
    expect(written.map((piece) => piece.split('data: ').length - 1)).toEqual([2, 1, 1]);
    expect(written[2]).toBe('data: [DONE]\n\n');
    expect(settlements).toHaveLength(1);
    expect(settlements[0].reported).toBe(false);
    expect(settlements[0].usage.prompt_tokens).toBe(estimateChatPromptTokens(prompt));
    // Everything generated, counted as one text in the order it came.
    expect(settlements[0].usage.completion_tokens).toBe(countTokens('First I think about the order carefully.Looking it up.lookup{"id":"A-17"}'));
    expect(settlements[0].usage.completion_tokens).toBeGreaterThan(countTokens('Looking it up.') + 10);
  });

  it('stops reading the upstream when the consumer leaves, and settles once with the prompt and what was read by then', async () => {
    const settlements: StreamSettlement[] = [];
    const gate = gatedChunks([chunk({ content: 'one' }), chunk({ content: ' two' }), chunk({ content: ' three' }), chunk({}, { prompt_tokens: 11, completion_tokens: 3, total_tokens: 14 })]);
    const events = chatStreamEvents(gate.iterable, {
      modelId: 'm',
      includeUsage: false,
      prompt,
      settle: (s) => (settlements.push(s), { credits_used: 0, usd_spent: 0 }),
      describeError: () => 'x',
    });
    gate.release(1);
    expect((await events.next()).done).toBe(false);
    // The client leaves after the first event.
    await events.return(undefined);
    expect(settlements).toEqual([{ usage: { prompt_tokens: estimateChatPromptTokens(prompt), completion_tokens: countTokens('one'), total_tokens: estimateChatPromptTokens(prompt) + countTokens('one') }, reported: false }]);
    gate.release(3);
    for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
    expect(gate.read).toBe(1);
    expect(settlements).toHaveLength(1);
  });
});

describe('chatStreamEvents and hidden reasoning', () => {
  it('never forwards hidden text, and counts it when the client leaves before the usage came', async () => {
    const settlements: StreamSettlement[] = [];
    const hidden = { ...chunk({}), choices: [], hiddenText: 'I must think about this before I answer.' };
    const gate = gatedChunks([hidden, chunk({ content: 'Answer.' }), chunk({ content: ' More.' })]);
    const events = chatStreamEvents(gate.iterable, { modelId: 'm', includeUsage: true, prompt, settle: (s) => (settlements.push(s), { credits_used: 0, usd_spent: 0 }), describeError: () => 'x' });
    gate.release(2);
    const first = await events.next();
    expect(first.value).not.toContain('think');
    expect(first.value).toContain('Answer.');
    await events.return(undefined);
    expect(settlements[0].usage.completion_tokens).toBe(countTokens('I must think about this before I answer.Answer.'));
  });
});

describe('chatStreamEvents forwarding upstream text', () => {
  /** The client's events for these upstream texts, read as one batch with their text (`raw`) or without it. */
  async function clientEvents(texts: string[], includeUsage: boolean, withText: boolean): Promise<string[]> {
    const batch: StreamedChunk[] = texts.map((text) => ({ chunk: JSON.parse(text) as UpstreamChatChunk, raw: withText ? text : undefined }));
    const events = chatStreamEvents(
      (async function* () {
        yield batch;
      })(),
      { modelId: 'catalogue-id', includeUsage, prompt, settle: () => ({ credits_used: 7, usd_spent: 0.5 }), describeError: () => 'x' },
    );
    let written = '';
    for await (const piece of events) written += piece;
    return written.split('\n\n').filter((event) => event !== '');
  }

  const plain = (content: string, tail = ',"usage":null') =>
    `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]${tail}}`;
  // The writer's own cases are in chunk-stream.spec.ts: here, what the stream does with it.
  const texts = [
    plain('\\u00e9t\\u00e9'),
    plain('no usage field', ''),
    '{"id":"c1","model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}',
  ];

  it.each([true, false])('sends what serializing the chunks sends (include_usage %s)', async (includeUsage) => {
    const edited = await clientEvents(texts, includeUsage, true);
    const serialized = await clientEvents(texts, includeUsage, false);
    expect(edited.map((event) => (event.startsWith('data: {') ? JSON.parse(event.slice(6)) : event))).toEqual(
      serialized.map((event) => (event.startsWith('data: {') ? JSON.parse(event.slice(6)) : event)),
    );
    // The first chunk left as the upstream wrote it, only renamed (its escapes kept).
    expect(edited[0]).toContain('"content":"\\u00e9t\\u00e9"');
    expect(edited[0]).toContain('"model":"catalogue-id"');
    expect(edited[0].includes('"usage":null')).toBe(includeUsage);
    // The usage chunk, with what it cost, only for a client that asked for it.
    expect(edited.slice(2)).toEqual(includeUsage ? [expect.stringContaining('"meta":{"usage":{"credits_used":7,"usd_spent":0.5}}'), 'data: [DONE]'] : ['data: [DONE]']);
  });
});
