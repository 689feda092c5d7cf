import { StringDecoder } from 'node:string_decoder';
import { createParser, type EventSourceParser } from 'eventsource-parser';

/** One server-sent event: the `event` field when present and the joined `data` lines. */
export interface SseEvent {
  event?: string;
  data: string;
}

export interface SseOptions {
  /**
   * The most characters one event may hold (its data lines and its unfinished line together);
   * past it the parser throws SseEventTooLargeError instead of buffering on.
   */
  maxEventChars?: number;
}

/** One event (or one line without its end) grew past `maxEventChars`. */
export class SseEventTooLargeError extends Error {
  constructor(readonly maxEventChars: number) {
    super(`a server-sent event exceeded ${maxEventChars} characters`);
    this.name = 'SseEventTooLargeError';
  }
}

/**
 * Parses a server-sent events byte stream incrementally with `eventsource-parser`, synchronously:
 * `push` takes the next piece of the body and returns the events it completed, so a reader
 * handles all the events of one network read in one go. The pieces are decoded here (a UTF-8
 * character cut between two reads is held back; StringDecoder is several times cheaper than
 * TextDecoder's streaming mode) and a byte order mark opening the stream is skipped.
 */
export class SseParser {
  private readonly decoder = new StringDecoder('utf8');
  private readonly parser: EventSourceParser;
  /** Nothing decoded yet: a byte order mark opening the stream is skipped, as the spec (and TextDecoder) does. */
  private atStart = true;
  /** The events the piece being read completed. */
  private events: SseEvent[] = [];
  /** An event too large, met after others of the same piece: those are returned first, this thrown next. */
  private failure: SseEventTooLargeError | undefined;

  constructor(options: SseOptions = {}) {
    const maxEventChars = options.maxEventChars ?? Infinity;
    this.parser = createParser({
      // The library bounds what it holds between pieces (an unfinished line and the data lines of
      // an event not yet ended); an event begun and ended within one piece is bounded here.
      maxBufferSize: Number.isFinite(maxEventChars) ? maxEventChars : undefined,
      onEvent: (event) => {
        if (event.data.length > maxEventChars) throw new SseEventTooLargeError(maxEventChars);
        this.events.push(event);
      },
      // Unknown fields and malformed `retry` values are ignored, as an EventSource does.
      onError: (error) => {
        if (error.type === 'max-buffer-size-exceeded') throw new SseEventTooLargeError(maxEventChars);
      },
    });
  }

  /** The events completed by this piece of the body (often none, or several). Throws SseEventTooLargeError. */
  push(piece: Uint8Array | string): SseEvent[] {
    if (this.failure) throw this.failure;
    let text = typeof piece === 'string' ? piece : this.decoder.write(piece);
    if (this.atStart) {
      if (text === '') return [];
      this.atStart = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    return this.read(text);
  }

  /** At the end of the body: a stream cut after its last line but before the blank line still delivers that event. */
  end(): SseEvent[] {
    if (this.failure) throw this.failure;
    return this.read('\n\n');
  }

  private read(text: string): SseEvent[] {
    try {
      this.parser.feed(text);
    } catch (error) {
      if (!(error instanceof SseEventTooLargeError)) throw error;
      this.failure = error;
      if (this.events.length === 0) throw error;
    }
    const events = this.events;
    this.events = [];
    return events;
  }
}

/** The events of a server-sent events byte stream, one by one as their blank lines arrive (see SseParser). */
export async function* parseSse(body: AsyncIterable<Uint8Array | string>, options: SseOptions = {}): AsyncGenerator<SseEvent> {
  const parser = new SseParser(options);
  for await (const piece of body) yield* parser.push(piece);
  yield* parser.end();
}
