import type { ResponsesRequestDto } from '@igw/contracts';
import type { StreamedChunk, UpstreamChatChunk } from '@igw/providers';
import type { StreamSettlement } from '../chat/chat-stream';
import { responsesContextOf } from './responses-response';
import { responsesStreamEvents } from './responses-stream';

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
const context = responsesContextOf({ model: 'mini', input: 'What is the weather in Paris?' } as ResponsesRequestDto, new Map([['crm__lookup', { namespace: 'crm', name: 'lookup' }]]));

/** The events a stream of these batches becomes, parsed, with what was settled. */
async function eventsOf(batches: UpstreamChatChunk[][], failWith?: Error) {
  const settlements: StreamSettlement[] = [];
  const stream: AsyncIterable<StreamedChunk[]> = {
    async *[Symbol.asyncIterator]() {
      for (const batch of batches) yield batch.map((item) => ({ chunk: item }));
      if (failWith) throw failWith;
    },
  };
  const generator = responsesStreamEvents(context)(stream, {
    modelId: 'acme/chat',
    includeUsage: false,
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
  events.forEach((event, index) => expect(event.sequence_number).toBe(index));
  return { events, settlements };
}

const any = expect.any(String) as unknown;

describe('the chat stream as the Responses events', () => {
  it('opens an item per run of reasoning, text and each tool call, and ends with response.completed holding the whole response', async () => {
    const { events, settlements } = await eventsOf([
      [chunk({ role: 'assistant', content: '' }), chunk({ reasoning_content: 'Weather, ' }), chunk({ reasoning_content: 'so a tool.' })],
      [chunk({ content: 'Checking' }), chunk({ content: ' now.' })],
      [chunk({ tool_calls: [{ index: 0, id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '' } }] }), chunk({ tool_calls: [{ index: 0, function: { arguments: '{"city":' } }] })],
      [chunk({ tool_calls: [{ index: 0, function: { arguments: '"Paris"}' } }] }), chunk({ tool_calls: [{ index: 1, id: 'call_2', type: 'function', function: { name: 'crm__lookup', arguments: '{}' } }] })],
      [chunk({}, 'tool_calls'), usageChunk({ prompt_tokens: 40, completion_tokens: 12, total_tokens: 52, prompt_tokens_details: { cached_tokens: 10 } } as UpstreamChatChunk['usage'])],
    ]);
    expect(events.map((event) => event.type)).toEqual([
      'response.created',
      'response.in_progress',
      'response.output_item.added',
      'response.reasoning_summary_part.added',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.delta',
      'response.reasoning_summary_text.done',
      'response.reasoning_summary_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.content_part.added',
      'response.output_text.delta',
      'response.output_text.delta',
      'response.output_text.done',
      'response.content_part.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.output_item.added',
      'response.function_call_arguments.delta',
      'response.function_call_arguments.done',
      'response.output_item.done',
      'response.completed',
    ]);
    expect(events[0]).toMatchObject({ response: { id: context.id, object: 'response', status: 'in_progress', model: 'acme/chat', output: [], usage: null } });
    expect(events[10]).toMatchObject({ output_index: 1, content_index: 0, part: { type: 'output_text', text: '' } });
    expect(events[13]).toMatchObject({ output_index: 1, content_index: 0, text: 'Checking now.' });
    expect(events[16]).toMatchObject({ output_index: 2, item: { type: 'function_call', status: 'in_progress', call_id: 'call_1', name: 'get_weather', arguments: '' } });
    expect(events[19]).toMatchObject({ output_index: 2, name: 'get_weather', arguments: '{"city":"Paris"}' });
    expect(events[24]).toMatchObject({ output_index: 3, item: { type: 'function_call', call_id: 'call_2', name: 'lookup', namespace: 'crm', arguments: '{}' } });
    const completed = events[25].response as Record<string, unknown>;
    expect(completed).toMatchObject({
      id: context.id,
      status: 'completed',
      output: [
        { id: any, type: 'reasoning', summary: [{ type: 'summary_text', text: 'Weather, so a tool.' }] },
        { id: any, type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'output_text', text: 'Checking now.', annotations: [], logprobs: [] }] },
        { id: any, type: 'function_call', status: 'completed', call_id: 'call_1', name: 'get_weather', arguments: '{"city":"Paris"}' },
        { id: any, type: 'function_call', status: 'completed', call_id: 'call_2', name: 'lookup', namespace: 'crm', arguments: '{}' },
      ],
      usage: { input_tokens: 40, input_tokens_details: { cached_tokens: 10 }, output_tokens: 12, output_tokens_details: { reasoning_tokens: 0 }, total_tokens: 52 },
      meta: { usage: { credits_used: 7, usd_spent: 0.0000035 } },
    });
    // Item ids stay the same from their added event to the final response.
    expect((completed.output as Array<{ id: string }>).map((item) => item.id)).toEqual([2, 9, 16, 21].map((index) => (events[index].item as { id: string }).id));
    expect(settlements).toEqual([{ usage: { prompt_tokens: 40, completion_tokens: 12, total_tokens: 52, prompt_tokens_details: { cached_tokens: 10 } }, reported: true }]);
  });

  it('says incomplete for the token limit in response.completed, and counts the usage when the upstream reports none', async () => {
    const { events, settlements } = await eventsOf([[chunk({ content: 'Hello' })], [chunk({}, 'length')]]);
    expect(events.at(-1)).toMatchObject({ type: 'response.completed', response: { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } } });
    expect(settlements).toHaveLength(1);
    expect(settlements[0].reported).toBe(false);
    expect(settlements[0].usage.completion_tokens).toBeGreaterThan(0);
    expect((events.at(-1)!.response as { usage: { output_tokens: number } }).usage.output_tokens).toBe(settlements[0].usage.completion_tokens);
  });

  it('writes text deltas of any characters as JSON.stringify writes them, in the order of the fields', async () => {
    const awkward = 'a "quote", a \\ backslash,\na newline, \u2028, é, 😀, \u0000';
    const { events } = await eventsOf([[chunk({ content: awkward }), chunk({ content: '</data>' })]]);
    const deltas = events.filter((event) => event.type === 'response.output_text.delta');
    expect(deltas.map((event) => event.delta)).toEqual([awkward, '</data>']);
    expect(Object.keys(deltas[0])).toEqual(['type', 'sequence_number', 'item_id', 'output_index', 'content_index', 'delta', 'logprobs']);
    expect(deltas[1]).toMatchObject({ item_id: deltas[0].item_id, output_index: 0, content_index: 0, logprobs: [] });
    const [created, inProgress] = events;
    expect([created.type, inProgress.type]).toEqual(['response.created', 'response.in_progress']);
    expect(inProgress.response).toEqual(created.response);
    expect(Object.keys(created)).toEqual(['type', 'sequence_number', 'response']);
  });

  it('ends a stream that fails half-way with an error event, settled once', async () => {
    const { events, settlements } = await eventsOf([[chunk({ content: 'Hel' })]], new Error('upstream went away'));
    expect(events.map((event) => event.type)).toEqual(['response.created', 'response.in_progress', 'response.output_item.added', 'response.content_part.added', 'response.output_text.delta', 'error']);
    expect(events.at(-1)).toMatchObject({ code: 'upstream_error', message: 'upstream went away' });
    expect(settlements).toHaveLength(1);
  });

  it('stops reading the upstream when its reader stops (the client left), settled once', async () => {
    let returned = false;
    const settlements: StreamSettlement[] = [];
    const stream: AsyncIterable<StreamedChunk[]> = {
      [Symbol.asyncIterator]: () => ({
        next: () => Promise.resolve({ done: false, value: [{ chunk: chunk({ content: 'word ' }) }] }),
        return: () => {
          returned = true;
          return Promise.resolve({ done: true, value: undefined });
        },
      }),
    };
    const generator = responsesStreamEvents(context)(stream, { modelId: 'acme/chat', includeUsage: false, prompt, settle: (settlement) => (settlements.push(settlement), { credits_used: 1, usd_spent: 0 }), describeError: String });
    await generator.next();
    await generator.next();
    await generator.return(undefined);
    expect(returned).toBe(true);
    expect(settlements).toHaveLength(1);
  });
});
