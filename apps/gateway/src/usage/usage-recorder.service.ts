import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { QueueName, usageBatchOf, MessagingService } from '@igw/messaging';
import type { UsageEvent } from '@igw/contracts';
import { SERVICE_SETTINGS, usageJournalDirectory, type ServiceSettings } from '@igw/config';
import type { JobsOptions } from 'bullmq';
import { usageSources } from '../telemetry/gateway-metrics';
import { UsageBatchBuffer } from './usage-batch-buffer';
import { UsageJournal, type JournalSegment } from './usage-journal';

/**
 * A batch sent twice (a retry after an answer that got lost) is applied once all the same, by
 * the ledger's unique request id. An applied batch is removed at once: kept, a busy gateway's
 * completed jobs held their events in the queue server's memory for an hour (~10 kB per 500
 * events). One that failed every attempt is kept for an operator, the newest 10,000 for a week.
 */
export const USAGE_JOB_OPTIONS: JobsOptions = {
  attempts: 20,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: true,
  removeOnFail: { age: 7 * 86_400, count: 10_000 },
};

/**
 * Events are sent in batches, one job each: one queue round trip per interval (or per
 * MAX_BATCH events under load) instead of one per request. Each send costs the gateway's core
 * a queue round trip and a job, and the queue server and the ledger work of their own: at
 * 10 ms the sends alone added about 0.15 ms to a request's median latency at concurrency 1,
 * and at 100 ms the requests they landed on made up much of the slowest percent (A/B on the
 * bench: p99 4.8 ms at 100 ms, 4.4 ms at 500 ms). What a send costs the queue server hardly
 * depends on its size once deflated (see UsageBatch), so MAX_BATCH only needs to bound a
 * batch, not to start sends: at 500 a gateway answering ~2,000 requests a second sent four
 * batches a second instead of two, and the bench's p99 at concurrency 1 was 2.5 ms instead of
 * 1.9 ms (A/B). Nothing waits for them: limits and holds never do, and the ledger and
 * balances are only this much later.
 */
const FLUSH_INTERVAL_MS = 500;
const MAX_BATCH = 2_000;
const RETRY_DELAYS_MS = [200, 500, 1_000, 2_000, 5_000];
const SHUTDOWN_FLUSH_MS = 10_000;
/**
 * A send the queue has not answered by then is counted as failed and sent again: a queue
 * server that stops answering (a connection that stays open, nothing comes back) must not
 * stop the sends for good. If the first one arrives after all, the ledger applies it once.
 */
const SEND_TIMEOUT_MS = 10_000;
/** How often reading back from the journal looks for room in the buffer again. */
const READ_BACK_WAIT_MS = 50;

/**
 * Emits one usage event per billable request, off the request path: events are buffered
 * (as bytes, outside the JavaScript heap: UsageBatchBuffer) and sent together every few
 * hundred milliseconds. Each event is first appended to a local journal
 * (UsageJournal), so a process that dies with events not yet accepted by the queue (during
 * a queue outage, say) sends them at its next start. When the queue is unreachable events
 * stay buffered and are re-sent until accepted, up to USAGE_MAX_BUFFERED_EVENTS in memory:
 * beyond that, a long outage's events wait in the journal only, and are read back from it
 * (a line at a time, as a previous run's files are at start) as the queue takes the
 * buffered ones. Shutdown waits a while for the backlog and leaves what is still pending
 * in the journal.
 */
@Injectable()
export class UsageRecorder implements OnModuleInit, BeforeApplicationShutdown {
  private readonly logger = new Logger(UsageRecorder.name);
  /** Oldest first; the last one takes new events until it holds MAX_BATCH or is being sent. */
  private readonly batches: UsageBatchBuffer[] = [];
  private journal?: UsageJournal;
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private sending?: UsageBatchBuffer;
  private failures = 0;
  /** Events in `batches`. */
  private buffered = 0;
  private readonly maxBuffered: number;
  /** Whether events are being written to the journal only (the buffer is full); said once per stretch. */
  private spilling = false;
  private readingBack?: Promise<void>;
  private closing = false;

  constructor(
    private readonly messaging: MessagingService,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {
    this.maxBuffered = settings.env.USAGE_MAX_BUFFERED_EVENTS;
  }

  /**
   * Opens (and locks) the journal before the gateway serves, and starts sending what a
   * previous process left in it, read back while the gateway serves.
   */
  onModuleInit(): void {
    const { journal, leftovers } = UsageJournal.open(usageJournalDirectory(this.settings.env), { warn: (message) => this.logger.error(message) });
    this.journal = journal;
    usageSources.add(this);
    if (leftovers > 0) {
      this.logger.log(`usage journal: reading back ${leftovers} file(s) left by a previous run in ${journal.directory}`);
      this.readBackSoon();
    }
  }

  record(event: UsageEvent): void {
    const line = JSON.stringify(event);
    if (this.buffered >= this.maxBuffered && this.spill(line)) return;
    const batch = this.append(line, this.journal?.append(line));
    if (batch.events >= MAX_BATCH) void this.flush();
    else this.schedule();
  }

  /** Events recorded and not yet accepted by the queue, in memory (the journal may hold more). */
  pendingEvents(): number {
    return this.buffered;
  }

  /** Whether the in-memory backlog is full and new events go to the journal only. */
  spillingToJournal(): boolean {
    return this.spilling;
  }

  /** The buffer is full: the event goes to the journal only. False if the journal could not take it (it is then kept in memory all the same). */
  private spill(line: string): boolean {
    if (!this.journal?.append(line, true)) return false;
    if (!this.spilling) {
      this.spilling = true;
      this.logger.warn(
        `usage queue backlog: ${this.buffered} usage event(s) in memory; further events wait in the usage journal (${this.journal.directory}) only, until the queue takes them`,
      );
    }
    this.schedule();
    return true;
  }

  private append(line: string, segment: JournalSegment | undefined): UsageBatchBuffer {
    let batch = this.batches.at(-1);
    if (!batch || batch.events >= MAX_BATCH || batch === this.sending) {
      batch = new UsageBatchBuffer();
      this.batches.push(batch);
    }
    batch.append(line, segment);
    this.buffered++;
    return batch;
  }

  /** Reads the journal's backlog into the buffer, as room allows (one reader at a time). */
  private readBackSoon(): void {
    if (this.readingBack || this.closing || !this.journal?.nextBacklog()) return;
    this.readingBack = this.readBack()
      .catch((error: unknown) => this.logger.error(`usage journal: reading back failed (${error instanceof Error ? error.message : String(error)}); the events stay in the journal for the next start`))
      .finally(() => (this.readingBack = undefined));
  }

  private async readBack(): Promise<void> {
    const journal = this.journal!;
    const stats = { torn: 0, unreadable: 0 };
    let leftoverEvents = 0;
    let leftoverFiles = 0;
    for (let segment = journal.nextBacklog(); segment && !this.closing; segment = journal.nextBacklog()) {
      const leftover = segment.leftover;
      if (leftover) leftoverFiles++;
      for await (const line of journal.readBack(segment, stats)) {
        while (this.buffered >= this.maxBuffered && !this.closing) await sleep(READ_BACK_WAIT_MS);
        // Left unread: the file stays, and is read again at the next start.
        if (this.closing) return;
        this.append(line, segment);
        if (leftover) leftoverEvents++;
        this.schedule();
      }
    }
    if (stats.torn + stats.unreadable > 0) {
      this.logger.warn(`usage journal: skipped ${stats.torn} line(s) cut short by a crash and ${stats.unreadable} unreadable line(s)`);
    }
    if (leftoverFiles > 0) this.logger.log(`usage journal: re-sending ${leftoverEvents} usage event(s) left by a previous run in ${journal.directory} (${leftoverFiles} file(s))`);
  }

  /** Runs before the queue connections close, so buffered events still get out. */
  async beforeApplicationShutdown(): Promise<void> {
    usageSources.delete(this);
    const deadline = Date.now() + SHUTDOWN_FLUSH_MS;
    while ((this.pendingEvents() > 0 || this.flushing || this.readingBack) && Date.now() < deadline) {
      // A send can hang while the queue is unreachable (Redis commands wait for a reconnect): never past the deadline.
      await settledWithin(this.flush(), deadline - Date.now());
      if (this.pendingEvents() > 0 && Date.now() < deadline) await sleep(100);
    }
    this.closing = true;
    const unread = this.journal?.unreadLeftovers() ?? 0;
    const pending = this.journal?.close() ?? 0;
    const unjournaled = this.batches.reduce((sum, batch) => sum + batch.unjournaled, 0);
    if (pending > 0 || unread > 0) {
      const files = unread > 0 ? `${pending > 0 ? ' and ' : ''}the events of ${unread} file(s) left by a previous run` : '';
      this.logger.error(
        `${pending > 0 ? `${pending} usage event(s)` : ''}${files} could not be queued before shutdown; they stay in the usage journal (${this.journal!.directory}) and are sent at the next start`,
      );
    }
    if (unjournaled > 0) this.logger.error(`${unjournaled} usage event(s) could not be queued before shutdown nor written to the usage journal: they are lost`);
  }

  private schedule(): void {
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS);
  }

  /** Sends the oldest batch (deflated JSON lines, see UsageBatch); one at a time, a failed batch is sent again. */
  private flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const batch = this.batches[0];
    if (this.flushing || !batch) return this.flushing ?? Promise.resolve();
    this.sending = batch;
    this.flushing = usageBatchOf(batch.lines())
      .then((usageBatch) => withTimeout(this.messaging.enqueue(QueueName.Usage, 'usage.recordBatch', usageBatch, USAGE_JOB_OPTIONS), SEND_TIMEOUT_MS))
      .then(
        () => {
          this.failures = 0;
          this.batches.shift();
          this.buffered -= batch.events;
          for (const [segment, count] of batch.segments) this.journal?.confirm(segment, count);
          if (this.buffered < this.maxBuffered) {
            if (this.spilling) this.logger.log('usage queue backlog: events are kept in memory again; those waiting in the usage journal are read back from it');
            this.spilling = false;
            this.readBackSoon();
          }
        },
        (error: unknown) => {
          const delay = RETRY_DELAYS_MS[Math.min(this.failures++, RETRY_DELAYS_MS.length - 1)];
          this.logger.warn(`${batch.events} usage event(s) not queued yet (${error instanceof Error ? error.message : String(error)}); retrying in ${delay} ms`);
          return sleep(delay);
        },
      )
      .finally(() => {
        this.sending = undefined;
        this.flushing = undefined;
        if (this.batches.length > 0) this.schedule();
      });
    return this.flushing;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, Math.max(0, ms)));
}

/** The promise's outcome, or a rejection once `ms` have passed. */
async function withTimeout(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`no answer from the queue within ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}

/** Waits for the promise, or for `ms` at most. */
async function settledWithin(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))))]);
  clearTimeout(timer);
}
