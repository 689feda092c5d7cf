import { parseSse } from './sse';

async function collect(pieces: string[]) {
  async function* source() {
    for (const piece of pieces) yield new TextEncoder().encode(piece);
  }
  const events = [];
  for await (const event of parseSse(source())) events.push(event);
  return events;
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
});
