import { parseSse, SseEventTooLargeError, SseParser } from './sse';

async function collect(pieces: Iterable<string>, maxEventChars?: number) {
  async function* source() {
    for (const piece of pieces) yield new TextEncoder().encode(piece);
  }
  const events = [];
  for await (const event of parseSse(source(), { maxEventChars })) events.push(event);
  return events;
}

/** `data: ` and then `piece` 1,000 times: a line that does not end (soon). */
function* longLine(piece: string): Generator<string> {
  yield 'data: ';
  for (let count = 0; count < 1_000; count++) yield piece;
}

describe('parseSse', () => {
  it('yields events split across arbitrary chunk boundaries', async () => {
    expect(await collect(['data: {"a"', ':1}\n', '\ndata: [DONE]\n\n'])).toEqual([{ event: undefined, data: '{"a":1}' }, { event: undefined, data: '[DONE]' }]);
  });

  it('reads event names, CRLF line ends, multi-line data and ignores comments', async () => {
    expect(await collect([': keep-alive\r\n\r\nevent: message_start\r\ndata: line1\r\ndata: line2\r\n\r\n'])).toEqual([
      { event: 'message_start', data: 'line1\nline2' },
    ]);
  });

  it('delivers a last event that lacks its closing blank line', async () => {
    expect(await collect(['data: tail'])).toEqual([{ event: undefined, data: 'tail' }]);
  });

  it('throws once one line grows past maxEventChars, having read only about that much', async () => {
    let pulled = 0;
    const pieces = (function* () {
      for (const piece of longLine('x'.repeat(1000))) {
        pulled++;
        yield piece;
      }
    })();
    await expect(collect(pieces, 10_000)).rejects.toThrow(SseEventTooLargeError);
    expect(pulled).toBeLessThanOrEqual(12);
  });

  it('counts the data lines of one event together, and starts again at each event', async () => {
    const line = `data: ${'y'.repeat(40)}\n`;
    await expect(collect([line.repeat(3) + '\n'], 100)).rejects.toThrow(SseEventTooLargeError);
    expect(await collect([(line.repeat(2) + '\n').repeat(5)], 100)).toHaveLength(5);
    // The same lines, a read each: the event's data held between reads counts as well.
    await expect(collect([line, line, line, '\n'], 100)).rejects.toThrow(SseEventTooLargeError);
  });

  it('returns the events a piece completed before the one too large, and throws for it next', () => {
    const parser = new SseParser({ maxEventChars: 100 });
    expect(parser.push(`data: a\n\ndata: ${'x'.repeat(200)}`)).toEqual([{ event: undefined, data: 'a' }]);
    expect(() => parser.push('\n\n')).toThrow(SseEventTooLargeError);
    expect(() => parser.end()).toThrow(SseEventTooLargeError);
  });

  it('decodes characters cut between reads and skips a byte order mark opening the stream (only there)', () => {
    const bytes = Buffer.from('\uFEFFdata: h\u00e9llo \u{1F44B}\n\ndata: \uFEFFx\n\n', 'utf8');
    const parser = new SseParser();
    const events = [];
    for (let at = 0; at < bytes.length; at++) events.push(...parser.push(bytes.subarray(at, at + 1)));
    expect(events).toEqual([
      { event: undefined, data: 'h\u00e9llo \u{1F44B}' },
      { event: undefined, data: '\uFEFFx' },
    ]);
  });

  it('reads `data:` lines with and without their space, and empty ones', () => {
    expect(new SseParser().push('data:a\ndata: b\ndata:\ndata\ndata:  c\n\n')).toEqual([{ event: undefined, data: 'a\nb\n\n\n c' }]);
  });

  it('finds the end of a long line that arrives in many pieces', async () => {
    const pieces = ['data: ', ...Array.from({ length: 200 }, () => 'z'.repeat(500)), '\n\n'];
    const [event] = await collect(pieces, 200_000);
    expect(event.data).toHaveLength(100_000);
  });
});
