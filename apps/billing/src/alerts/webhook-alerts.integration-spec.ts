import type { INestApplication } from '@nestjs/common';
import { QueueName, MessagingService, type QueueBackendOptions } from '@igw/messaging';
import type { UsageEvent } from '@igw/contracts';
import type { ScratchDatabase } from '@igw/persistence';
import { loadEnvironment } from '@igw/config';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { eventually, finishedJobs, createTestDatabase, dropQueueData, testQueueBackend, startWebhookReceiver, verifyWebhookSignature, type WebhookReceiver } from '@igw/testing';
import { AccountAlerts } from './account-alerts';
import { KeySpendLedger } from '../keys/key-spend';
import { LedgerService } from '../ledger/ledger.service';
import { startBilling } from '../billing.app';

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
 * Alerts inside billing, two replicas on one database and queue: usage applied by the ledger
 * (`LedgerService.applyUsageBatch`, as the usage worker calls it) moves budgeted keys' spend, and
 * AccountAlerts, a listener of that move, records one event per key, period, budget and
 * threshold and only when the ledger's transaction commits; concurrent balance changes on both
 * replicas cross a threshold once and the receiver hears of it once.
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
    const { env, providers } = loadEnvironment({ BILLING_PORT: '0', LOG_LEVEL: 'error', ADMIN_TOKEN, WEBHOOK_RETRY_DELAY_MS: '100', WEBHOOK_TIMEOUT_MS: '500', WEBHOOK_MAX_ATTEMPTS: '3', WEBHOOK_ALLOWLIST: '127.0.0.1' });
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

  /** A usage event of 27 credits (0.0000135 USD: 10 input tokens at $1.35 per million), as a gateway reports it. */
  const usage = (accountId: string, keyId: string, occurredAt = new Date()): UsageEvent => ({
    requestId: randomUUID(),
    accountId,
    keyId,
    model: 'openai/gpt-4o-mini',
    endpoint: 'chat.completions',
    units: { input_tokens: 10 },
    creditsMicro: '27000000',
    usd: '0.0000135',
    catalogueRevision: 1,
    prices: [{ unit: 'input_tokens', price: 1.35, per: 1_000_000 }],
    occurredAt: occurredAt.toISOString(),
  });
  const apply = (events: UsageEvent[], replica = 0) => replicas[replica].get(LedgerService).applyUsageBatch(events);
  const times = (count: number, event: () => UsageEvent) => Array.from({ length: count }, event);
  const budgetedKey = async (accountId: string, budget: Record<string, string>) =>
    (await admin<{ id: string }>(`/admin/v1/accounts/${accountId}/keys`, { body: { name: 'ci', budget } })).body.id;
  const today = () => new Date(new Date().toISOString().slice(0, 10));

  it('sends key.budget_threshold at 80 % and key.budget_exhausted at 100 % as the ledger applies usage, once per key, period, budget and threshold', async () => {
    const { accountId } = await accountWithWebhook(100_000);
    const keyId = await budgetedKey(accountId, { limit: '100', unit: 'credits', period: 'day' });
    const spend = () => usage(accountId, keyId);

    // A ledger transaction that rolls back records nothing, and sends nothing.
    await replicas[0]
      .get(DataSource)
      .transaction(async (manager) => {
        await replicas[0].get(KeySpendLedger).applyUsage(manager, [{ keyId, day: today(), spentMicro: 90_000_000n, spentUsd: '0.000045' }]);
        throw new Error('the ledger transaction failed');
      })
      .catch(() => undefined);
    // 54 of 100: under 80 %.
    expect(await apply(times(2, spend))).toBe(2);
    expect(await eventsOf(accountId)).toEqual([]);

    // 81 of 100.
    await apply([spend()]);
    const [threshold] = await settled(accountId, 1);
    expect(threshold.payload).toMatchObject({
      type: 'key.budget_threshold',
      accountId,
      data: { keyId, keyName: 'ci', percent: 80, period: 'day', periodStart: today().toISOString(), unit: 'credits', limit: '100', limitUsd: '0.00005', spent: '81', spentUsd: '0.0000405' },
    });

    // Batches on both replicas at once, serialised by the key's row lock: 81 -> 108 -> 135, one exhausted event, 80 % not again.
    await Promise.all([apply([spend()], 0), apply([spend()], 1)]);
    const [exhausted] = await settled(accountId, 2);
    expect(exhausted.payload).toMatchObject({ type: 'key.budget_exhausted', data: { percent: 100, limit: '100', spent: '108', spentUsd: '0.000054' } });
    // 189: past both, nothing more.
    await apply(times(2, spend));
    expect(await settled(accountId, 2)).toHaveLength(2);

    // A raised budget arms its thresholds again: 189 of 1000, 783, then 810.
    expect((await admin(`/admin/v1/keys/${keyId}`, { method: 'PATCH', body: { budget: { limit: '1000', unit: 'credits', period: 'day' } } })).status).toBe(200);
    await apply(times(22, spend));
    expect(await eventsOf(accountId)).toHaveLength(2);
    await apply([spend()], 1);
    const [raised] = await settled(accountId, 3);
    expect(raised.payload).toMatchObject({ type: 'key.budget_threshold', data: { percent: 80, limit: '1000', limitUsd: '0.0005', spent: '810', spentUsd: '0.000405' } });

    const deliveries = deliveriesTo(accountId);
    expect(deliveries).toHaveLength(3);
    expect(new Set(deliveries.map((delivery) => delivery.headers['x-gateway-event-id'])).size).toBe(3);
    for (const delivery of deliveries) expect(verifyWebhookSignature(secret, delivery.rawBody, delivery.headers['x-gateway-signature'] as string)).toBe(true);
  });

  it('starts a new period below both thresholds, and counts a late row of the old period in neither', async () => {
    const { accountId } = await accountWithWebhook(100_000);
    const keyId = await budgetedKey(accountId, { limit: '100', unit: 'credits', period: 'day' });
    const yesterday = new Date(today().getTime() - 86_400_000);
    // The key as it stands when its budget was set yesterday (the ledger has nothing of it yet).
    await replicas[0].get(DataSource).query(`UPDATE "billing"."api_keys" SET spend_period_start = $2 WHERE id = $1`, [keyId, yesterday.toISOString()]);
    // An hour into the day, or now if the day is younger than that: billing refuses usage from the future.
    const at = (day: Date) => () => usage(accountId, keyId, new Date(day.getTime() + Math.min(3_600_000, Math.max(0, Date.now() - day.getTime() - 1))));

    await apply(times(3, at(yesterday)));
    await apply([at(yesterday)()]);
    await settled(accountId, 2);
    // Today: 54, then 108 in one batch (both thresholds at once) with a late row of yesterday, which counts in no current period.
    await apply(times(2, at(today())));
    await apply([at(today())(), at(yesterday)(), at(today())()]);
    const events = await settled(accountId, 4);
    expect(events.map((event) => `${event.type} ${String(event.payload.data.periodStart)} ${String(event.payload.data.spent)}`).sort()).toEqual([
      `key.budget_exhausted ${today().toISOString()} 108`,
      `key.budget_exhausted ${yesterday.toISOString()} 108`,
      `key.budget_threshold ${today().toISOString()} 108`,
      `key.budget_threshold ${yesterday.toISOString()} 81`,
    ].sort());
  });

  it('compares a USD budget in USD and shows its limit as set', async () => {
    const { accountId } = await accountWithWebhook(100_000);
    // 0.00005 USD: 3 events of 0.0000135 are 81 %.
    const keyId = await budgetedKey(accountId, { limit: '0.00005', unit: 'usd', period: 'month' });
    await apply(times(3, () => usage(accountId, keyId)));
    const [threshold] = await settled(accountId, 1);
    const monthStart = new Date(`${new Date().toISOString().slice(0, 7)}-01T00:00:00.000Z`);
    expect(threshold.payload.data).toEqual({
      keyId,
      keyName: 'ci',
      percent: 80,
      period: 'month',
      periodStart: monthStart.toISOString(),
      unit: 'usd',
      limit: '100',
      limitUsd: '0.00005',
      spent: '81',
      spentUsd: '0.0000405',
    });
  });

  it('records nothing for a key of an account without a webhook, nor for a key without a budget', async () => {
    const account = await admin<{ id: string }>('/admin/v1/accounts', { body: { credits: 10_000 } });
    const keyId = await budgetedKey(account.body.id, { limit: '10', unit: 'credits', period: 'day' });
    expect(await apply(times(2, () => usage(account.body.id, keyId)))).toBe(2);
    const { accountId, keyId: unbudgeted } = await accountWithWebhook(10_000);
    expect(await apply(times(2, () => usage(accountId, unbudgeted)))).toBe(2);
    const [none, alsoNone] = await Promise.all([
      replicas[0].get(DataSource).query(`SELECT count(*)::int AS n FROM "billing"."webhook_events" WHERE account_id = $1`, [account.body.id]),
      replicas[0].get(DataSource).query(`SELECT count(*)::int AS n FROM "billing"."webhook_events" WHERE account_id = $1`, [accountId]),
    ]);
    expect([none[0].n, alsoNone[0].n]).toEqual([0, 0]);
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
