import { appendFileSync, closeSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, truncateSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import path from 'node:path';
import type { UsageEvent } from '@igw/contracts';
import { UsageJournal, type JournalSegment, type ReadBackStats } from './usage-journal';

/** Reads back every segment with events to send again, as the usage recorder does. */
async function readAll(journal: UsageJournal) {
  const stats: ReadBackStats = { torn: 0, unreadable: 0 };
  const events: Array<{ event: UsageEvent; segment: JournalSegment }> = [];
  let segments = 0;
  for (let segment = journal.nextBacklog(); segment; segment = journal.nextBacklog()) {
    segments++;
    for await (const line of journal.readBack(segment, stats)) events.push({ event: JSON.parse(line) as UsageEvent, segment });
  }
  return { events, segments, ...stats };
}

const event = (n: number): UsageEvent => ({
  requestId: `req-${n}`,
  accountId: 'acc-1',
  keyId: 'key-1',
  model: 'openai/gpt-4o-mini',
  endpoint: 'chat.completions',
  units: { input_tokens: n, output_tokens: 2 * n },
  creditsMicro: String(1000 + n),
  usd: '0.0005',
  catalogueRevision: 3,
  prices: [{ unit: 'input_tokens', price: 0.15, per: 1_000_000 }],
  occurredAt: '2026-11-01T00:00:00.000Z',
});

const segmentsIn = (directory: string) => readdirSync(directory).filter((name) => name.endsWith('.jsonl')).sort();

describe('UsageJournal', () => {
  let root: string;
  let directory: string;
  let clock: number;
  const now = () => clock;

  beforeEach(() => {
    root = mkdtempSync(path.join(tmpdir(), 'igw-journal-'));
    directory = path.join(root, 'usage-journal');
    clock = 1_000_000;
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('writes each event as one JSON line before append returns, and forgets confirmed events', () => {
    const { journal, leftovers } = UsageJournal.open(directory, { now });
    expect(leftovers).toBe(0);
    expect(journal.nextBacklog()).toBeUndefined();
    const first = journal.append(JSON.stringify(event(1)))!;
    const second = journal.append(JSON.stringify(event(2)))!;
    const [file] = segmentsIn(directory);
    expect(readFileSync(path.join(directory, file), 'utf8')).toBe(`${JSON.stringify(event(1))}\n${JSON.stringify(event(2))}\n`);
    expect(journal.pending()).toBe(2);

    journal.confirm(first);
    journal.confirm(second);
    expect(journal.pending()).toBe(0);
    // Fully confirmed, but young: the open segment stays until it is old enough to rotate.
    expect(segmentsIn(directory)).toEqual([file]);
    clock += 5_000;
    const third = journal.append(JSON.stringify(event(3)))!;
    journal.confirm(third);
    expect(segmentsIn(directory)).toEqual([]);
    expect(journal.close()).toBe(0);
    expect(existsSync(directory)).toBe(false);
  });

  it('rotates by size and deletes a sealed segment only once every event in it is confirmed', () => {
    const line = Buffer.byteLength(`${JSON.stringify(event(1))}\n`);
    const { journal } = UsageJournal.open(directory, { now, maxSegmentBytes: line * 3 });
    const handles = Array.from({ length: 7 }, (_, i) => journal.append(JSON.stringify(event(i)))!);
    // 3 + 3 sealed, the 7th in a new open segment.
    expect(segmentsIn(directory)).toHaveLength(3);
    expect(new Set(handles).size).toBe(3);
    expect(readFileSync(path.join(directory, segmentsIn(directory)[0]), 'utf8').split('\n')).toHaveLength(4);

    journal.confirm(handles[0]);
    journal.confirm(handles[2]);
    expect(segmentsIn(directory)).toHaveLength(3);
    journal.confirm(handles[1]);
    expect(segmentsIn(directory)).toHaveLength(2);
    for (const handle of handles.slice(3)) journal.confirm(handle);
    // The open segment is kept (young); the second sealed one is gone.
    expect(segmentsIn(directory)).toHaveLength(1);
    expect(journal.close()).toBe(0);
    expect(existsSync(directory)).toBe(false);
  });

  it('after a crash, gives back every unconfirmed event (and confirmed ones of the same file: duplicates are harmless), then forgets them once confirmed', async () => {
    const line = Buffer.byteLength(`${JSON.stringify(event(1))}\n`);
    const crashed = UsageJournal.open(directory, { now, maxSegmentBytes: line * 2 }).journal;
    const handles = Array.from({ length: 5 }, (_, i) => crashed.append(JSON.stringify(event(i)))!);
    crashed.confirm(handles[0]);
    crashed.confirm(handles[1]); // the first segment is gone
    crashed.confirm(handles[2]); // the second is still needed for event 3
    // No close(): the process died. Its lock file stays behind, naming a process that no longer runs.
    writeFileSync(path.join(directory, 'lock'), JSON.stringify({ pid: 2 ** 22 + 17, host: hostname(), since: 'then' }));

    const { journal, leftovers } = UsageJournal.open(directory, { now });
    expect(leftovers).toBe(2);
    const recovered = await readAll(journal);
    expect(recovered.segments).toBe(2);
    expect(recovered.events.map((entry) => entry.event)).toEqual([event(2), event(3), event(4)]);
    expect(recovered.torn).toBe(0);
    expect(journal.pending()).toBe(3);

    // New events go to a new file; the old ones are deleted as their events are confirmed.
    const fresh = journal.append(JSON.stringify(event(5)))!;
    expect(segmentsIn(directory)).toHaveLength(3);
    journal.confirm(recovered.events[0].segment);
    journal.confirm(recovered.events[1].segment);
    expect(segmentsIn(directory)).toHaveLength(2);
    journal.confirm(recovered.events[2].segment);
    expect(segmentsIn(directory)).toHaveLength(1);
    expect(path.basename(fresh.file) > path.basename(recovered.events[2].segment.file)).toBe(true);
    journal.confirm(fresh);
    expect(journal.close()).toBe(0);
    expect(existsSync(directory)).toBe(false);
  });

  it('skips a last line cut short by a crash mid-write, and unreadable lines', async () => {
    const crashed = UsageJournal.open(directory, { now }).journal;
    crashed.append(JSON.stringify(event(1)));
    crashed.append(JSON.stringify(event(2)));
    const [file] = segmentsIn(directory);
    appendFileSync(path.join(directory, file), JSON.stringify(event(3)).slice(0, 40));
    crashed.close();

    // A second leftover with a garbage line in the middle.
    writeFileSync(path.join(directory, 'usage-000000000009.jsonl'), `${JSON.stringify(event(4))}\nnot json\n{"requestId":1}\n${JSON.stringify(event(5))}\n`);
    const { journal } = UsageJournal.open(directory, { now });
    const recovered = await readAll(journal);
    expect(recovered.events.map((entry) => entry.event.requestId)).toEqual(['req-1', 'req-2', 'req-4', 'req-5']);
    expect(recovered.torn).toBe(1);
    expect(recovered.unreadable).toBe(2);
    // New segments are numbered after the highest leftover.
    expect(path.basename(journal.append(JSON.stringify(event(6)))!.file)).toBe('usage-000000000010.jsonl');
    for (const { segment } of recovered.events) journal.confirm(segment);
    expect(segmentsIn(directory)).toEqual(['usage-000000000010.jsonl']);
  });

  it('a shutdown with unconfirmed events leaves them for the next start', async () => {
    const first = UsageJournal.open(directory, { now }).journal;
    const handle = first.append(JSON.stringify(event(1)))!;
    first.append(JSON.stringify(event(2)));
    first.confirm(handle);
    expect(first.close()).toBe(1);
    expect(existsSync(path.join(directory, 'lock'))).toBe(false);
    expect(first.append(JSON.stringify(event(3)))).toBeUndefined();

    const { journal } = UsageJournal.open(directory, { now });
    const recovered = await readAll(journal);
    expect(recovered.events.map((entry) => entry.event.requestId)).toEqual(['req-1', 'req-2']);
    for (const { segment } of recovered.events) journal.confirm(segment);
    expect(journal.close()).toBe(0);
    expect(existsSync(directory)).toBe(false);
  });

  it('reads a leftover file as a stream, a piece at a time, never whole', async () => {
    // Several of the reader's pieces long: a whole read would hold them all at once.
    const lines = Array.from({ length: 8_000 }, (_, i) => JSON.stringify(event(i))).join('\n');
    mkdirSync(directory);
    const file = path.join(directory, 'usage-000000000001.jsonl');
    writeFileSync(file, `${lines}\n`);
    expect(readFileSync(file).length).toBeGreaterThan(6 * 256 * 1024);

    const { journal } = UsageJournal.open(directory, { now });
    const segment = journal.nextBacklog()!;
    let read = 0;
    for await (const line of journal.readBack(segment)) {
      // Emptied once the first event is out: a reader that had the whole file in memory would still give all 8,000.
      if (read++ === 0) truncateSync(file, 0);
      expect(JSON.parse(line)).toEqual(event(read - 1));
    }
    expect(read).toBeGreaterThan(0);
    expect(read).toBeLessThan(4_000);
    journal.close();
  });

  it('keeps the events written while the buffer was full on disk only, and reads back just those', async () => {
    const { journal } = UsageJournal.open(directory, { now });
    const inMemory = [0, 1].map((n) => journal.append(JSON.stringify(event(n)))!);
    expect(journal.nextBacklog()).toBeUndefined();
    journal.append(JSON.stringify(event(2)), true);
    journal.append(JSON.stringify(event(3)), true);
    inMemory.push(journal.append(JSON.stringify(event(4)))!);
    const segment = journal.append(JSON.stringify(event(5)), true)!;
    expect(segment.diskOnly).toEqual([
      [2, 4],
      [5, 6],
    ]);
    const back = await readAll(journal);
    expect(back.events.map((entry) => entry.event)).toEqual([event(2), event(3), event(5)]);
    expect(journal.nextBacklog()).toBeUndefined();
    // Read back, they are confirmed like the others once the queue has them; the file then goes.
    for (const segment of inMemory) journal.confirm(segment);
    for (const { segment } of back.events) journal.confirm(segment);
    expect(segmentsIn(directory)).toEqual([]);
    expect(journal.close()).toBe(0);
  });

  it('refuses a directory another live process holds', () => {
    const { journal } = UsageJournal.open(directory, { now });
    writeFileSync(path.join(directory, 'lock'), JSON.stringify({ pid: process.ppid, host: hostname(), since: 'now' }));
    expect(() => UsageJournal.open(directory, { now })).toThrow(/is in use \(usage journal\) by process \d+ on host .*give each its own directory/);
    journal.close();
  });

  it('reports a write failure once and keeps going without the file', () => {
    const warnings: string[] = [];
    const { journal } = UsageJournal.open(directory, { now, warn: (message) => warnings.push(message) });
    const segment = journal.append(JSON.stringify(event(1)))!;
    // Pull the file descriptor away, as a failing disk would.
    closeSync(segment.fd!);
    expect(journal.append(JSON.stringify(event(2)))).toBeUndefined();
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toMatch(/usage journal in .*kept in memory/);
    // The next event starts a new file.
    const next = journal.append(JSON.stringify(event(3)))!;
    expect(next).not.toBe(segment);
    journal.confirm(segment);
    journal.confirm(next);
    expect(journal.close()).toBe(0);
  });
});
