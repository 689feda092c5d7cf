import type { JournalSegment } from './usage-journal';

const INITIAL_BYTES = 64 * 1024;

/**
 * The events of one batch as UTF-8 JSON lines joined by newlines, in memory outside the
 * JavaScript heap, with how many of them each journal segment holds. Held for the flush
 * interval, events kept as strings and objects would survive young-generation collections and
 * be copied by each; bytes in a Buffer are never copied, so each event's string dies young.
 */
export class UsageBatchBuffer {
  private bytes = Buffer.allocUnsafeSlow(INITIAL_BYTES);
  private length = 0;
  /** Events in the batch. */
  events = 0;
  /** Events in the batch that could not be journaled (they live here only). */
  unjournaled = 0;
  /** Per journal segment, how many of the batch's events it holds (confirmed together once the batch is queued). */
  readonly segments = new Map<JournalSegment, number>();

  append(line: string, segment: JournalSegment | undefined): void {
    const needed = Buffer.byteLength(line) + 1;
    if (this.length + needed > this.bytes.length) this.grow(this.length + needed);
    if (this.events > 0) this.bytes[this.length++] = 0x0a;
    this.length += this.bytes.write(line, this.length, 'utf8');
    this.events++;
    if (segment) this.segments.set(segment, (this.segments.get(segment) ?? 0) + 1);
    else this.unjournaled++;
  }

  /** The lines joined by newlines (a view, valid until the next append). */
  lines(): Buffer {
    return this.bytes.subarray(0, this.length);
  }

  private grow(atLeast: number): void {
    let size = this.bytes.length * 2;
    while (size < atLeast) size *= 2;
    const larger = Buffer.allocUnsafeSlow(size);
    this.bytes.copy(larger, 0, 0, this.length);
    this.bytes = larger;
  }
}
