import type { UpstreamChatChunk } from '../provider.types';
import type { ChunkStream } from './chunk-stream';
import { eachOf } from './http-client';

/** The chunks of a stream one by one, for tests; stopping early stops the stream. */
export async function* chunksOf(stream: ChunkStream): AsyncGenerator<UpstreamChatChunk> {
  for await (const item of eachOf(stream)) yield item.chunk;
}
