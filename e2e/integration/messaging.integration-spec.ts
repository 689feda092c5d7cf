import type { EventEmitter } from 'node:events';
import { Logger } from '@nestjs/common';
import { QueueName, usageBatchEvents, usageBatchOf, MessagingService, RpcTimeoutError, type QueueBackendOptions } from '@igw/messaging';
import type { ScratchDatabase } from '@igw/persistence';
import type { Queue } from 'bullmq';
import { eventually, createTestDatabase, dropQueueData, uniqueQueuePrefix } from '@igw/testing';

const redisUrl = process.env.REDIS_URL;
const backends: Array<[string, (databaseUrl: string) => QueueBackendOptions]> = [
  ['postgres', (databaseUrl) => ({ kind: 'postgres', url: databaseUrl, schema: 'bullmq' })],
];
// The Redis backend is tested where Redis is configured (CI's second pass sets REDIS_URL).
if (redisUrl) backends.push(['redis', () => ({ kind: 'redis', url: redisUrl, prefix: uniqueQueuePrefix() })]);
else it.skip('messaging on redis (REDIS_URL is not set)', () => undefined);

describe.each(backends)('messaging on %s', (_name, backendFor) => {
  let database: ScratchDatabase;
  let caller: MessagingService;
  let callee: MessagingService;
  let backend: QueueBackendOptions;

  beforeAll(async () => {
    database = await createTestDatabase();
    backend = backendFor(database.url);
    caller = new MessagingService({ serviceName: 'caller', backend, rpcTimeoutMs: 5_000 });
    callee = new MessagingService({ serviceName: 'callee', backend, rpcTimeoutMs: 5_000 });
  });

  afterAll(async () => {
    await caller?.onApplicationShutdown();
    await callee?.onApplicationShutdown();
    await dropQueueData(backend);
    await database?.drop();
  });

  it('answers a request/reply call through a worker of another service', async () => {
    callee.consume(QueueName.BillingRpc, {
      'keys.resolve': async ({ keyHash }) => ({
        key: { keyId: 'k', accountId: keyHash, plan: 'paid' as const, status: 'active' as const, limits: {}, balanceMicro: '5', balanceVersion: 1, usageSpentMicro: '0' },
      }),
    });
    const reply = await caller.request(QueueName.BillingRpc, 'keys.resolve', { keyHash: 'abc' });
    expect(reply.key?.accountId).toBe('abc');
  });

  it("removes a stored-responses job once its reply is read, and keeps other queues' jobs for removeOnComplete's minute", async () => {
    callee.consume(QueueName.ResponsesRpc, {
      'responses.get': async () => ({ response: null }),
      'responses.save': async () => ({ saved: true as const }),
      'responses.delete': async () => ({ deleted: false }),
      'responses.conversation': async () => ({ previousFound: false, tooLarge: false, packed: null }),
      'responses.inputItems': async () => ({ found: false, items: [], hasMore: false }),
    });
    expect(await caller.request(QueueName.ResponsesRpc, 'responses.get', { accountId: 'a', id: 'resp_x' })).toEqual({ response: null });
    const completed = async (name: QueueName) => (await (caller as unknown as { queue(name: string): Queue }).queue(name).getJobCounts('completed')).completed;
    await eventually(async () => (await completed(QueueName.ResponsesRpc)) === 0, 5_000);
    // The key look-up of the test before is still there.
    expect(await completed(QueueName.BillingRpc)).toBeGreaterThanOrEqual(1);
  });

  it('fails a request/reply call that nobody answers with a timeout error', async () => {
    await expect(caller.request(QueueName.Decisions, 'decisions.ping', {}, 300)).rejects.toBeInstanceOf(RpcTimeoutError);
  });

  it('tells a timed-out caller whether a worker had taken the job (the decisions gateway bills only then)', async () => {
    const nobody = await caller.request(QueueName.Decisions, 'decisions.ping', {}, 300).catch((error: unknown) => error);
    expect(nobody).toBeInstanceOf(RpcTimeoutError);
    expect((nobody as RpcTimeoutError).workerStarted).toBe(false);
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let taken = 0;
    const worker = callee.consume(QueueName.Decisions, {
      'decisions.ping': async () => ({ ok: true as const }),
      'decisions.decide': async () => {
        taken++;
        await held;
        return { ok: true as const, answers: [], usage: { input_tokens: 0, output_tokens: 0 } };
      },
    });
    const slow = await caller.request(QueueName.Decisions, 'decisions.decide', {} as never, 1_000).catch((error: unknown) => error);
    release();
    expect(slow).toBeInstanceOf(RpcTimeoutError);
    expect((slow as RpcTimeoutError).workerStarted).toBe(true);
    expect(taken).toBe(1);
    await worker.close();
  });

  it('lets a stopping worker finish the job it is running, within its drain time', async () => {
    const stopping = new MessagingService({ serviceName: 'stopping', backend, rpcTimeoutMs: 5_000, workerDrainMs: 10_000 });
    let started = false;
    let finished = false;
    stopping.consume(QueueName.Decisions, {
      'decisions.ping': async () => ({ ok: true as const }),
      'decisions.decide': async () => {
        started = true;
        // Slow on purpose: a shutdown that did not wait for the job would be over before it.
        await new Promise((resolve) => setTimeout(resolve, 800));
        finished = true;
        return { ok: true as const, answers: [], usage: { input_tokens: 3, output_tokens: 0 } };
      },
    });
    const reply = caller.request(QueueName.Decisions, 'decisions.decide', {} as never, 10_000);
    await waitFor(() => started);
    await stopping.onApplicationShutdown();
    expect(finished).toBe(true);
    await expect(reply).resolves.toMatchObject({ ok: true, usage: { input_tokens: 3 } });
  });

  it('delivers a work job once even when it is added twice with the same job id', async () => {
    const seen: string[] = [];
    callee.consume(QueueName.Usage, {
      'usage.recordBatch': async (batch) => {
        const events = usageBatchEvents(batch);
        seen.push(...events.map((event) => event.requestId));
        return { applied: events.length };
      },
    });
    const event = {
      requestId: 'req-1',
      accountId: 'a',
      keyId: 'k',
      model: 'm',
      endpoint: 'chat.completions',
      units: { input_tokens: 1 },
      creditsMicro: '1',
      usd: '0',
      catalogueRevision: 1,
      prices: [],
      occurredAt: new Date().toISOString(),
    };
    const batch = await usageBatchOf(Buffer.from(JSON.stringify(event)));
    await caller.enqueue(QueueName.Usage, 'usage.recordBatch', batch, { jobId: 'batch-1' });
    await caller.enqueue(QueueName.Usage, 'usage.recordBatch', batch, { jobId: 'batch-1' });
    // A job added after both: workers take jobs in the order they were added, so a second copy
    // of batch-1 would have been handed to the handler before this one.
    const marker = await usageBatchOf(Buffer.from(JSON.stringify({ ...event, requestId: 'req-marker' })));
    await caller.enqueue(QueueName.Usage, 'usage.recordBatch', marker, { jobId: 'batch-marker' });
    await waitFor(() => seen.includes('req-marker'));
    expect(seen).toEqual(['req-1', 'req-marker']);
  });

  it('broadcasts a topic to every subscriber, with the retained value for late ones', async () => {
    const early: number[] = [];
    await callee.subscribe('catalogue.revision.changed', ({ revision }) => void early.push(revision));
    await caller.publish('catalogue.revision.changed', { revision: 7 }, { retainMs: 60_000 });
    await waitFor(() => early.includes(7));

    const late = new MessagingService({ serviceName: 'late', backend, rpcTimeoutMs: 5_000 });
    try {
      const received: number[] = [];
      await late.subscribe('catalogue.revision.changed', ({ revision }) => void received.push(revision));
      await waitFor(() => received.includes(7));
    } finally {
      await late.onApplicationShutdown();
    }
  });

  it('reports a connection error as an error while it runs, and only at debug level once it is stopping (Ctrl-C may stop the server first)', async () => {
    const service = new MessagingService({ serviceName: 'noisy', backend, rpcTimeoutMs: 5_000 });
    const errors = jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
    const debug = jest.spyOn(Logger.prototype, 'debug').mockImplementation(() => undefined);
    try {
      await service.subscribe('catalogue.revision.changed', () => undefined);
      const relay = await (service as unknown as { relayPromise: Promise<EventEmitter> }).relayPromise;
      const terminated = () => new Error('terminating connection due to administrator command');
      relay.emit('error', terminated());
      expect(errors).toHaveBeenCalledWith('Relay: terminating connection due to administrator command');
      service.beforeApplicationShutdown();
      relay.emit('error', terminated());
      expect(errors).toHaveBeenCalledTimes(1);
      expect(debug).toHaveBeenCalledWith('Relay while stopping: terminating connection due to administrator command');
    } finally {
      errors.mockRestore();
      debug.mockRestore();
      await service.onApplicationShutdown();
    }
  });
});

async function waitFor(condition: () => boolean, timeoutMs = 5_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
