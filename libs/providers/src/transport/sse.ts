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
 * data, comments). Yields each event as soon as its blank line arrives.
 */
export async function* parseSse(body: AsyncIterable<Uint8Array | string>, options: SseOptions = {}): AsyncGenerator<SseEvent> {
  const maxEventChars = options.maxEventChars ?? Infinity;
  const decoder = new TextDecoder();
  let buffer = '';
  // Where to look for the next line end: a long line arriving in pieces is scanned once, not once per piece.
  let searchFrom = 0;
  let event: string | undefined;
  let data: string[] = [];
  let dataChars = 0;
  for await (const piece of body) {
    buffer += typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n', searchFrom)) >= 0) {
      const line = buffer.slice(0, newline > 0 && buffer[newline - 1] === '\r' ? newline - 1 : newline);
      buffer = buffer.slice(newline + 1);
      searchFrom = 0;
      if (line === '') {
        if (data.length > 0) yield { event, data: data.join('\n') };
        event = undefined;
        data = [];
        dataChars = 0;
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
      if (field === 'data') {
        data.push(value);
        dataChars += value.length + 1;
        if (dataChars > maxEventChars) throw new SseEventTooLargeError(maxEventChars);
      } else if (field === 'event') event = value;
    }
    searchFrom = buffer.length;
    if (dataChars + buffer.length > maxEventChars) throw new SseEventTooLargeError(maxEventChars);
  }
  // A stream cut after its last line but before the blank line still delivers that event.
  const last = buffer.replace(/\r$/, '');
  if (last.startsWith('data:')) data.push(last.slice(last[5] === ' ' ? 6 : 5));
  if (data.length > 0) yield { event, data: data.join('\n') };
}
