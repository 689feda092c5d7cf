import type { NativeEvent, NativeEventStream, UpstreamChatChunk } from '@igw/providers';
import type { StreamSettlement } from './chat-stream';
import { nativeStreamEvents, sseOf, type NativeEventWriter } from './native-upstream';

const text = (content: string): UpstreamChatChunk => ({ id: '', object: 'chat.completion.chunk', created: 0, model: '', choices: [{ index: 0, delta: { content }, finish_reason: null }] });
const event = (type: string, chunks: UpstreamChatChunk[] = [], usage?: NativeEvent['usage']): NativeEvent => ({ name: type, data: JSON.stringify({ type }), parsed: { type }, chunks, usage });

/** Writes each event as it came, the one with the usage with what it cost. */
const writer: NativeEventWriter = {
  event: (native, meta) => {
    const charged = meta();
    return charged === undefined ? sseOf(native.name, native.data) : sseOf(native.name, JSON.stringify({ ...native.parsed, meta: { usage: charged } }));
  },
  failure: (message) => sseOf('error', JSON.stringify({ message })),
};

function run(stream: NativeEventStream) {
  const settlements: StreamSettlement[] = [];
  const events = nativeStreamEvents(
    stream,
    {
      modelId: 'acme/model',
      includeUsage: true,
      prompt: { messages: [{ role: 'user', content: 'Tell me about the weather in Paris today' }] },
      settle: (settlement) => {
        settlements.push(settlement);
        return { credits_used: 9, usd_spent: 0.0000045 };
      },
      describeError: (error) => (error as Error).message,
    },
    writer,
  );
  return { events, settlements };
}

describe('a native stream for the client, settled as chat streams are', () => {
  it('passes the events on as they came and settles once with the reported usage, on the event that reports it', async () => {
    const usage = { prompt_tokens: 12, completion_tokens: 3, total_tokens: 15 };
    const stream: NativeEventStream = (async function* () {
      yield [event('start'), event('delta', [text('Sunny')])];
      yield [event('usage', [], usage), event('stop')];
    })();
    const { events, settlements } = run(stream);
    let written = '';
    for await (const piece of events) written += piece;
    expect(written).toBe(
      'event: start\ndata: {"type":"start"}\n\nevent: delta\ndata: {"type":"delta"}\n\n' +
        'event: usage\ndata: {"type":"usage","meta":{"usage":{"credits_used":9,"usd_spent":0.0000045}}}\n\nevent: stop\ndata: {"type":"stop"}\n\n',
    );
    expect(settlements).toEqual([{ usage, reported: true }]);
  });

  it('counts what was generated when its reader stops early (the client left), and ends the upstream call', async () => {
    let returned = false;
    const stream: NativeEventStream = {
      [Symbol.asyncIterator]: () => ({
        next: async () => ({ done: false, value: [event('delta', [text('word word word ')])] }),
        return: async () => {
          returned = true;
          return { done: true, value: undefined };
        },
      }),
    };
    const { events, settlements } = run(stream);
    for await (const _piece of events) break;
    expect(returned).toBe(true);
    expect(settlements).toHaveLength(1);
    expect(settlements[0].reported).toBe(false);
    expect(settlements[0].usage.completion_tokens).toBeGreaterThanOrEqual(3);
    expect(settlements[0].usage.prompt_tokens).toBeGreaterThan(5);
  });

  it("writes a failure half-way in the front's words, having settled what was read", async () => {
    const stream: NativeEventStream = (async function* () {
      yield [event('delta', [text('Half')])];
      throw new Error('The upstream stream failed.');
    })();
    const { events, settlements } = run(stream);
    let written = '';
    for await (const piece of events) written += piece;
    expect(written.endsWith('event: error\ndata: {"message":"The upstream stream failed."}\n\n')).toBe(true);
    expect(settlements).toHaveLength(1);
  });
});
