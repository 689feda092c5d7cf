import type { UpstreamChatChunk } from '../provider.types';
import { openEventBatches, type JsonRequest } from './http-client';
import type { SseEvent } from './sse';

// A streamed chat completion, from the upstream's events to the client's text: adapters only
// translate events into chunks (ChunkTranslator); batching per network read, stopping,
// failures and forwarding the upstream's own text are this module's.

/**
 * One chunk of a streamed chat completion. `raw` is the upstream's own JSON text of it when the
 * adapter passed the upstream's chunk on unchanged (as the OpenAI-format adapters do), so that
 * it can be forwarded as that text (ChunkWriter) rather than serialized again.
 */
export interface StreamedChunk {
  chunk: UpstreamChatChunk;
  raw?: string;
}

/**
 * The chunks of a stream in batches: those of one read of the upstream connection together, so
 * a reader spends one promise per read rather than per chunk. Batches are never empty; the last
 * chunk carries `usage`. Stopping early (`return`) ends the upstream call.
 */
export type ChunkStream = AsyncIterable<readonly StreamedChunk[]>;

/** Passes one chunk on, with the upstream's own text of it when the chunk is that text parsed and unchanged. */
export type EmitChunk = (chunk: UpstreamChatChunk, raw?: string) => void;

/** What a provider's streaming is made of: the chunks each event of its stream makes. */
export interface ChunkTranslator {
  /**
   * Emits the chunks `event` makes, in order (often one, maybe none). Returns true when the event
   * closes the stream (OpenAI's `[DONE]`): nothing after it is read. Throws an Upstream*Error
   * for an event that is malformed or reports a failure.
   */
  read(event: SseEvent, emit: EmitChunk): boolean | void;
  /** The body ended with no event closing it: emits the chunks that close the stream, or throws for a stream cut short. */
  end(emit: EmitChunk): void;
}

export interface ChunkStreamOptions {
  /**
   * Resolve only once the stream's first chunks were read (or it ended), rejecting on a failure
   * before or among them: an upstream that reports overload as an event right after its 200 head
   * (Anthropic) is then refused like an error status, while the caller can still fall back
   * (nothing reached the client yet).
   */
  awaitFirstChunks?: boolean;
}

/**
 * POSTs the call and opens its answer, a server-sent event stream, as chunks translated by
 * `translator`. Resolves once the upstream answered 2xx (an error status rejects with its
 * reason, before anything was streamed).
 */
export async function openChunkStream(call: JsonRequest, translator: ChunkTranslator, options: ChunkStreamOptions = {}): Promise<ChunkStream> {
  const stream = new ChunkBatches((await openEventBatches(call))[Symbol.asyncIterator](), translator);
  if (options.awaitFirstChunks) await stream.readFirst();
  return stream;
}

/**
 * The chunks `translator` makes of batches of events, a batch of chunks per batch of events
 * (reads that make none are skipped). The chunks translated before a failure are handed out
 * before it; a failure or an event closing the stream stops the events.
 */
export function chunkBatches(events: AsyncIterable<SseEvent[]>, translator: ChunkTranslator): ChunkStream {
  return new ChunkBatches(events[Symbol.asyncIterator](), translator);
}

const OVER: IteratorReturnResult<undefined> = { value: undefined, done: true };

/** chunkBatches as a hand-written iterator: an async generator would cost several promises per batch. */
class ChunkBatches implements AsyncIterableIterator<readonly StreamedChunk[]> {
  /** The chunks of the read being translated. */
  private batch: StreamedChunk[] = [];
  /** The first batch, read ahead (readFirst), handed out first. */
  private ahead: IteratorResult<readonly StreamedChunk[]> | undefined;
  /** A failure met after chunks of the same read: thrown once they are handed out. */
  private failure: { error: unknown } | undefined;
  /** Nothing more is read: the stream closed or ended, failed, or its reader stopped. */
  private over = false;
  // Every item has both fields: one object shape for the reader.
  private readonly emit: EmitChunk = (chunk, raw) => void this.batch.push({ chunk, raw });
  private readonly translate = (result: IteratorResult<SseEvent[]>) => this.translated(result);
  private readonly failed = (error: unknown): never => {
    this.over = true;
    throw error;
  };

  constructor(
    private readonly events: AsyncIterator<SseEvent[]>,
    private readonly translator: ChunkTranslator,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  next(): Promise<IteratorResult<readonly StreamedChunk[]>> {
    const ahead = this.ahead;
    if (ahead !== undefined) {
      this.ahead = undefined;
      return Promise.resolve(ahead);
    }
    const failure = this.failure;
    if (failure !== undefined) {
      this.failure = undefined;
      return Promise.reject(failure.error);
    }
    if (this.over) return Promise.resolve(OVER);
    return this.events.next().then(this.translate, this.failed);
  }

  return(): Promise<IteratorResult<readonly StreamedChunk[]>> {
    this.over = true;
    this.ahead = undefined;
    this.failure = undefined;
    return Promise.resolve(this.events.return?.()).then(() => OVER);
  }

  /** Reads the first batch ahead; a failure before it or among its chunks rejects (the events stopped). */
  async readFirst(): Promise<void> {
    const first = await this.next();
    const failure = this.failure;
    if (failure !== undefined) {
      this.failure = undefined;
      throw failure.error;
    }
    this.ahead = first;
  }

  private translated(result: IteratorResult<SseEvent[]>): IteratorResult<readonly StreamedChunk[]> | Promise<IteratorResult<readonly StreamedChunk[]>> {
    try {
      if (result.done) {
        this.over = true;
        this.translator.end(this.emit);
      } else {
        const events = result.value;
        for (let index = 0; index < events.length && !this.over; index++) if (this.translator.read(events[index], this.emit) === true) this.over = true;
        // Closed by an event: the rest of the answer, usually in already, is left unread and the
        // connection serves the next call.
        if (this.over) void this.events.return?.();
      }
    } catch (error) {
      return this.failAfterBatch(error);
    }
    if (this.batch.length === 0) return this.over ? OVER : this.next();
    return this.handOut();
  }

  /** Stops the events (closing the connection); the chunks of the read so far go out before the failure. */
  private failAfterBatch(error: unknown): IteratorResult<readonly StreamedChunk[]> | Promise<never> {
    this.over = true;
    const stopped = this.events.return?.();
    if (this.batch.length > 0) {
      this.failure = { error };
      return this.handOut();
    }
    return Promise.resolve(stopped).then(() => Promise.reject(error));
  }

  private handOut(): IteratorResult<readonly StreamedChunk[]> {
    const batch = this.batch;
    this.batch = [];
    return { value: batch, done: false };
  }
}

const USAGE_NULL_LAST = ',"usage":null}';

/**
 * Writes a stream's chunks as JSON for its client: the model renamed (the catalogue's id for the
 * upstream's name) and, unless the client keeps usage, `usage` left out. A chunk that came with
 * its upstream text and has no usage is written as that text edited, when the edit gives what
 * serializing the chunk would (the same JSON, if not always the same bytes); any other chunk is
 * serialized.
 */
export class ChunkWriter {
  private readonly renamed: string;
  private upstreamModel: string | undefined;
  private upstreamMember = '';

  constructor(
    private readonly model: string,
    private readonly keepUsage: boolean,
  ) {
    this.renamed = `"model":${JSON.stringify(model)}`;
  }

  /** The chunk's JSON. A chunk serialized is the stream's own (parsed or translated for it alone): it is renamed in place. */
  json({ chunk, raw }: StreamedChunk): string {
    const edited = raw === undefined || chunk.usage ? undefined : this.edited(raw, chunk);
    if (edited !== undefined) return edited;
    // In place keeps the chunk's fields in their order without copying it.
    chunk.model = this.model;
    // `undefined` leaves the field out of the JSON just as `delete` would, without turning
    // the object into a slow dictionary before it is serialised.
    if (!this.keepUsage) chunk.usage = undefined;
    return JSON.stringify(chunk);
  }

  /**
   * `raw` renamed (and its `usage: null` dropped for a client that does not keep usage), or
   * undefined where it is not plainly enough written to be sure: its `model` key not the first
   * thing of its kind at the top level, written otherwise than JSON.stringify would, named
   * twice; its `usage` not last.
   */
  private edited(raw: string, chunk: UpstreamChatChunk): string | undefined {
    if (typeof chunk.model !== 'string') return undefined;
    if (chunk.model !== this.upstreamModel) {
      this.upstreamModel = chunk.model;
      this.upstreamMember = `"model":${JSON.stringify(chunk.model)}`;
    }
    const at = raw.indexOf('"model":');
    const valueEnd = at + this.upstreamMember.length;
    // (Two strings compared: V8's startsWith is several times slower on a long text.)
    if (at < 1 || raw.slice(at, valueEnd) !== this.upstreamMember) return undefined;
    // A quote after `{` or `,` opens a string, here a key; with no object or array opened
    // between the chunk's own brace and it, the key is the chunk's own.
    const previous = raw.charCodeAt(at - 1);
    if ((previous !== 44 /* , */ && previous !== 123) /* { */ || raw.charCodeAt(0) !== 123) return undefined;
    const nested = raw.indexOf('{', 1);
    const list = raw.indexOf('[');
    if ((nested !== -1 && nested < at) || (list !== -1 && list < at)) return undefined;
    // JSON.parse takes the last of keys named twice: there must be no other.
    if (raw.indexOf('"model":', valueEnd) !== -1) return undefined;
    if (this.keepUsage || chunk.usage === undefined) return raw.slice(0, at) + this.renamed + raw.slice(valueEnd);
    // `"usage":null` as the last member (just before the closing brace) is the chunk's own.
    const usageAt = raw.length - USAGE_NULL_LAST.length;
    if (usageAt < valueEnd || raw.slice(usageAt) !== USAGE_NULL_LAST || raw.indexOf('"usage":') !== usageAt + 1) return undefined;
    return `${raw.slice(0, at)}${this.renamed}${raw.slice(valueEnd, usageAt)}}`;
  }
}
