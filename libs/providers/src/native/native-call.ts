import type { UpstreamChatChunk, UpstreamUsage } from '../provider.types';
import { openEventBatches, type JsonRequest } from '../transport/http-client';
import type { SseEvent } from '../transport/sse';

// A call in the provider's own API (Anthropic's Messages, OpenAI's Responses) rather than the
// gateway's chat shape: the client's request goes up as it came (model renamed), and the answer
// comes back as it came. The gateway still prices it from the usage, and counts what a stream
// generated, so each native answer and event carries the usage and chat-shaped pieces too.

/** A whole native answer: the provider's JSON as it came, and its usage in the gateway's terms. */
export interface NativeAnswer {
  body: Record<string, unknown>;
  usage: UpstreamUsage;
}

/** One event of a native stream, as it came, with what the gateway reads of it. */
export interface NativeEvent {
  /** The SSE `event:` name, when the upstream sent one. */
  name?: string;
  /** The upstream's own JSON text of the event. */
  data: string;
  parsed: Record<string, unknown>;
  /** What the event generated, chat-shaped, for a tokenizer count of a stream its client left. */
  chunks: UpstreamChatChunk[];
  /** The usage the upstream reported, on the event that reports it (the last of the answer). */
  usage?: UpstreamUsage;
}

/** The events of a native stream, in batches (those of one read); stopping early (`return`) ends the upstream call. */
export type NativeEventStream = AsyncIterable<readonly NativeEvent[]>;

/** A provider's reading of its own stream events. */
export interface NativeEventReader {
  /** The event read; throws an Upstream*Error for one that reports a failure or is malformed. */
  read(event: SseEvent): NativeEvent;
  /** The body ended: throws when the stream was cut before its closing event. */
  end(): void;
}

/**
 * POSTs the call and opens its answer as native events. Resolves once the first events were
 * read, rejecting for a failure among them (Anthropic reports overload as an event right after
 * its 200 head): the caller can still fall back, since nothing reached the client.
 */
export async function openNativeStream(call: JsonRequest, reader: NativeEventReader): Promise<NativeEventStream> {
  const events = (await openEventBatches(call))[Symbol.asyncIterator]();
  const stream = new NativeBatches(events, reader);
  const first = await stream.next();
  return stream.withFirst(first);
}

class NativeBatches implements AsyncIterableIterator<readonly NativeEvent[]> {
  private ahead: IteratorResult<readonly NativeEvent[]> | undefined;
  private over = false;

  constructor(
    private readonly events: AsyncIterator<SseEvent[]>,
    private readonly reader: NativeEventReader,
  ) {}

  [Symbol.asyncIterator](): this {
    return this;
  }

  withFirst(first: IteratorResult<readonly NativeEvent[]>): this {
    this.ahead = first;
    return this;
  }

  async next(): Promise<IteratorResult<readonly NativeEvent[]>> {
    const ahead = this.ahead;
    if (ahead !== undefined) {
      this.ahead = undefined;
      return ahead;
    }
    while (!this.over) {
      let result: IteratorResult<SseEvent[]>;
      try {
        result = await this.events.next();
      } catch (error) {
        this.over = true;
        throw error;
      }
      if (result.done) {
        this.over = true;
        this.reader.end();
        break;
      }
      try {
        const batch = result.value.map((event) => this.reader.read(event));
        if (batch.length > 0) return { value: batch, done: false };
      } catch (error) {
        this.over = true;
        void this.events.return?.();
        throw error;
      }
    }
    return { value: undefined, done: true };
  }

  async return(): Promise<IteratorResult<readonly NativeEvent[]>> {
    this.over = true;
    this.ahead = undefined;
    await this.events.return?.();
    return { value: undefined, done: true };
  }
}

/** Parses an event's JSON data; the provider's reader says what a malformed one is. */
export function parsedEvent(data: string): Record<string, unknown> | undefined {
  try {
    const parsed: unknown = JSON.parse(data);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}
