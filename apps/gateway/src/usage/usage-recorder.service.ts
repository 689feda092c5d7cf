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

const RETRY_DELAYS_MS = [200, 500, 1_000, 2_000, 5_000];
const SHUTDOWN_FLUSH_MS = 10_000;

/**
 * Emits one usage event per billable request. When the queue is unreachable the event
 * stays in memory and is re-sent until it is accepted; shutdown waits for the backlog.
 */
@Injectable()
export class UsageRecorder implements BeforeApplicationShutdown {
  private readonly logger = new Logger(UsageRecorder.name);
  private readonly pending = new Set<Promise<void>>();

  constructor(
    private readonly messaging: MessagingService,
    private readonly keys: GatewayKeyAuthenticator,
  ) {}

  record(event: UsageEvent): void {
    this.keys.spend(event.accountId, BigInt(event.creditsMicro));
    const sending = this.send(event).finally(() => this.pending.delete(sending));
    this.pending.add(sending);
  }

  /** Runs before the queue connections close, so buffered events still get out. */
  async beforeApplicationShutdown(): Promise<void> {
    if (this.pending.size === 0) return;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), SHUTDOWN_FLUSH_MS)));
    const outcome = await Promise.race([Promise.allSettled([...this.pending]), deadline]);
    clearTimeout(timer);
    if (outcome === 'timeout') this.logger.error(`${this.pending.size} usage event(s) could not be queued before shutdown`);
  }

  private async send(event: UsageEvent): Promise<void> {
    for (let attempt = 0; ; attempt++) {
      try {
        await this.messaging.enqueue(QueueName.Usage, 'usage.record', event, { ...USAGE_JOB_OPTIONS, jobId: event.requestId });
        return;
      } catch (error) {
        const delay = RETRY_DELAYS_MS[Math.min(attempt, RETRY_DELAYS_MS.length - 1)];
        this.logger.warn(`usage of ${event.requestId} not queued yet (${error instanceof Error ? error.message : String(error)}); retrying in ${delay} ms`);
        await new Promise((resolve) => setTimeout(resolve, delay));
      }
    }
  }
}
