import type { StreamedChunk, UpstreamChatChunk } from '@igw/providers';
import type { StreamSettlement } from '../chat/chat-stream';
import { messagesStreamEvents } from './messages-stream';

type Delta = UpstreamChatChunk['choices'][number]['delta'];

const chunk = (delta: Delta, finishReason: string | null = null): UpstreamChatChunk => ({
  id: 'chatcmpl-9',
  object: 'chat.completion.chunk',
  created: 1,
  model: 'upstream',
  choices: [{ index: 0, delta, finish_reason: finishReason }],
});
const usageChunk = (usage: UpstreamChatChunk['usage']): UpstreamChatChunk => ({ id: 'chatcmpl-9', object: 'chat.completion.chunk', created: 1, model: 'upstream', choices: [], usage });

const prompt = { messages: [{ role: 'user', content: 'What is the weather in Paris?' }] };

/** The events a stream of these batches becomes, parsed, with what was settled. */
async function eventsOf(batches: UpstreamChatChunk[][], failWith?: Error) {
  const settlements: StreamSettlement[] = [];
  const stream: AsyncIterable<StreamedChunk[]> = {
    async *[Symbol.asyncIterator]() {
      for (const batch of batches) yield batch.map((item) => ({ chunk: item }));
      if (failWith) throw failWith;
    },
  };
  const generator = messagesStreamEvents(stream, {
    modelId: 'acme/chat',
    includeUsage: true,
    prompt,
    settle: (settlement) => {
      settlements.push(settlement);
      return { credits_used: 7, usd_spent: 0.0000035 };
    },
    describeError: (error) => (error as Error).message,
  });
  let text = '';
  for await (const piece of generator) text += piece;
  const events = text
    .split('\n\n')
    .filter((block) => block !== '')
    .map((block) => {
      const [eventLine, dataLine] = block.split('\n');
      const data = JSON.parse(dataLine.slice('data: '.length)) as Record<string, unknown>;
      // Written as JSON.stringify writes the object (the text deltas are written by hand).
      expect(JSON.stringify(data)).toBe(dataLine.slice('data: '.length));
      expect(eventLine).toBe(`event: ${data.type as string}`);
      return data;
    });
  return { events, settlements };
}

describe("the chat stream as Anthropic's events", () => {
  it('opens a block per run of thinking, text and each tool call, and ends with the stop reason, the usage and meta.usage', async () => {
    const { events, settlements } = await eventsOf([
      [chunk({ role: 'assistant', content: '' }), chunk({ reasoning_content: 'Weather, ' }), chunk({ reasoning_content: 'so a tool.' })],
      [chunk({ content: 'Checking' }), chunk({ content: ' now.' })],
      [chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }), chunk({ tool_calls: [{ index: 0, function: { arguments: '{"location":' } }] })],
      [chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }), chunk({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'noop', arguments: '{}' } }] })],
      [chunk({}, 'tool_calls'), usageChunk({ prompt_tokens: 40, completion_tokens: 12, total_tokens: 52, prompt_tokens_details: { cached_tokens: 10, cache_write_tokens: 20 } } as UpstreamChatChunk['usage'])],
    ]);
    expect(events).toEqual([
      {
        type: 'message_start',
        message: {
          id: 'msg_chatcmpl-9',
          type: 'message',
          role: 'assistant',
          content: [],
          model: 'acme/chat',
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
        },
      },
      { type: 'ping' },
      { type: 'content_block_start', index: 0, content_block: { type: 'thinking', thinking: '', signature: '' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'Weather, ' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'thinking_delta', thinking: 'so a tool.' } },
      { type: 'content_block_stop', index: 0 },
      { type: 'content_block_start', index: 1, content_block: { type: 'text', text: '' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: 'Checking' } },
      { type: 'content_block_delta', index: 1, delta: { type: 'text_delta', text: ' now.' } },
      { type: 'content_block_stop', index: 1 },
      { type: 'content_block_start', index: 2, content_block: { type: 'tool_use', id: 'call_1', name: 'get_weather', input: {} } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '{"location":' } },
      { type: 'content_block_delta', index: 2, delta: { type: 'input_json_delta', partial_json: '"Paris"}' } },
      { type: 'content_block_stop', index: 2 },
      { type: 'content_block_start', index: 3, content_block: { type: 'tool_use', id: 'call_2', name: 'noop', input: {} } },
      { type: 'content_block_delta', index: 3, delta: { type: 'input_json_delta', partial_json: '{}' } },
      { type: 'content_block_stop', index: 3 },
      {
        type: 'message_delta',
        delta: { stop_reason: 'tool_use', stop_sequence: null },
        usage: { input_tokens: 10, output_tokens: 12, cache_creation_input_tokens: 20, cache_read_input_tokens: 10 },
        meta: { usage: { credits_used: 7, usd_spent: 0.0000035 } },
      },
      { type: 'message_stop' },
    ]);
    expect(settlements).toHaveLength(1);
    expect(settlements[0].reported).toBe(true);
  });

  it('counts the usage itself when the upstream reports none, and settles once', async () => {
    const { events, settlements } = await eventsOf([[chunk({ content: 'Sunny and mild.' }, 'stop')]]);
    expect(settlements).toHaveLength(1);
    expect(settlements[0].reported).toBe(false);
    const delta = events.find((event) => event.type === 'message_delta') as { delta: unknown; usage: { input_tokens: number; output_tokens: number } };
    expect(delta.delta).toEqual({ stop_reason: 'end_turn', stop_sequence: null });
    expect(delta.usage.input_tokens).toBe(settlements[0].usage.prompt_tokens);
    expect(delta.usage.output_tokens).toBe(settlements[0].usage.completion_tokens);
    expect(delta.usage.output_tokens).toBeGreaterThan(0);
  });

  it('writes text deltas of any characters as JSON.stringify writes them, in the order of the fields', async () => {
    const awkward = 'a "quote", a \\ backslash,\na newline, \u2028, é, 😀, \u0000';
    const { events } = await eventsOf([[chunk({ content: awkward }), chunk({ content: '' }), chunk({ content: '</data>' })]]);
    const deltas = events.filter((event) => event.type === 'content_block_delta');
    expect(deltas).toEqual([
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: awkward } },
      { type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: '</data>' } },
    ]);
    expect(Object.keys(deltas[0])).toEqual(['type', 'index', 'delta']);
  });

  it('reports a failure half-way as an error event, having settled what was read', async () => {
    const { events, settlements } = await eventsOf([[chunk({ content: 'Half' })]], new Error('The upstream stream failed.'));
    expect(events.map((event) => event.type)).toEqual(['message_start', 'ping', 'content_block_start', 'content_block_delta', 'error']);
    expect(events[4]).toEqual({ type: 'error', error: { type: 'api_error', message: 'The upstream stream failed.' } });
    expect(settlements).toHaveLength(1);
  });

  it('stops the upstream stream when its reader stops early (the client left)', async () => {
    let returned = false;
    const stream: AsyncIterable<StreamedChunk[]> = {
      [Symbol.asyncIterator]() {
        let sent = 0;
        return {
          next: async () => (sent++ < 100 ? { done: false, value: [{ chunk: chunk({ content: 'word ' }) }] } : { done: true, value: undefined }),
          return: async () => {
            returned = true;
            return { done: true, value: undefined };
          },
        };
      },
    };
    const settlements: StreamSettlement[] = [];
    const generator = messagesStreamEvents(stream, { modelId: 'm', includeUsage: true, prompt, settle: (settlement) => (settlements.push(settlement), { credits_used: 0, usd_spent: 0 }), describeError: String });
    await generator.next();
    await generator.return(undefined);
    expect(returned).toBe(true);
    expect(settlements).toHaveLength(1);
  });
});
