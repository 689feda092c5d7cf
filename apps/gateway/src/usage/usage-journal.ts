import { closeSync, createReadStream, openSync, readdirSync, rmdirSync, unlinkSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { UsageEvent } from '@igw/contracts';
import { DirectoryLock } from '@igw/config';

/** A segment is sealed (and a new one started) once it holds this many bytes... */
const MAX_SEGMENT_BYTES = 4 * 1024 * 1024;
/** ...or, once every event in it is confirmed, when it is older than this. */
const ROTATE_AFTER_MS = 2_000;

const SEGMENT_NAME = /^usage-(\d{12})\.jsonl$/;

/** One append-only file of the journal; deleted once every event in it is confirmed and no more can be added. */
export class JournalSegment {
  fd?: number;
  appended = 0;
  confirmed = 0;
  bytes = 0;
  /**
   * Lines [from, to) written while the usage buffer was full: they are only here, and are
   * read back (`UsageJournal.readBack`) once the buffer has room.
   */
  diskOnly: Array<[number, number]> = [];
  /** Left by a previous process: every line is read back, and counted as appended as it is read. */
  leftover = false;
  /** Being read back: kept even when what has been read so far is all confirmed. */
  reading = false;

  constructor(
    readonly file: string,
    readonly openedAt: number,
  ) {}

  get sealed(): boolean {
    return this.fd === undefined;
  }
}

export interface JournalOptions {
  maxSegmentBytes?: number;
  rotateAfterMs?: number;
  now?: () => number;
  /** Told about journal failures (never about event contents). */
  warn?: (message: string) => void;
}

/** What reading back leftover segments found besides events. */
export interface ReadBackStats {
  /** Last lines cut short by a crash mid-write (skipped). */
  torn: number;
  /** Complete lines that are not a usage event (skipped; should never happen). */
  unreadable: number;
}

/**
 * The usage buffer's durable copy: each event is appended as one JSON line (one synchronous
 * write on an open file, no fsync) before the gateway counts it as recorded, so it survives
 * a crash of the process (not of the machine: the operating system may not have written it
 * to disk yet). Events confirmed by the queue are counted off; a segment is deleted once it
 * is sealed and all its events are confirmed. Leftover segments of a previous process, and
 * events written while the usage buffer was full, are read back line by line (a file is never
 * read whole: an outage's journal can be far larger than memory) so they can be sent again
 * (the ledger ignores a request id it already has).
 * The directory is locked: one process per journal.
 */
export class UsageJournal {
  private readonly segments = new Set<JournalSegment>();
  private active?: JournalSegment;
  private nextSequence: number;
  private closed = false;
  private failing = false;
  private readonly maxSegmentBytes: number;
  private readonly rotateAfterMs: number;
  private readonly now: () => number;
  private readonly warn: (message: string) => void;

  private constructor(
    readonly directory: string,
    private readonly lock: DirectoryLock,
    nextSequence: number,
    options: JournalOptions,
  ) {
    this.nextSequence = nextSequence;
    this.maxSegmentBytes = options.maxSegmentBytes ?? MAX_SEGMENT_BYTES;
    this.rotateAfterMs = options.rotateAfterMs ?? ROTATE_AFTER_MS;
    this.now = options.now ?? Date.now;
    this.warn = options.warn ?? (() => undefined);
  }

  /**
   * Locks the directory (throws if another live process holds it) and takes over the segments
   * a previous process left, to be read back (`backlog`, `readBack`); says how many.
   */
  static open(directory: string, options: JournalOptions = {}): { journal: UsageJournal; leftovers: number } {
    const resolved = path.resolve(directory);
    const lock = DirectoryLock.acquire(resolved, 'usage journal');
    try {
      const leftovers = readdirSync(resolved)
        .map((name) => ({ name, match: SEGMENT_NAME.exec(name) }))
        .filter((entry): entry is { name: string; match: RegExpExecArray } => entry.match !== null)
        .sort((a, b) => a.name.localeCompare(b.name));
      const last = leftovers.at(-1);
      const journal = new UsageJournal(resolved, lock, last ? Number(last.match[1]) + 1 : 1, options);
      for (const { name } of leftovers) {
        const segment = new JournalSegment(path.join(resolved, name), journal.now());
        segment.leftover = true;
        journal.segments.add(segment);
      }
      return { journal, leftovers: leftovers.length };
    } catch (error) {
      lock.release();
      throw error;
    }
  }

  /**
   * Writes the event (`JSON.stringify` of a UsageEvent, which the caller keeps to send it on)
   * before returning. Returns its segment (to confirm it later), or undefined when the file
   * could not be written (the caller still has it in memory).
   */
  append(eventLine: string, diskOnly = false): JournalSegment | undefined {
    if (this.closed) return undefined;
    const line = `${eventLine}\n`;
    let segment = this.active;
    try {
      segment ??= this.startSegment();
      const written = writeSync(segment.fd!, line);
      if (written !== Buffer.byteLength(line)) throw new Error(`short write (${written} bytes)`);
      segment.bytes += written;
    } catch (error) {
      // The file may now end in a partial line: seal it, so the next event starts a clean file.
      if (segment) this.seal(segment);
      this.reportFailure(error);
      return undefined;
    }
    this.failing = false;
    if (diskOnly) {
      const last = segment.diskOnly.at(-1);
      if (last && last[1] === segment.appended) last[1]++;
      else segment.diskOnly.push([segment.appended, segment.appended + 1]);
    }
    segment.appended++;
    if (segment.bytes >= this.maxSegmentBytes) this.seal(segment);
    return segment;
  }

  /** The queue has accepted `count` events of this segment. */
  confirm(segment: JournalSegment, count = 1): void {
    if (this.closed) return;
    segment.confirmed += count;
    if (segment.confirmed < segment.appended || segment.reading || segment.leftover) return;
    if (segment.sealed) this.remove(segment);
    else if (this.now() - segment.openedAt >= this.rotateAfterMs) this.seal(segment);
  }

  /** Events written and not yet confirmed. */
  pending(): number {
    let pending = 0;
    for (const segment of this.segments) pending += segment.appended - segment.confirmed;
    return pending;
  }

  /** The oldest segment with events to read back (left by a previous process, or written while the buffer was full). */
  nextBacklog(): JournalSegment | undefined {
    for (const segment of this.segments) if (!segment.reading && (segment.leftover || segment.diskOnly.length > 0)) return segment;
    return undefined;
  }

  /** Segments left by a previous process not read back yet (their events are not counted as pending). */
  unreadLeftovers(): number {
    let count = 0;
    for (const segment of this.segments) if (segment.leftover) count++;
    return count;
  }

  /**
   * The segment's lines to send again, streamed from the file: a leftover's every complete
   * usage event (each counted as appended as it is read), else its disk-only lines. The
   * active segment is sealed first, so the file no longer grows while it is read.
   */
  async *readBack(segment: JournalSegment, stats: ReadBackStats = { torn: 0, unreadable: 0 }): AsyncGenerator<string> {
    if (this.active === segment) this.seal(segment);
    const { leftover } = segment;
    const ranges = segment.diskOnly;
    segment.diskOnly = [];
    segment.reading = true;
    let index = 0;
    let range = 0;
    let rest = '';
    try {
      for await (const chunk of createReadStream(segment.file, { encoding: 'utf8', highWaterMark: 256 * 1024 })) {
        const pieces = (rest + (chunk as string)).split('\n');
        // The piece after the last newline is the start of the next line (or, at the end, one a crash cut short).
        rest = pieces.pop() ?? '';
        for (const line of pieces) {
          const lineIndex = index++;
          if (leftover) {
            if (!line) continue;
            if (!isUsageEventLine(line)) {
              stats.unreadable++;
              continue;
            }
            segment.appended++;
            yield line;
            continue;
          }
          while (range < ranges.length && lineIndex >= ranges[range][1]) range++;
          if (range === ranges.length) return;
          if (lineIndex >= ranges[range][0]) yield line;
        }
      }
      if (leftover && rest) stats.torn++;
    } finally {
      segment.reading = false;
      segment.leftover = false;
      if (!this.closed && segment.sealed && segment.confirmed >= segment.appended) this.remove(segment);
    }
  }

  /** Segment files currently on disk (for tests and diagnostics). */
  files(): string[] {
    return [...this.segments].map((segment) => segment.file);
  }

  /**
   * Seals the open segment, deletes every fully confirmed one, releases the lock and, when
   * nothing is pending, removes the (then empty) directory. Returns how many events stay
   * for the next start.
   */
  close(): number {
    if (this.closed) return this.pending();
    if (this.active) this.seal(this.active);
    const pending = this.pending();
    this.closed = true;
    this.lock.release();
    if (this.segments.size === 0) {
      try {
        rmdirSync(this.directory);
      } catch {
        // Not empty (someone else's files) or a mount point: leave it.
      }
    }
    return pending;
  }

  private startSegment(): JournalSegment {
    const file = path.join(this.directory, `usage-${String(this.nextSequence++).padStart(12, '0')}.jsonl`);
    const segment = new JournalSegment(file, this.now());
    segment.fd = openSync(file, 'wx', 0o600);
    this.segments.add(segment);
    this.active = segment;
    return segment;
  }

  private seal(segment: JournalSegment): void {
    if (this.active === segment) this.active = undefined;
    if (segment.fd !== undefined) {
      try {
        closeSync(segment.fd);
      } catch (error) {
        this.reportFailure(error);
      }
      segment.fd = undefined;
    }
    if (segment.confirmed >= segment.appended && !segment.reading && !segment.leftover) this.remove(segment);
  }

  private remove(segment: JournalSegment): void {
    this.segments.delete(segment);
    try {
      unlinkSync(segment.file);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') this.reportFailure(error);
    }
  }

  /** Once per run of failures, not once per event. */
  private reportFailure(error: unknown): void {
    if (this.failing) return;
    this.failing = true;
    this.warn(`usage journal in ${this.directory}: ${error instanceof Error ? error.message : String(error)}; events are kept in memory only until it works again`);
  }
}

function isUsageEventLine(line: string): boolean {
  try {
    const event = JSON.parse(line) as Partial<UsageEvent> | null;
    return !!event && typeof event.requestId === 'string' && typeof event.accountId === 'string' && typeof event.creditsMicro === 'string';
  } catch {
    return false;
  }
}
