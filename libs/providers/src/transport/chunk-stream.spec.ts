import type { UpstreamChatChunk } from '../provider.types';
import { chunkBatches, ChunkWriter, type ChunkTranslator, type StreamedChunk } from './chunk-stream';
import type { SseEvent } from './sse';

const chunkOf = (content: string): UpstreamChatChunk => ({ id: 'c', object: 'chat.completion.chunk', created: 1, model: 'm', choices: [{ index: 0, delta: { content }, finish_reason: null }] });

/** Events `a`, `b` ... each make the chunk of that content (`empty`: none; `bad`: a failure; `stop`: the stream's end), passed on with its text; the body's end makes `END`. */
const translator: ChunkTranslator = {
  read(event, emit) {
    if (event.data === 'stop') return true;
    if (event.data === 'bad') throw new Error('bad event');
    if (event.data !== 'empty') emit(chunkOf(event.data), `"${event.data}"`);
  },
  end(emit) {
    emit(chunkOf('END'));
  },
};

/** Reads of the connection, their events by data; `stopped` tells whether the reader stopped them. */
function reads(...batches: string[][]): AsyncIterable<SseEvent[]> & { stopped: boolean } {
  const source = {
    stopped: false,
    async *[Symbol.asyncIterator](): AsyncGenerator<SseEvent[]> {
      try {
        for (const batch of batches) yield batch.map((data) => ({ data }));
      } finally {
        source.stopped = true;
      }
    },
  };
  return source;
}

async function contents(events: AsyncIterable<SseEvent[]>): Promise<Array<Array<[string | null | undefined, string | undefined]>>> {
  const batches: Array<Array<[string | null | undefined, string | undefined]>> = [];
  for await (const batch of chunkBatches(events, translator)) batches.push(batch.map(({ chunk, raw }) => [chunk.choices[0].delta.content, raw]));
  return batches;
}

describe('chunkBatches', () => {
  it('gives one batch per read with the text the translator passed on, skips reads that give nothing, and ends with the closing chunks', async () => {
    expect(await contents(reads(['a', 'b'], ['empty'], ['c']))).toEqual([
      [
        ['a', '"a"'],
        ['b', '"b"'],
      ],
      [['c', '"c"']],
      [['END', undefined]],
    ]);
  });

  it('stops reading at an event that closes the stream, with no closing chunks', async () => {
    const events = reads(['a', 'stop', 'never'], ['never']);
    expect(await contents(events)).toEqual([[['a', '"a"']]]);
    expect(events.stopped).toBe(true);
  });

  it('hands out the chunks of a read translated before a failure, then throws it, and stops the reads', async () => {
    const events = reads(['a', 'bad', 'c'], ['never']);
    const batches: StreamedChunk[][] = [];
    await expect(
      (async () => {
        for await (const batch of chunkBatches(events, translator)) batches.push([...batch]);
      })(),
    ).rejects.toThrow('bad event');
    expect(batches.map((batch) => batch.map(({ chunk }) => chunk.choices[0].delta.content))).toEqual([['a']]);
    expect(events.stopped).toBe(true);
  });

  it('stops the reads when its reader stops', async () => {
    const events = reads(['a'], ['b'], ['c']);
    for await (const batch of chunkBatches(events, translator)) if (batch[0].chunk.choices[0].delta.content === 'b') break;
    expect(events.stopped).toBe(true);
  });
});

describe('ChunkWriter', () => {
  const plain = (content: string, tail = ',"usage":null') =>
    `{"id":"c1","object":"chat.completion.chunk","created":1,"model":"gpt-4o-mini","system_fingerprint":"fp","choices":[{"index":0,"delta":{"content":"${content}"},"finish_reason":null}]${tail}}`;
  const texts = [
    plain('\\u00e9t\\u00e9'),
    plain('no usage field', ''),
    plain('usage not last', ',"usage":null,"x":1'),
    // A model named inside the choices before the chunk's own, a model written with escapes, named twice.
    '{"id":"c1","choices":[{"index":0,"delta":{"content":"a","model":"inner"},"finish_reason":null}],"model":"gpt-4o-mini","usage":null}',
    '{"id":"c1","model":"gpt\\u002d4o-mini","choices":[{"index":0,"delta":{"content":"b"},"finish_reason":null}],"usage":null}',
    '{"id":"c1","model":"gpt-4o-mini","model":"other","choices":[{"index":0,"delta":{"content":"c"},"finish_reason":null}],"usage":null}',
    '{"id":"c1","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"c"},"finish_reason":null}],"model":"gpt-4o-mini","usage":null}',
    // The chunk's own key written with an escape, only a nested one plainly.
    '{"id":"c1","choices":[{"index":0,"delta":{"content":"c","model":"gpt-4o-mini"},"finish_reason":null}],"mod\\u0065l":"gpt-4o-mini","usage":null}',
    // Usage named twice: the last one counts.
    '{"id":"c1","model":"gpt-4o-mini","choices":[{"index":0,"delta":{"content":"e"},"finish_reason":null}],"usage":{"prompt_tokens":1},"usage":null}',
    '{"id":"c1", "model" : "gpt-4o-mini", "choices":[{"index":0,"delta":{"content":"d"},"finish_reason":null}], "usage" : null}',
    '{"id":"c1","model":"gpt-4o-mini","choices":[],"usage":{"prompt_tokens":3,"completion_tokens":4,"total_tokens":7}}',
  ];
  const written = (keepUsage: boolean, withText: boolean) => {
    const writer = new ChunkWriter('catalogue-id', keepUsage);
    return texts.map((text) => writer.json({ chunk: JSON.parse(text) as UpstreamChatChunk, raw: withText ? text : undefined }));
  };

  it.each([true, false])('writes from the upstream text what serializing the chunk writes (usage kept: %s)', (keepUsage) => {
    const edited = written(keepUsage, true);
    expect(edited.map((text) => JSON.parse(text))).toEqual(written(keepUsage, false).map((text) => JSON.parse(text)));
    // The first chunk left as the upstream wrote it, only renamed (its escapes kept).
    expect(edited[0]).toBe(texts[0].replace('"model":"gpt-4o-mini"', '"model":"catalogue-id"').replace(keepUsage ? '' : ',"usage":null', ''));
    // Serialized: the renamed chunk, its usage dropped unless kept.
    expect(JSON.parse(edited.at(-1)!)).toEqual({ ...JSON.parse(texts.at(-1)!), model: 'catalogue-id', ...(keepUsage ? {} : { usage: undefined }) });
  });
});
