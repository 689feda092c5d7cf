import { QueueName, MessagingService, RpcFailedError, type QueueBackendOptions } from '@igw/messaging';
import type { ScratchDatabase } from '@igw/persistence';
import { createTestDatabase, queryRows } from '@igw/testing';

/**
 * BullMQ's PostgreSQL backend reads its event stream by increasing id, so a completion event
 * whose transaction commits after a later event's is skipped for good (it happened to ~3 % of key
 * look-ups under concurrency: 503 after RPC_TIMEOUT_MS). Here a trigger drops every completion
 * and failure event, the way that race loses one; the caller must still get the reply.
 */
describe('request/reply when the completion event never arrives (PostgreSQL backend)', () => {
  let database: ScratchDatabase;
  let caller: MessagingService;
  let callee: MessagingService;

  beforeAll(async () => {
    database = await createTestDatabase();
    const backend: QueueBackendOptions = { kind: 'postgres', url: database.url, schema: 'bullmq' };
    caller = new MessagingService({ serviceName: 'caller', backend, rpcTimeoutMs: 5_000 });
    callee = new MessagingService({ serviceName: 'callee', backend, rpcTimeoutMs: 5_000 });
    callee.consume(QueueName.BillingRpc, {
      'keys.resolve': async ({ keyHash }) => {
        if (keyHash === 'fail') throw new Error('billing could not answer');
        return { key: null };
      },
    });
    // The first call creates the queue's tables; the trigger goes on them after.
    expect(await caller.request(QueueName.BillingRpc, 'keys.resolve', { keyHash: 'first' })).toEqual({ key: null });
    await queryRows(
      database.url,
      `CREATE FUNCTION bullmq.drop_finish_events() RETURNS trigger LANGUAGE plpgsql AS $$
         BEGIN IF NEW.event IN ('completed', 'failed') THEN RETURN NULL; END IF; RETURN NEW; END $$`,
    );
    await queryRows(database.url, `CREATE TRIGGER drop_finish_events BEFORE INSERT ON bullmq.event FOR EACH ROW EXECUTE FUNCTION bullmq.drop_finish_events()`);
  }, 60_000);

  afterAll(async () => {
    await caller?.onApplicationShutdown();
    await callee?.onApplicationShutdown();
    await database?.drop();
  });

  it('answers with the reply the job holds', async () => {
    const replies = await Promise.all([1, 2, 3, 4].map((i) => caller.request(QueueName.BillingRpc, 'keys.resolve', { keyHash: `k${i}` })));
    expect(replies).toEqual([{ key: null }, { key: null }, { key: null }, { key: null }]);
  });

  it('fails with the handler\'s reason when the job failed', async () => {
    const failure = await caller.request(QueueName.BillingRpc, 'keys.resolve', { keyHash: 'fail' }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(RpcFailedError);
    expect((failure as Error).message).toMatch(/billing could not answer/);
  });
});
