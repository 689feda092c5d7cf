import { Inject, Injectable, Logger, type BeforeApplicationShutdown, type OnApplicationShutdown } from '@nestjs/common';
import { QueueName, type JobData, type JobName, type JobReply } from './payloads/queues';
import type { Topic, TopicMap } from './payloads/topics';
import { UnrecoverableError, type Job, type JobsOptions, type Queue, type QueueEvents, type Relay, type Worker } from 'bullmq';
import { createBullBackend, type BullBackend } from './backend';
import { RpcFailedError, RpcTimeoutError } from './messaging.errors';
import { COUNTED_STATES, queueDepthSources, queueJobFailures } from './messaging-metrics';
import { MESSAGING_OPTIONS, type MessagingOptions } from './messaging.options';

/** How long shutdown waits for queue connections to close. */
const SHUTDOWN_CLOSE_MS = 5_000;
/** How often one source (a worker, a queue, the relay) may log the same kind of failure. */
const ERROR_REPORT_INTERVAL_MS = 5_000;

export type JobHandlers<Q extends QueueName> = {
  [N in JobName<Q>]: (data: JobData<Q, N>, job: Job) => Promise<JobReply<Q, N>>;
};

/** Job options by purpose; the job id is the idempotency key where one exists. */
const RPC_JOB_OPTIONS: JobsOptions = { attempts: 1, removeOnComplete: { age: 60, count: 1000 }, removeOnFail: { age: 600, count: 1000 } };

/**
 * Queues whose request/reply jobs are removed as soon as the reply is read: a stored
 * conversation's job (up to BODY_LIMIT and its answer) left for removeOnComplete's minute would
 * hold the queue's memory or table that long. The others stay that minute (what operators and
 * tests count of them).
 */
const REMOVED_ONCE_READ = new Set<string>([QueueName.ResponsesRpc]);

const DEFAULT_RPC_TIMEOUT_MS = 5_000;
/** How late a reply may be before the job is asked for it directly, and how often then. */
const REPLY_LOOK_MS = 500;

/**
 * Typed access to BullMQ for one service: work queues, request/reply and relay topics.
 * Every queue, worker and relay node it opens is closed on shutdown.
 */
@Injectable()
export class MessagingService implements BeforeApplicationShutdown, OnApplicationShutdown {
  private readonly logger = new Logger(MessagingService.name);
  private readonly backend: BullBackend;
  private readonly queues = new Map<string, Queue>();
  private readonly queueEvents = new Map<string, Promise<QueueEvents>>();
  private readonly workers: Worker[] = [];
  private relayPromise?: Promise<Relay<unknown>>;
  private closed = false;
  private stopping = false;
  private readonly errorsReported = new Map<string, { at: number; repeated: number }>();
  /** The queues this service has workers for: their depth is in its metrics. */
  private readonly consumed = new Set<QueueName>();

  constructor(@Inject(MESSAGING_OPTIONS) private readonly options: MessagingOptions) {
    this.backend = createBullBackend(options.backend);
  }

  describeBackend(): string {
    return this.backend.describe();
  }

  /** Adds a job to a work queue; `jobId` makes a retried add a no-op. */
  async enqueue<Q extends QueueName, N extends JobName<Q>>(
    queue: Q,
    name: N,
    data: JobData<Q, N>,
    options: JobsOptions = {},
  ): Promise<void> {
    await this.queue(queue).add(name, data, options);
  }

  /** Adds many jobs in one round trip (ids make retried adds no-ops, as with `enqueue`). */
  async enqueueMany<Q extends QueueName, N extends JobName<Q>>(
    queue: Q,
    jobs: Array<{ name: N; data: JobData<Q, N>; options?: JobsOptions }>,
  ): Promise<void> {
    await this.queue(queue).addBulk(jobs.map((job) => ({ name: job.name, data: job.data, opts: job.options })));
  }

  /** Request/reply over a queue: adds a job and waits for the worker's return value. */
  async request<Q extends QueueName, N extends JobName<Q>>(
    queue: Q,
    name: N,
    data: JobData<Q, N>,
    timeoutMs = this.options.rpcTimeoutMs ?? DEFAULT_RPC_TIMEOUT_MS,
  ): Promise<JobReply<Q, N>> {
    // The whole call keeps to the timeout: a queue server that stops answering must not hold
    // the caller (a request waiting for its key) on the connection or the add either.
    const deadline = Date.now() + timeoutMs;
    const timedOut = () => new RpcTimeoutError(queue, name, timeoutMs);
    const events = await beforeDeadline(this.events(queue), deadline, timedOut);
    const job = await beforeDeadline(this.queue(queue).add(name, data, RPC_JOB_OPTIONS), deadline, timedOut);
    try {
      const reply = (await this.finished(queue, job, events, Math.max(1, deadline - Date.now()))) as JobReply<Q, N>;
      if (REMOVED_ONCE_READ.has(queue)) void job.remove().catch(() => undefined);
      return reply;
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      if (/timed out/i.test(message)) {
        // Nobody will read the answer: make sure no worker spends time on it. A job a worker
        // holds cannot be removed; the caller is told it started (it may be owed for).
        const state = await job.getState().catch(() => 'unknown');
        const removed = await job.remove().then(
          () => true,
          () => false,
        );
        throw new RpcTimeoutError(queue, name, timeoutMs, !removed || state === 'active' || state === 'completed' || state === 'failed');
      }
      throw new RpcFailedError(queue, name, message);
    }
  }

  /** Starts a worker that runs the handler named by each job. */
  consume<Q extends QueueName>(queue: Q, handlers: JobHandlers<Q>, concurrency = 8): Worker {
    const worker = this.backend.createWorker(
      queue,
      async (job: Job) => {
        const handler = (handlers as Record<string, (data: unknown, job: Job) => Promise<unknown>>)[job.name];
        if (!handler) throw new UnrecoverableError(`No handler for job ${job.name} on queue ${queue}`);
        return handler(job.data, job);
      },
      { concurrency },
    );
    worker.on('failed', (job, error) => {
      queueJobFailures.inc({ queue });
      this.logger.warn(`Job ${job?.name} (${job?.id}) on ${queue} failed: ${error.message}`);
    });
    worker.on('error', (error) => this.reportError(`Worker on ${queue}`, error));
    this.workers.push(worker);
    this.consumed.add(queue);
    queueDepthSources.add(this);
    return worker;
  }

  async publish<T extends Topic>(topic: T, data: TopicMap[T], options: { retainMs?: number } = {}): Promise<void> {
    const relay = await this.relay();
    await relay.publish(topic, data, options.retainMs ? { retain: options.retainMs } : undefined);
  }

  async subscribe<T extends Topic>(topic: T, listener: (data: TopicMap[T]) => void | Promise<void>): Promise<void> {
    const relay = await this.relay();
    await relay.subscribe<TopicMap[T]>(topic, (message) => listener(message.data));
  }

  /** Called when this node's relay subscriptions were lost and restored: broadcasts may have been missed. */
  onRelayRecovered(listener: () => void): void {
    void this.relay().then((relay) => relay.on('recovered', listener));
  }

  /** Readiness: the backend answers a cheap read. */
  async ping(): Promise<void> {
    const queue = this.queues.values().next().value ?? this.queue('decisions' as QueueName);
    await queue.getJobCounts('waiting');
  }

  /** Jobs by state in each queue this service consumes (for the queue depth gauge). */
  async jobCounts(): Promise<Array<{ queue: string; counts: Record<string, number> }>> {
    if (this.closed) return [];
    return Promise.all([...this.consumed].map(async (queue) => ({ queue, counts: await this.queue(queue).getJobCounts(...COUNTED_STATES) })));
  }

  /** From here on the process is stopping: connections its database or queue server close are expected. */
  beforeApplicationShutdown(): void {
    this.stopping = true;
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopping = true;
    if (this.closed) return;
    this.closed = true;
    queueDepthSources.delete(this);
    await this.closeWorkers();
    // With the queue server unreachable, closing waits for a reconnection that may never come;
    // everything worth keeping is already saved (usage in the journal, jobs in the queue).
    const outcome = await within(this.closeConnections(), SHUTDOWN_CLOSE_MS);
    if (outcome === 'gave-up') this.logger.warn(`Queue connections did not close within ${SHUTDOWN_CLOSE_MS} ms (is the queue server reachable?); leaving them`);
  }

  /**
   * Workers take no new job and finish the ones they are running, for up to `workerDrainMs`.
   * A job still running then is left: its lock lapses and another worker runs it again.
   */
  private async closeWorkers(): Promise<void> {
    const drainMs = this.options.workerDrainMs ?? SHUTDOWN_CLOSE_MS;
    const outcome = await within(Promise.allSettled(this.workers.map((worker) => worker.close())), drainMs);
    if (outcome !== 'gave-up') return;
    this.logger.warn(`Queue workers did not finish their current jobs within ${drainMs} ms; another worker will run them again`);
    await within(Promise.allSettled(this.workers.map((worker) => worker.close(true))), SHUTDOWN_CLOSE_MS);
  }

  private async closeConnections(): Promise<void> {
    const rest: Array<Promise<unknown>> = [
      ...[...this.queues.values()].map((queue) => queue.close()),
      ...[...this.queueEvents.values()].map((events) => events.then((e) => e.close())),
    ];
    if (this.relayPromise) rest.push(this.relayPromise.then((relay) => relay.close()));
    const results = await Promise.allSettled(rest);
    for (const result of results) {
      if (result.status === 'rejected') this.logger.warn(`Closing messaging: ${String(result.reason)}`);
    }
  }

  /**
   * The job's reply: by its completion event or, when that is late, from the job itself. BullMQ's
   * PostgreSQL backend reads its event stream by increasing id, so a completion whose transaction
   * commits after a later event's is never delivered: the caller would wait out its timeout (a
   * 503 for a key look-up, ~3 % of them under concurrent look-ups) although the reply is there.
   * (Job.waitUntilFinished looks at the job only once, and leaves its timer behind when not used to the end.)
   */
  private finished(queueName: QueueName, job: Job, events: QueueEvents, timeoutMs: number): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const completedEvent = `completed:${job.id}`;
      const failedEvent = `failed:${job.id}`;
      let done = false;
      const finish = (error: Error | undefined, reply?: unknown) => {
        if (done) return;
        done = true;
        clearTimeout(timeout);
        clearInterval(looking);
        events.off(completedEvent as 'completed', onCompleted);
        events.off(failedEvent as 'failed', onFailed);
        closingEvents.off('closing', onClosing);
        if (error) reject(error);
        else resolve(reply);
      };
      const onCompleted = ({ returnvalue }: { returnvalue: unknown }) => finish(undefined, returnvalue);
      const onFailed = ({ failedReason }: { failedReason: string }) => finish(new Error(failedReason));
      const onClosing = () => finish(new Error('the queue is closing'));
      const queue = this.queue(queueName);
      // BullMQ emits 'closing' on close() without declaring it in the queue's typed events.
      const closingEvents = queue as unknown as NodeJS.EventEmitter;
      const lookAtJob = async () => {
        const state = await job.getState();
        if (done || (state !== 'completed' && state !== 'failed')) return;
        const finishedJob = await queue.getJob(job.id!);
        if (!finishedJob) return;
        if (state === 'failed') finish(new Error(finishedJob.failedReason));
        else finish(undefined, finishedJob.returnvalue);
      };
      events.on(completedEvent as 'completed', onCompleted);
      events.on(failedEvent as 'failed', onFailed);
      closingEvents.on('closing', onClosing);
      const timeout = setTimeout(() => finish(new Error(`Job wait timed out after ${timeoutMs} ms`)), timeoutMs);
      // Once now (the job may have finished before the listeners were on), then while the event is late.
      const look = () => void lookAtJob().catch(() => undefined);
      look();
      const looking = setInterval(look, REPLY_LOOK_MS);
    });
  }

  /**
   * BullMQ's PostgreSQL backend keeps the failure of its first connection for good: a queue (or
   * queue events, or relay) made while the database was away would fail every call after it came
   * back, and /readyz with it. One that never got ready is forgotten and closed, so the next use
   * makes a new one.
   */
  private queue(name: QueueName): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      const created = this.backend.createQueue(name);
      created.on('error', (error: Error) => this.reportError(`Queue ${name}`, error));
      this.queues.set(name, created);
      created.waitUntilReady().catch(() => {
        if (this.queues.get(name) !== created) return;
        this.queues.delete(name);
        void created.close().catch(() => undefined);
      });
      queue = created;
    }
    return queue;
  }

  private events(name: QueueName): Promise<QueueEvents> {
    let events = this.queueEvents.get(name);
    if (!events) {
      const created = this.backend.createQueueEvents(name);
      created.on('error', (error: Error) => this.reportError(`Queue events ${name}`, error));
      const ready = created.waitUntilReady().then(() => created);
      this.queueEvents.set(name, ready);
      // Forgotten when it never got ready, as a queue is (see `queue`).
      ready.catch(() => {
        if (this.queueEvents.get(name) !== ready) return;
        this.queueEvents.delete(name);
        void created.close().catch(() => undefined);
      });
      events = ready;
    }
    return events;
  }

  /** A connection error is news while the service runs; while it stops (the server may stop first, e.g. on Ctrl-C) it is expected. */
  private reportError(source: string, error: Error): void {
    if (this.stopping) {
      this.logger.debug(`${source} while stopping: ${error.message}`);
      return;
    }
    // One line per source and interval: an outage repeats the same error many times a second.
    const now = Date.now();
    const last = this.errorsReported.get(source);
    if (last !== undefined && now - last.at < ERROR_REPORT_INTERVAL_MS) {
      last.repeated += 1;
      return;
    }
    const repeated = last?.repeated ? ` (and ${last.repeated} more since the last report)` : '';
    this.errorsReported.set(source, { at: now, repeated: 0 });
    this.logger.error(`${source}: ${error.message}${repeated}`);
  }

  private relay(): Promise<Relay<unknown>> {
    if (!this.relayPromise) {
      const relay = this.backend.createRelay(this.options.serviceName);
      relay.on('error', (error: Error) => this.reportError('Relay', error));
      const ready = relay.waitUntilReady().then(() => relay);
      this.relayPromise = ready;
      // Forgotten when it never got ready, as a queue is (see `queue`).
      ready.catch(() => {
        if (this.relayPromise !== ready) return;
        this.relayPromise = undefined;
        void relay.close().catch(() => undefined);
      });
    }
    return this.relayPromise;
  }
}

/** The promise's value, or `failure()` thrown once `deadline` (epoch ms) has passed. */
async function beforeDeadline<T>(promise: Promise<T>, deadline: number, failure: () => Error): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(failure()), Math.max(0, deadline - Date.now()))))]);
  } finally {
    clearTimeout(timer);
  }
}

/** The promise's outcome, or 'gave-up' once `ms` have passed. */
async function within<T>(promise: Promise<T>, ms: number): Promise<T | 'gave-up'> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<'gave-up'>((resolve) => (timer = setTimeout(() => resolve('gave-up'), ms)));
  try {
    return await Promise.race([promise, gaveUp]);
  } finally {
    clearTimeout(timer);
  }
}
