import type { INestApplication } from '@nestjs/common';
import { creditsToMicro } from '@igw/domain';
import { QueueName } from '@igw/contracts';
import { MessagingService, type QueueBackendOptions } from '@igw/messaging';
import type { ScratchDatabase } from '@igw/persistence';
import { loadEnvironment } from '@igw/platform';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { AccountAlerts, type KeySpendChange } from '../../apps/billing/src/alerts/account-alerts';
import { startBilling } from '../../apps/billing/src/billing.app';
import { eventually } from '../support/http';
import { finishedJobs } from '../support/queue-jobs';
import { createTestDatabase, dropQueueData, testQueueBackend } from '../support/test-environment';
import { startWebhookReceiver, verifyWebhookSignature, type WebhookReceiver } from '../support/webhook-receiver';

const ADMIN_TOKEN = 'integration-admin-token-0123456789';

interface EventView {
  id: string;
  type: string;
  status: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  payload: { id: string; type: string; accountId: string; data: Record<string, unknown> };
}

/**
 * Alerts inside billing, two replicas on one database and queue: the key-budget entry point
 * (`AccountAlerts.keySpendChanged`, called in the ledger's transaction) records one event per
 * key, period and threshold and only when its transaction commits; concurrent balance changes
 * on both replicas cross a threshold once and the receiver hears of it once.
 */
describe('webhook alerts in billing', () => {
  const secret = `whsec_${randomUUID()}`;
  let database: ScratchDatabase;
  let queue: QueueBackendOptions;
  const replicas: INestApplication[] = [];
  let urls: string[] = [];
  let receiver: WebhookReceiver;

  beforeAll(async () => {
    database = await createTestDatabase();
    queue = testQueueBackend(database.url);
    receiver = await startWebhookReceiver();
    const { env, providers } = loadEnvironment({ BILLING_PORT: '0', LOG_LEVEL: 'error', ADMIN_TOKEN, WEBHOOK_RETRY_DELAY_MS: '100', WEBHOOK_TIMEOUT_MS: '500', WEBHOOK_MAX_ATTEMPTS: '3' });
    for (let replica = 0; replica < 2; replica++) {
      replicas.push(await startBilling({ env, providers, databaseUrl: database.url, adminToken: ADMIN_TOKEN, queue }));
    }
    urls = await Promise.all(replicas.map(async (app) => (await app.getUrl()).replace('[::1]', '127.0.0.1')));
  });

  afterAll(async () => {
    for (const app of replicas) await app.close();
    await receiver?.close();
    await dropQueueData(queue);
    await database?.drop();
  });

  const admin = async <T>(path: string, init: { method?: string; body?: unknown; replica?: number } = {}): Promise<{ status: number; body: T }> => {
    const response = await fetch(`${urls[init.replica ?? 0]}${path}`, {
      method: init.method ?? (init.body === undefined ? 'GET' : 'POST'),
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });
    const text = await response.text();
    return { status: response.status, body: (text ? JSON.parse(text) : undefined) as T };
  };

  async function accountWithWebhook(credits: number, balanceThreshold?: number): Promise<{ accountId: string; keyId: string }> {
    const account = await admin<{ id: string }>('/admin/v1/accounts', { body: { credits, plan: 'paid' } });
    const key = await admin<{ id: string }>(`/admin/v1/accounts/${account.body.id}/keys`, { body: { name: 'ci' } });
    const set = await admin(`/admin/v1/accounts/${account.body.id}/webhook`, { method: 'PUT', body: { url: receiver.url, secret, balanceThreshold } });
    expect(set.status).toBe(200);
    return { accountId: account.body.id, keyId: key.body.id };
  }

  const eventsOf = async (accountId: string) => (await admin<{ data: EventView[] }>(`/admin/v1/accounts/${accountId}/webhook/events`)).body.data;
  const settled = async (accountId: string, count: number, status = 'delivered'): Promise<EventView[]> => {
    let events: EventView[] = [];
    await eventually(async () => (events = await eventsOf(accountId)).length === count && events.every((event) => event.status === status), 15_000, 25);
    return events;
  };
  const deliveriesTo = (accountId: string) => receiver.received.filter((request) => (JSON.parse(request.rawBody) as { accountId: string }).accountId === accountId);

  /** What the key-rules ledger code does: moves a key's spend in a transaction and tells AccountAlerts, in it. */
  async function keySpendMoves(changes: KeySpendChange[], options: { thenFail?: boolean; replica?: number } = {}): Promise<void> {
    const app = replicas[options.replica ?? 0];
    const alerts = app.get(AccountAlerts);
    await app
      .get(DataSource)
      .transaction(async (manager) => {
        for (const change of changes) await alerts.keySpendChanged(manager, change);
        if (options.thenFail) throw new Error('the ledger transaction failed');
      })
      .catch((error: unknown) => {
        if (!options.thenFail) throw error;
      });
  }

  it('sends key.budget_threshold at 80 % and key.budget_exhausted at 100 %, once per key, period and threshold', async () => {
    const { accountId, keyId } = await accountWithWebhook(1_000);
    const may = new Date('2026-05-01T00:00:00Z');
    const move = (before: number, after: number, periodStart = may): KeySpendChange => ({
      accountId,
      keyId,
      keyName: 'ci',
      limitMicro: creditsToMicro(1_000),
      unit: 'usd',
      period: 'month',
      periodStart,
      spentBeforeMicro: creditsToMicro(before),
      spentAfterMicro: creditsToMicro(after),
    });

    // A transaction that rolls back records nothing, and sends nothing.
    await keySpendMoves([move(0, 900)], { thenFail: true });
    await keySpendMoves([move(0, 799.999999)]);
    expect(await eventsOf(accountId)).toEqual([]);

    await keySpendMoves([move(799.999999, 800)]);
    const [threshold] = await settled(accountId, 1);
    expect(threshold.payload).toMatchObject({
      type: 'key.budget_threshold',
      accountId,
      data: { keyId, keyName: 'ci', percent: 80, period: 'month', periodStart: '2026-05-01T00:00:00.000Z', unit: 'usd', limit: '1000', limitUsd: '0.0005', spent: '800', spentUsd: '0.0004' },
    });

    // Both replicas see the same later moves (a redelivered batch, a race): one exhausted event; 80 % is not sent again.
    await Promise.all([keySpendMoves([move(800, 1_000.5)], { replica: 0 }), keySpendMoves([move(800, 1_000.5)], { replica: 1 }), keySpendMoves([move(0, 900)], { replica: 1 })]);
    const [exhausted] = await settled(accountId, 2);
    expect(exhausted.payload).toMatchObject({ type: 'key.budget_exhausted', data: { percent: 100, spent: '1000.5' } });

    // The next period starts again from nothing.
    await keySpendMoves([move(0, 1_500, new Date('2026-06-01T00:00:00Z'))]);
    const events = await settled(accountId, 4);
    expect(events.map((event) => `${event.type} ${String(event.payload.data.periodStart)}`).sort()).toEqual([
      'key.budget_exhausted 2026-05-01T00:00:00.000Z',
      'key.budget_exhausted 2026-06-01T00:00:00.000Z',
      'key.budget_threshold 2026-05-01T00:00:00.000Z',
      'key.budget_threshold 2026-06-01T00:00:00.000Z',
    ]);
    const deliveries = deliveriesTo(accountId);
    expect(deliveries).toHaveLength(4);
    expect(new Set(deliveries.map((delivery) => delivery.headers['x-gateway-event-id'])).size).toBe(4);
    for (const delivery of deliveries) expect(verifyWebhookSignature(secret, delivery.rawBody, delivery.headers['x-gateway-signature'] as string)).toBe(true);
  });

  it('records nothing for a key of an account without a webhook', async () => {
    const account = await admin<{ id: string }>('/admin/v1/accounts', { body: { credits: 10 } });
    await keySpendMoves([
      { accountId: account.body.id, keyId: randomUUID(), keyName: null, limitMicro: 10n, unit: 'credits', period: 'day', periodStart: new Date(), spentBeforeMicro: 0n, spentAfterMicro: 10n },
    ]);
    expect(await eventsOf(account.body.id)).toEqual([]);
  });

  it('crosses a balance threshold once under concurrent corrections on two replicas, and the receiver hears of it once', async () => {
    const { accountId } = await accountWithWebhook(1_020, 1_000);
    // 40 corrections of -1 at once, alternating between the replicas: 1020 -> 980, through 1000 once.
    const answers = await Promise.all(Array.from({ length: 40 }, (_, index) => admin(`/admin/v1/accounts/${accountId}/credits`, { body: { credits: -1 }, replica: index % 2 })));
    expect(answers.every((answer) => answer.status === 200)).toBe(true);
    const [crossing] = await settled(accountId, 1);
    expect(crossing.payload.data).toMatchObject({ balance: '999', previousBalance: '1000', threshold: '1000', cause: 'credit' });
    // Both replicas' outbox sweeps add its job again: the job id and the row's status keep it to one POST.
    await Promise.all(replicas.map((app) => app.get(AccountAlerts).sweep(0)));
    expect(deliveriesTo(accountId)).toHaveLength(1);
  });

  it('delivers, once, an event whose process died between its commit and the hand-over to the queue', async () => {
    const { accountId } = await accountWithWebhook(10);
    const id = randomUUID();
    const body = JSON.stringify({ id, type: 'balance.below_threshold', createdAt: new Date().toISOString(), accountId, data: { balance: '1' } });
    // The row as the dead process committed it, with no job in the queue.
    await replicas[0].get(DataSource).query(`INSERT INTO "billing"."webhook_events" (id, account_id, type, dedupe_key, body) VALUES ($1, $2, 'balance.below_threshold', $3, $4)`, [
      id,
      accountId,
      `balance:${accountId}:crash`,
      body,
    ]);
    await Promise.all([...replicas, ...replicas].map((app) => app.get(AccountAlerts).sweep(0)));
    const [event] = await settled(accountId, 1);
    expect(event).toMatchObject({ id, status: 'delivered', attempts: 1 });
    await Promise.all(replicas.map((app) => app.get(AccountAlerts).sweep(0)));
    const deliveries = deliveriesTo(accountId);
    expect(deliveries.map((delivery) => delivery.rawBody)).toEqual([body]);
  });

  /** A balance crossing on a fresh account: a correction from 10 to 9 credits under a threshold of 10. */
  async function crossing(): Promise<string> {
    const { accountId } = await accountWithWebhook(10, 10);
    expect((await admin(`/admin/v1/accounts/${accountId}/credits`, { body: { credits: -1 } })).status).toBe(200);
    return accountId;
  }

  it('retries an attempt that gets no answer within WEBHOOK_TIMEOUT_MS, and reads only the start of a long error answer', async () => {
    receiver.failNext(1, 500, { hang: true });
    const hanging = await crossing();
    const [event] = await settled(hanging, 1);
    expect(event).toMatchObject({ attempts: 2, lastStatus: 204 });
    expect(deliveriesTo(hanging).map((delivery) => delivery.answeredStatus)).toEqual([0, 204]);

    receiver.failNext(3, 503, { answerBytes: 5_000_000 });
    const verbose = await crossing();
    const [failed] = await settled(verbose, 1, 'failed');
    // WEBHOOK_MAX_ATTEMPTS=3: given up after the third, and nothing more is sent.
    expect(failed).toMatchObject({ attempts: 3, lastStatus: 503 });
    expect(failed.lastError!.length).toBeLessThan(600);
    expect(failed.lastError).toMatch(/^answered 503: x+$/);
    // The given-up job is kept as failed (counted by igw_queue_jobs{state="failed"}).
    expect((await finishedJobs(queue, QueueName.Webhooks, [failed.id])).map((job) => job.state)).toEqual(['failed']);
    await Promise.all(replicas.map((app) => app.get(AccountAlerts).sweep(0)));
    expect(deliveriesTo(verbose)).toHaveLength(3);
  });

  it('finishes, without sending anything, a job that names no event of the outbox', async () => {
    const producer = new MessagingService({ serviceName: 'test-producer', backend: queue });
    const before = receiver.received.length;
    const ids = [`forged-${randomUUID()}`, `forged-${randomUUID()}`];
    try {
      await producer.enqueue(QueueName.Webhooks, 'webhooks.deliver', { eventId: 'not-an-id' }, { jobId: ids[0] });
      await producer.enqueue(QueueName.Webhooks, 'webhooks.deliver', { eventId: randomUUID() }, { jobId: ids[1] });
      const jobs = await finishedJobs(queue, QueueName.Webhooks, ids);
      expect(jobs).toEqual([
        { state: 'completed', returnvalue: { outcome: 'unknown' } },
        { state: 'completed', returnvalue: { outcome: 'unknown' } },
      ]);
    } finally {
      await producer.onApplicationShutdown();
    }
    expect(receiver.received.length).toBe(before);
  });
});
