import type { UpstreamChatChunk } from '../provider.types';
import type { ChunkStream } from './chunk-stream';

/** The items of batches one by one, for tests; stopping early stops the batches. */
export async function* eachOf<T>(batches: AsyncIterable<readonly T[]>): AsyncGenerator<T> {
  for await (const batch of batches) yield* batch;
}

/** The chunks of a stream one by one, for tests; stopping early stops the stream. */
export async function* chunksOf(stream: ChunkStream): AsyncGenerator<UpstreamChatChunk> {
  for await (const item of eachOf(stream)) yield item.chunk;
}
