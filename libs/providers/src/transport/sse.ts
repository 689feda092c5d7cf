import { StringDecoder } from 'node:string_decoder';

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
 * Parses a server-sent events byte stream incrementally (LF or CRLF line ends, multi-line
 * data, comments), synchronously: `push` takes the next piece of the body and returns the
 * events it completed, so a reader handles all the events of one network read in one go.
 */
export class SseParser {
  private readonly maxEventChars: number;
  /** UTF-8 across piece boundaries (a character cut between two reads is held back); several times cheaper than TextDecoder's streaming mode. */
  private readonly decoder = new StringDecoder('utf8');
  /** Nothing decoded yet: a byte order mark opening the stream is skipped, as the spec (and TextDecoder) does. */
  private atStart = true;
  private buffer = '';
  /** Where to look for the next line end: a long line arriving in pieces is scanned once, not once per piece. */
  private searchFrom = 0;
  private event: string | undefined;
  private data: string | undefined;
  private dataChars = 0;
  /** An event too large, met after others of the same piece: those are returned first, this thrown next. */
  private failure: SseEventTooLargeError | undefined;

  constructor(options: SseOptions = {}) {
    this.maxEventChars = options.maxEventChars ?? Infinity;
  }

  /** The events completed by this piece of the body (often none, or several). Throws SseEventTooLargeError. */
  push(piece: Uint8Array | string): SseEvent[] {
    if (this.failure) throw this.failure;
    const events: SseEvent[] = [];
    try {
      this.read(piece, events);
    } catch (error) {
      if (events.length === 0 || !(error instanceof SseEventTooLargeError)) throw error;
      this.failure = error;
    }
    return events;
  }

  private read(piece: Uint8Array | string, events: SseEvent[]): void {
    let text = typeof piece === 'string' ? piece : this.decoder.write(piece);
    if (this.atStart && text !== '') {
      this.atStart = false;
      if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
    }
    const buffer = this.buffer + text;
    let lineStart = 0;
    let newline: number;
    while ((newline = buffer.indexOf('\n', this.searchFrom)) >= 0) {
      const lineEnd = newline > lineStart && buffer.charCodeAt(newline - 1) === 13 ? newline - 1 : newline;
      // A data line (nearly every line) is read where it is: its value is the one string made of it.
      if (lineEnd > lineStart + 4 && isDataField(buffer, lineStart)) this.readData(buffer.slice(lineStart + (buffer.charCodeAt(lineStart + 5) === 32 && lineEnd > lineStart + 5 ? 6 : 5), lineEnd));
      else this.readLine(buffer.slice(lineStart, lineEnd), events);
      lineStart = newline + 1;
      this.searchFrom = lineStart;
    }
    this.buffer = lineStart === 0 ? buffer : buffer.slice(lineStart);
    this.searchFrom = this.buffer.length;
    if (this.dataChars + this.buffer.length > this.maxEventChars) throw new SseEventTooLargeError(this.maxEventChars);
  }

  /** At the end of the body: a stream cut after its last line but before the blank line still delivers that event. */
  end(): SseEvent[] {
    if (this.failure) throw this.failure;
    const last = this.buffer.replace(/\r$/, '');
    this.buffer = '';
    this.searchFrom = 0;
    if (last.startsWith('data:')) this.addData(last.slice(last[5] === ' ' ? 6 : 5));
    const events: SseEvent[] = [];
    if (this.data !== undefined) events.push({ event: this.event, data: this.data });
    this.data = undefined;
    return events;
  }

  private readLine(line: string, events: SseEvent[]): void {
    if (line === '') {
      if (this.data !== undefined) events.push({ event: this.event, data: this.data });
      this.event = undefined;
      this.data = undefined;
      this.dataChars = 0;
      return;
    }
    if (line.charCodeAt(0) === 58 /* : */) return;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + (line.charCodeAt(colon + 1) === 32 ? 2 : 1));
    if (field === 'data') this.readData(value);
    else if (field === 'event') this.event = value;
  }

  private readData(value: string): void {
    this.addData(value);
    if (this.dataChars > this.maxEventChars) throw new SseEventTooLargeError(this.maxEventChars);
  }

  private addData(value: string): void {
    this.data = this.data === undefined ? value : `${this.data}\n${value}`;
    this.dataChars += value.length + 1;
  }
}

/** Whether the line at `at` starts with `data:` (compared by character: startsWith costs more). */
function isDataField(text: string, at: number): boolean {
  return text.charCodeAt(at) === 100 && text.charCodeAt(at + 1) === 97 && text.charCodeAt(at + 2) === 116 && text.charCodeAt(at + 3) === 97 && text.charCodeAt(at + 4) === 58;
}

/** The events of a server-sent events byte stream, one by one as their blank lines arrive (see SseParser). */
export async function* parseSse(body: AsyncIterable<Uint8Array | string>, options: SseOptions = {}): AsyncGenerator<SseEvent> {
  const parser = new SseParser(options);
  for await (const piece of body) yield* parser.push(piece);
  yield* parser.end();
}
