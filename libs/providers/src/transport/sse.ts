/** One server-sent event: the `event` field when present and the joined `data` lines. */
export interface SseEvent {
  event?: string;
  data: string;
}

/**
 * Parses a server-sent events byte stream incrementally (LF or CRLF line ends, multi-line
 * data, comments). Yields each event as soon as its blank line arrives.
 */
export async function* parseSse(body: AsyncIterable<Uint8Array | string>): AsyncGenerator<SseEvent> {
  const decoder = new TextDecoder();
  let buffer = '';
  let event: string | undefined;
  let data: string[] = [];
  for await (const piece of body) {
    buffer += typeof piece === 'string' ? piece : decoder.decode(piece, { stream: true });
    let newline: number;
    while ((newline = buffer.indexOf('\n')) >= 0) {
      const line = buffer.slice(0, newline > 0 && buffer[newline - 1] === '\r' ? newline - 1 : newline);
      buffer = buffer.slice(newline + 1);
      if (line === '') {
        if (data.length > 0) yield { event, data: data.join('\n') };
        event = undefined;
        data = [];
        continue;
      }
      if (line.startsWith(':')) continue;
      const colon = line.indexOf(':');
      const field = colon < 0 ? line : line.slice(0, colon);
      const value = colon < 0 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
      if (field === 'data') data.push(value);
      else if (field === 'event') event = value;
    }
  }
  // A stream cut after its last line but before the blank line still delivers that event.
  const last = buffer.replace(/\r$/, '');
  if (last.startsWith('data:')) data.push(last.slice(last[5] === ' ' ? 6 : 5));
  if (data.length > 0) yield { event, data: data.join('\n') };
}
