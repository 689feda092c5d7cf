import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import { QueueName, type UsageEvent } from '@igw/contracts';
import { MessagingService } from '@igw/messaging';
import type { JobsOptions } from 'bullmq';
import { GatewayKeyAuthenticator } from '../auth/gateway-key.authenticator';

/** The job id is the request id: BullMQ drops a duplicate add, and the ledger's unique key drops a duplicate apply. */
const USAGE_JOB_OPTIONS: JobsOptions = {
  attempts: 20,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { age: 3600, count: 100_000 },
  removeOnFail: false,
};

/** Events are sent in batches: one queue round trip per interval instead of one per request. */
const FLUSH_INTERVAL_MS = 10;
const MAX_BATCH = 500;
const RETRY_DELAYS_MS = [200, 500, 1_000, 2_000, 5_000];
const SHUTDOWN_FLUSH_MS = 10_000;

/**
 * Emits one usage event per billable request, off the request path: events are buffered
 * and sent together every few milliseconds. When the queue is unreachable they stay in
 * memory and are re-sent until accepted; shutdown waits for the backlog.
 */
@Injectable()
export class UsageRecorder implements BeforeApplicationShutdown {
  private readonly logger = new Logger(UsageRecorder.name);
  private buffer: UsageEvent[] = [];
  private timer?: NodeJS.Timeout;
  private flushing?: Promise<void>;
  private failures = 0;

  constructor(
    private readonly messaging: MessagingService,
    private readonly keys: GatewayKeyAuthenticator,
  ) {}

  record(event: UsageEvent): void {
    this.keys.spend(event.accountId, BigInt(event.creditsMicro));
    this.buffer.push(event);
    if (this.buffer.length >= MAX_BATCH) void this.flush();
    else this.timer ??= setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS);
  }

  /** Runs before the queue connections close, so buffered events still get out. */
  async beforeApplicationShutdown(): Promise<void> {
    const deadline = Date.now() + SHUTDOWN_FLUSH_MS;
    while ((this.buffer.length > 0 || this.flushing) && Date.now() < deadline) {
      await this.flush();
      if (this.buffer.length > 0) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    if (this.buffer.length > 0) this.logger.error(`${this.buffer.length} usage event(s) could not be queued before shutdown`);
  }

  /** Sends what is buffered; one batch at a time, failed batches go back to the front. */
  private flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    if (this.flushing || this.buffer.length === 0) return this.flushing ?? Promise.resolve();
    const batch = this.buffer.splice(0, MAX_BATCH);
    this.flushing = this.messaging
      .enqueueMany(
        QueueName.Usage,
        batch.map((event) => ({ name: 'usage.record' as const, data: event, options: { ...USAGE_JOB_OPTIONS, jobId: event.requestId } })),
      )
      .then(
        () => {
          this.failures = 0;
        },
        (error: unknown) => {
          this.buffer.unshift(...batch);
          const delay = RETRY_DELAYS_MS[Math.min(this.failures++, RETRY_DELAYS_MS.length - 1)];
          this.logger.warn(`${batch.length} usage event(s) not queued yet (${error instanceof Error ? error.message : String(error)}); retrying in ${delay} ms`);
          return new Promise<void>((resolve) => setTimeout(resolve, delay));
        },
      )
      .finally(() => {
        this.flushing = undefined;
        if (this.buffer.length > 0) this.timer ??= setTimeout(() => void this.flush(), FLUSH_INTERVAL_MS);
      });
    return this.flushing;
  }
}
