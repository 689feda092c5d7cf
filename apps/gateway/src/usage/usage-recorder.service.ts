import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { QueueName, usageBatchOf, type UsageEvent } from '@igw/contracts';
import { MessagingService } from '@igw/messaging';
import { SERVICE_SETTINGS, usageJournalDirectory, type ServiceSettings } from '@igw/platform';
import type { JobsOptions } from 'bullmq';
import { UsageBatchBuffer } from './usage-batch-buffer';
import { UsageJournal, type JournalSegment } from './usage-journal';

/**
 * A batch of events is one job, under a job id of its own: a batch sent twice (a retry after
 * an answer that got lost) is applied once all the same, by the ledger's unique request id.
 */
const USAGE_JOB_OPTIONS: JobsOptions = {
  attempts: 20,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { age: 3600, count: 100_000 },
  removeOnFail: false,
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
 * Emits one usage event per billable request, off the request path: events are buffered
 * (as bytes, outside the JavaScript heap: UsageBatchBuffer) and sent together every few
 * hundred milliseconds. Each event is first appended to a local journal
 * (UsageJournal), so a process that dies with events not yet accepted by the queue (during
 * a queue outage, say) sends them at its next start. When the queue is unreachable events
 * stay buffered and are re-sent until accepted; shutdown waits a while for the backlog and
 * leaves what is still pending in the journal.
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

  constructor(
    private readonly messaging: MessagingService,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  /** Opens (and locks) the journal before the gateway serves, and queues what a previous process left in it. */
  onModuleInit(): void {
    const { journal, recovered } = UsageJournal.open(usageJournalDirectory(this.settings.env), { warn: (message) => this.logger.error(message) });
    this.journal = journal;
    if (recovered.torn + recovered.unreadable > 0) {
      this.logger.warn(`usage journal: skipped ${recovered.torn} line(s) cut short by a crash and ${recovered.unreadable} unreadable line(s)`);
    }
    if (recovered.events.length > 0) {
      this.logger.log(`usage journal: re-sending ${recovered.events.length} usage event(s) left by a previous run in ${journal.directory} (${recovered.segments} file(s))`);
      for (const { line, segment } of recovered.events) this.append(line, segment);
      this.schedule();
    }
  }

  record(event: UsageEvent): void {
    const line = JSON.stringify(event);
    const batch = this.append(line, this.journal?.append(line));
    if (batch.events >= MAX_BATCH) void this.flush();
    else this.schedule();
  }

  /** Events recorded and not yet accepted by the queue. */
  private pendingEvents(): number {
    let events = 0;
    for (const batch of this.batches) events += batch.events;
    return events;
  }

  private append(line: string, segment: JournalSegment | undefined): UsageBatchBuffer {
    let batch = this.batches.at(-1);
    if (!batch || batch.events >= MAX_BATCH || batch === this.sending) {
      batch = new UsageBatchBuffer();
      this.batches.push(batch);
    }
    batch.append(line, segment);
    return batch;
  }

  /** Runs before the queue connections close, so buffered events still get out. */
  async beforeApplicationShutdown(): Promise<void> {
    const deadline = Date.now() + SHUTDOWN_FLUSH_MS;
    while ((this.pendingEvents() > 0 || this.flushing) && Date.now() < deadline) {
      // A send can hang while the queue is unreachable (Redis commands wait for a reconnect): never past the deadline.
      await settledWithin(this.flush(), deadline - Date.now());
      if (this.pendingEvents() > 0 && Date.now() < deadline) await sleep(100);
    }
    const pending = this.journal?.close() ?? 0;
    const unjournaled = this.batches.reduce((sum, batch) => sum + batch.unjournaled, 0);
    if (pending > 0) {
      this.logger.error(`${pending} usage event(s) could not be queued before shutdown; they stay in the usage journal (${this.journal!.directory}) and are sent at the next start`);
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
      .then((usageBatch) => this.messaging.enqueue(QueueName.Usage, 'usage.recordBatch', usageBatch, USAGE_JOB_OPTIONS))
      .then(
        () => {
          this.failures = 0;
          this.batches.shift();
          for (const [segment, count] of batch.segments) this.journal?.confirm(segment, count);
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

/** Waits for the promise, or for `ms` at most. */
async function settledWithin(promise: Promise<void>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([promise, new Promise<void>((resolve) => (timer = setTimeout(resolve, Math.max(0, ms))))]);
  clearTimeout(timer);
}
