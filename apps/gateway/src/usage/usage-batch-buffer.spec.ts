import { JournalSegment } from './usage-journal';
import { UsageBatchBuffer } from './usage-batch-buffer';

describe('UsageBatchBuffer', () => {
  it('holds the lines joined by newlines, byte for byte, however far it has to grow', () => {
    const buffer = new UsageBatchBuffer();
    const lines = Array.from({ length: 3_000 }, (_, index) => JSON.stringify({ requestId: `req_${index}`, note: index % 7 === 0 ? 'ünïcödé ✓ "quoted"' : 'x'.repeat(index % 50) }));
    for (const line of lines) buffer.append(line, undefined);

    expect(buffer.lines().toString('utf8')).toBe(lines.join('\n'));
    expect(buffer.lines().length).toBeGreaterThan(64 * 1024);
    expect(buffer.events).toBe(3_000);
  });

  it('is empty before the first event', () => {
    const buffer = new UsageBatchBuffer();
    expect(buffer.lines().length).toBe(0);
    expect(buffer.events).toBe(0);
  });

  it('counts the events of each journal segment, and those that could not be journaled', () => {
    const first = new JournalSegment('/tmp/one.jsonl', 0);
    const second = new JournalSegment('/tmp/two.jsonl', 0);
    const buffer = new UsageBatchBuffer();
    buffer.append('{"a":1}', first);
    buffer.append('{"a":2}', first);
    buffer.append('{"a":3}', undefined);
    buffer.append('{"a":4}', second);

    expect([...buffer.segments]).toEqual([
      [first, 2],
      [second, 1],
    ]);
    expect(buffer.unjournaled).toBe(1);
    expect(buffer.lines().toString()).toBe('{"a":1}\n{"a":2}\n{"a":3}\n{"a":4}');
  });
});
