import type { INestApplication } from '@nestjs/common';
import { QueueName, usageBatchOf, MessagingService, type QueueBackendOptions } from '@igw/messaging';
import type { UsageEvent } from '@igw/contracts';
import type { ScratchDatabase } from '@igw/persistence';
import { hashApiKey } from '@igw/http';
import { loadEnvironment } from '@igw/config';
import { randomUUID } from 'node:crypto';
import { finishedJobs, createTestDatabase, dropQueueData, queryRows, testQueueBackend } from '@igw/testing';
import { startBilling } from './billing.app';
import { crossedBudgetPercent, KeySpendLedger } from './keys/key-spend';

const ADMIN_TOKEN = 'integration-admin-token-0123456789';

describe('billing service', () => {
  let database: ScratchDatabase;
  let app: INestApplication;
  let producer: MessagingService;
  let baseUrl: string;
  let queue: QueueBackendOptions;

  const admin = (path: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
    fetch(`${baseUrl}${path}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${init.token ?? ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });

  const ledgerSum = async (accountId: string): Promise<bigint> => {
    const rows = await queryRows<{ sum: string }>(database.url, 'SELECT COALESCE(SUM(amount_micro), 0)::text AS sum FROM billing.ledger_entries WHERE account_id = $1', [accountId]);
    return BigInt(rows[0].sum);
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    queue = testQueueBackend(database.url);
    const { env, providers } = loadEnvironment({ BILLING_PORT: '0', LOG_LEVEL: 'error', ADMIN_TOKEN });
    app = await startBilling({ env, providers, databaseUrl: database.url, adminToken: ADMIN_TOKEN, queue });
    baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    producer = new MessagingService({ serviceName: 'test-producer', backend: queue });
  });

  afterAll(async () => {
    await producer?.onApplicationShutdown();
    await app?.close();
    await dropQueueData(queue);
    await database?.drop();
  });

  async function createAccount(body: Record<string, unknown>): Promise<{ id: string; balance: number }> {
    const response = await admin('/admin/v1/accounts', { method: 'POST', body });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; balance: number };
  }

  async function createKey(accountId: string): Promise<{ id: string; key: string; prefix: string }> {
    const response = await admin(`/admin/v1/accounts/${accountId}/keys`, { method: 'POST', body: {} });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; key: string; prefix: string };
  }

  /** A usage batch as gateways send it. */
  const batchOf = (events: readonly unknown[]) => usageBatchOf(Buffer.from(events.map((event) => JSON.stringify(event)).join('\n')));

  const balanceOf = async (accountId: string): Promise<number> => ((await (await admin(`/admin/v1/accounts/${accountId}`)).json()) as { balance: number }).balance;

  /** What billing applied of each job, once every one of them has been run. */
  const appliedBy = async (jobIds: string[]): Promise<number[]> => {
    const jobs = await finishedJobs(queue, QueueName.Usage, jobIds);
    expect(jobs.map((job) => job.state)).toEqual(jobIds.map(() => 'completed'));
    return jobs.map((job) => (job.returnvalue as { applied: number }).applied);
  };

  async function waitForBalance(accountId: string, expected: number): Promise<void> {
    const deadline = Date.now() + 10_000;
    for (;;) {
      const account = (await (await admin(`/admin/v1/accounts/${accountId}`)).json()) as { balance: number };
      if (account.balance === expected) return;
      if (Date.now() > deadline) throw new Error(`balance stayed ${account.balance}, expected ${expected}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  it('creates accounts with opening credits written to the ledger', async () => {
    const account = await createAccount({ name: 'acme', credits: 1000, plan: 'paid', lowBalanceThreshold: 50 });
    expect(account).toMatchObject({ name: 'acme', balance: 1000, plan: 'paid', lowBalanceThreshold: 50, status: 'active' });
    expect(await ledgerSum(account.id)).toBe(1_000_000_000n);
  });

  it('puts an account opened with credits on the paid plan unless told otherwise, and an empty one on the free plan', async () => {
    expect(await createAccount({ usd: 5 })).toMatchObject({ plan: 'paid' });
    expect(await createAccount({ credits: 1000 })).toMatchObject({ plan: 'paid' });
    expect(await createAccount({ credits: 1000, plan: 'free' })).toMatchObject({ plan: 'free' });
    expect(await createAccount({})).toMatchObject({ plan: 'free' });
    expect(await createAccount({ credits: 0 })).toMatchObject({ plan: 'free' });
  });

  it('adds and removes credits through the ledger, keeping balance = sum of entries', async () => {
    const account = await createAccount({ credits: 10 });
    let response = await admin(`/admin/v1/accounts/${account.id}/credits`, { method: 'POST', body: { credits: 2.5, reason: 'top-up' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ balance: 12.5 });
    response = await admin(`/admin/v1/accounts/${account.id}/credits`, { method: 'POST', body: { credits: -20 } });
    expect(await response.json()).toEqual({ balance: -7.5 });
    expect(await ledgerSum(account.id)).toBe(-7_500_000n);
  });

  it('takes amounts in USD, converted exactly at CREDITS_PER_USD (2,000,000 by default)', async () => {
    const account = await createAccount({ name: 'usd', usd: 10, plan: 'paid' });
    expect(account).toMatchObject({ balance: 20_000_000, lowBalanceThreshold: 100_000 });
    expect(await ledgerSum(account.id)).toBe(20_000_000_000_000n);
    let response = await admin(`/admin/v1/accounts/${account.id}/credits`, { method: 'POST', body: { usd: 0.0000005, reason: 'smallest step' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({ balance: 20_000_001 });
    response = await admin(`/admin/v1/accounts/${account.id}/credits`, { method: 'POST', body: { usd: -2.5 } });
    expect(await response.json()).toEqual({ balance: 15_000_001 });
    expect(await ledgerSum(account.id)).toBe(15_000_001_000_000n);
    const usd = await queryRows<{ usd: string }>(database.url, "SELECT usd::text AS usd FROM billing.ledger_entries WHERE account_id = $1 AND reason = 'smallest step'", [account.id]);
    expect(Number(usd[0].usd)).toBe(0.0000005);
  });

  it.each([
    ['/admin/v1/accounts', { credits: 10, usd: 1 }, 'usd: Expected credits or usd, not both. Received both'],
    ['/admin/v1/accounts', { usd: 'ten' }, "usd: Expected a number. Received string 'ten'"],
    ['/admin/v1/accounts', { usd: -1 }, 'usd: Expected a USD amount from 0 to 500000 (at 2000000 credits per USD). Received -1'],
    ['/admin/v1/accounts', { usd: 500_001 }, 'usd: Expected a USD amount from 0 to 500000 (at 2000000 credits per USD). Received 500001'],
    ['/admin/v1/accounts', { usd: 1e-13 }, 'usd: Expected a USD amount worth a whole number of micro-credits at 2000000 credits per USD. Received 0.0000000000001'],
    ['credits', { credits: 1, usd: 1 }, 'usd: Expected credits or usd, not both. Received both'],
    ['credits', { usd: 0 }, 'usd: Expected a number other than 0. Received number 0'],
    ['credits', { usd: -500_001 }, 'usd: Expected a USD amount from -500000 to 500000 (at 2000000 credits per USD). Received -500001'],
    ['credits', {}, 'credits: Expected a number. Received nothing'],
  ])('refuses the USD amount at %s %j with a 400 and changes nothing', async (target, body, message) => {
    const account = await createAccount({ credits: 5 });
    const path = target === 'credits' ? `/admin/v1/accounts/${account.id}/credits` : target;
    const response = await admin(path, { method: 'POST', body });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ statusCode: 400, path, message: `Body validation error! ${message}` });
    expect(await ledgerSum(account.id)).toBe(5_000_000n);
  });

  it('names usd when a USD top-up would take the balance past its column, and keeps the ledger whole', async () => {
    const account = await createAccount({ credits: 1000 });
    for (let topUp = 0; topUp < 9; topUp++) {
      expect((await admin(`/admin/v1/accounts/${account.id}/credits`, { method: 'POST', body: { credits: 1e12 } })).status).toBe(200);
    }
    const response = await admin(`/admin/v1/accounts/${account.id}/credits`, { method: 'POST', body: { usd: 500_000 } });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({
      message: 'Body validation error! usd: Expected an amount that keeps the balance within ±9223372036854.775807 credits. Received 500000',
    });
    expect(await ledgerSum(account.id)).toBe(9_000_000_001_000n * 1_000_000n);
  });

  it('takes a null credits as no opening balance, and usd beside a null credits', async () => {
    expect(await createAccount({ credits: null })).toMatchObject({ balance: 0 });
    expect(await createAccount({ credits: null, usd: 1 })).toMatchObject({ balance: 2_000_000 });
    const response = await admin('/admin/v1/accounts', { method: 'POST', body: { usd: null } });
    expect(response.status).toBe(400);
    expect(await response.json()).toMatchObject({ message: 'Body validation error! usd: Expected a number. Received null' });
  });

  it('lists an account\'s keys, newest first, revoked ones included, never the key itself', async () => {
    const account = await createAccount({ credits: 1 });
    const first = await createKey(account.id);
    const second = await createKey(account.id);
    expect((await admin(`/admin/v1/keys/${first.id}`, { method: 'DELETE' })).status).toBe(204);
    const other = await createAccount({ credits: 1 });
    await createKey(other.id);

    const response = await admin(`/admin/v1/accounts/${account.id}/keys`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).not.toContain(first.key);
    expect(text).not.toContain(second.key);
    const list = JSON.parse(text) as { object: string; data: Array<Record<string, unknown>> };
    expect(list.object).toBe('list');
    expect(list.data.map((key) => key.id)).toEqual([second.id, first.id]);
    expect(Object.keys(list.data[0]).sort()).toEqual(['accountId', 'budget', 'cache', 'concurrency', 'createdAt', 'expiresAt', 'id', 'metadata', 'models', 'name', 'prefix', 'revokedAt', 'rpm', 'spend']);
    expect(list.data[0]).toMatchObject({ prefix: second.prefix, accountId: account.id, revokedAt: null });
    expect(typeof list.data[1].revokedAt).toBe('string');

    const missing = await admin(`/admin/v1/accounts/${randomUUID()}/keys`);
    expect(missing.status).toBe(404);
  });

  it('stores only a hash of each key and answers the balance record for it', async () => {
    const account = await createAccount({ credits: 40, plan: 'free', lowBalanceThreshold: 100 });
    const key = await createKey(account.id);
    expect(key.key.startsWith(key.prefix)).toBe(true);
    const rows = await queryRows<{ key_hash: string; prefix: string }>(database.url, 'SELECT key_hash, prefix FROM billing.api_keys WHERE id = $1', [key.id]);
    expect(rows[0].key_hash).not.toContain(key.key);
    expect(rows[0].key_hash).toMatch(/^[0-9a-f]{64}$/);

    const before = Date.now();
    const response = await fetch(`${baseUrl}/v1/billing/balance`, { headers: { authorization: `Bearer ${key.key}` } });
    expect(response.status).toBe(200);
    const balance = (await response.json()) as Record<string, unknown>;
    expect(balance).toMatchObject({ balance: 40, lowBalance: true, lowBalanceThreshold: 100, autoDebitStatus: 'disabled', status: 'active' });
    expect(typeof balance.statusExplanation).toBe('string');
    expect(Date.parse(balance.lastUpdated as string)).toBeGreaterThanOrEqual(before - 1000);
  });

  it('applies a usage event exactly once however often it is delivered', async () => {
    const account = await createAccount({ credits: 100 });
    const key = await createKey(account.id);
    const event: UsageEvent = {
      requestId: randomUUID(),
      accountId: account.id,
      keyId: key.id,
      model: 'openai/gpt-4o-mini',
      endpoint: 'chat.completions',
      units: { input_tokens: 10, output_tokens: 20 },
      // Billing checks the charge: 10 input tokens at $1.35 per million are $0.0000135, 27 credits (output tokens are free here).
      creditsMicro: '27000000',
      usd: '0.0000135',
      catalogueRevision: 1,
      prices: [{ unit: 'input_tokens', price: 1.35, per: 1_000_000 }],
      occurredAt: new Date().toISOString(),
    };
    // The same event under two job ids: only the ledger's unique request id can stop the second.
    const jobIds = [`${event.requestId}-a`, `${event.requestId}-b`];
    for (const jobId of jobIds) await producer.enqueue(QueueName.Usage, 'usage.recordBatch', await batchOf([event]), { jobId });
    // Both deliveries have been run: one of them applied the event, the other nothing.
    expect((await appliedBy(jobIds)).sort()).toEqual([0, 1]);
    expect(await balanceOf(account.id)).toBe(73);
    expect(await ledgerSum(account.id)).toBe(73_000_000n);
    // What gateways are told alongside the balance: the usage charges it already includes.
    const reply = await producer.request(QueueName.BillingRpc, 'keys.resolve', { keyHash: hashApiKey(key.key) });
    expect(reply.key).toMatchObject({ balanceMicro: '73000000', usageSpentMicro: '27000000' });
  });

  it('moves a budgeted key\'s spend with its ledger rows: in their UTC period only, once each, and tells the listeners of the crossing', async () => {
    const account = await createAccount({ credits: 1_000 });
    const response = await admin(`/admin/v1/accounts/${account.id}/keys`, { method: 'POST', body: { budget: { limit: '100', unit: 'credits', period: 'day' } } });
    const key = (await response.json()) as { id: string; key: string };
    const crossings: string[] = [];
    app.get(KeySpendLedger).addListener(async (_manager, changes) => {
      for (const change of changes.filter((moved) => moved.keyId === key.id)) {
        for (const percent of [80, 100]) if (crossedBudgetPercent(change, percent)) crossings.push(`${percent}% at ${change.after.spentMicro}`);
      }
    });
    // 27 credits an event (see the test above).
    const event = (occurredAt: Date): UsageEvent => ({
      requestId: randomUUID(),
      accountId: account.id,
      keyId: key.id,
      model: 'openai/gpt-4o-mini',
      endpoint: 'chat.completions',
      units: { input_tokens: 10 },
      creditsMicro: '27000000',
      usd: '0.0000135',
      catalogueRevision: 1,
      prices: [{ unit: 'input_tokens', price: 1.35, per: 1_000_000 }],
      occurredAt: occurredAt.toISOString(),
    });
    const now = new Date();
    const today = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate()));
    const yesterday = new Date(today.getTime() - 3_600_000);
    const todays = [event(now), event(now), event(now)];
    // Yesterday's usage arriving today counts in no current period; today's three do, a repeat once.
    const jobIds = [`${randomUUID()}-a`, `${randomUUID()}-b`];
    await producer.enqueue(QueueName.Usage, 'usage.recordBatch', await batchOf([event(yesterday), ...todays.slice(0, 2)]), { jobId: jobIds[0] });
    await producer.enqueue(QueueName.Usage, 'usage.recordBatch', await batchOf([todays[1], todays[2]]), { jobId: jobIds[1] });
    expect((await appliedBy(jobIds)).sort()).toEqual([1, 3]);
    const shown = (await (await admin(`/admin/v1/keys/${key.id}`)).json()) as { spend: { spent: string; periodStart: string } };
    expect(shown.spend).toMatchObject({ spent: '81', periodStart: today.toISOString() });
    const rows = await queryRows<{ sum: string; all: string }>(
      database.url,
      `SELECT (-SUM(amount_micro) FILTER (WHERE occurred_at >= $2))::text AS sum, (-SUM(amount_micro))::text AS all FROM billing.ledger_entries WHERE key_id = $1`,
      [key.id, today.toISOString()],
    );
    expect(rows[0]).toEqual({ sum: '81000000', all: '108000000' });
    // 54 then 81 of 100: the 80 % crossing, once.
    expect(crossings).toEqual(['80% at 81000000']);
    const reply = await producer.request(QueueName.BillingRpc, 'keys.resolve', { keyHash: hashApiKey(key.key) });
    expect(reply.key?.keySpend).toMatchObject({ spentMicro: '81000000', appliedMicro: '108000000', periodStart: today.getTime() });
    expect(reply.key?.rules).toEqual({ budget: { limit: '100', unit: 'credits', period: 'day', limitMicro: '100000000' } });
  });

  it('applies a gateway\'s batch of events once each, across accounts, repeats and redelivered batches', async () => {
    const [first, second] = [await createAccount({ credits: 100 }), await createAccount({ credits: 50 })];
    const [firstKey, secondKey] = [await createKey(first.id), await createKey(second.id)];
    const event = (accountId: string, keyId: string, credits: number): UsageEvent => ({
      requestId: randomUUID(),
      accountId,
      keyId,
      model: 'openai/gpt-4o-mini',
      endpoint: 'chat.completions',
      // At $0.50 per million tokens (a credit per token), the charge billing checks.
      units: { input_tokens: credits, output_tokens: 20 },
      creditsMicro: String(credits * 1_000_000),
      usd: `0.${String(credits * 5).padStart(7, '0')}`,
      catalogueRevision: 1,
      prices: [{ unit: 'input_tokens', price: 0.5, per: 1_000_000 }],
      occurredAt: new Date().toISOString(),
    });
    const a1 = event(first.id, firstKey.id, 3);
    const a2 = event(first.id, firstKey.id, 4);
    const b1 = event(second.id, secondKey.id, 5);
    // a1 twice in one batch; the whole batch delivered three times; a2 again in a batch of its own.
    const batch = await batchOf([a1, b1, a2, a1]);
    const jobIds = [1, 2, 3, 4].map((delivery) => `${a1.requestId}-${delivery}`);
    for (const jobId of jobIds.slice(0, 3)) await producer.enqueue(QueueName.Usage, 'usage.recordBatch', batch, { jobId });
    await producer.enqueue(QueueName.Usage, 'usage.recordBatch', await batchOf([a2]), { jobId: jobIds[3] });
    // Every delivery has been run, and the three events were applied once in all.
    expect((await appliedBy(jobIds)).reduce((sum, applied) => sum + applied, 0)).toBe(3);
    expect(await balanceOf(first.id)).toBe(93);
    expect(await balanceOf(second.id)).toBe(45);
    expect(await ledgerSum(first.id)).toBe(93_000_000n);
    expect(await ledgerSum(second.id)).toBe(45_000_000n);
    const reply = await producer.request(QueueName.BillingRpc, 'keys.resolve', { keyHash: hashApiKey(firstKey.key) });
    expect(reply.key).toMatchObject({ usageSpentMicro: '7000000' });
  });

  it('applies the rest of a batch when one of its events cannot be applied', async () => {
    const account = await createAccount({ credits: 20 });
    const key = await createKey(account.id);
    const good = { requestId: randomUUID(), accountId: account.id, keyId: key.id, model: 'm', endpoint: 'embeddings', units: { input_tokens: 1 }, creditsMicro: '2000000', usd: '0.000001', catalogueRevision: 1, prices: [{ unit: 'input_tokens', price: 1, per: 1_000_000 }], occurredAt: new Date().toISOString() };
    const orphan = { ...good, requestId: randomUUID(), accountId: randomUUID() };
    await producer.enqueue(QueueName.Usage, 'usage.recordBatch', await batchOf([orphan, good]), { attempts: 1 });
    await waitForBalance(account.id, 18);
    expect(await ledgerSum(account.id)).toBe(18_000_000n);
  });

  it('refuses a revoked key at once', async () => {
    const account = await createAccount({ credits: 5 });
    const key = await createKey(account.id);
    const headers = { authorization: `Bearer ${key.key}` };
    expect((await fetch(`${baseUrl}/v1/billing/balance`, { headers })).status).toBe(200);
    expect((await admin(`/admin/v1/keys/${key.id}`, { method: 'DELETE' })).status).toBe(204);
    const refused = await fetch(`${baseUrl}/v1/billing/balance`, { headers });
    expect(refused.status).toBe(401);
    expect(((await refused.json()) as { message: string }).message).toMatch(/valid API key is required/);
  });

  it.each([
    ['no token', undefined, 401],
    ['a wrong token', 'not-the-admin-token-at-all', 401],
  ])('refuses the admin API with %s', async (_label, token, status) => {
    const response = await fetch(`${baseUrl}/admin/v1/accounts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
      body: '{}',
    });
    expect(response.status).toBe(status);
  });

  it.each([
    ['an unknown account', `/admin/v1/accounts/${randomUUID()}`],
    ['an id that is not a uuid', '/admin/v1/accounts/not-a-uuid'],
  ])('answers 404 for %s', async (_label, path) => {
    const response = await admin(path);
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ statusCode: 404, path });
  });

  it.each([
    [{ plan: 'gold' }, /plan/],
    [{ credits: 'many' }, /credits/],
    [{ credits: -1 }, /credits/],
  ])('rejects an invalid account body %j', async (body, field) => {
    const response = await admin('/admin/v1/accounts', { method: 'POST', body });
    expect(response.status).toBe(400);
    const error = (await response.json()) as { message: string };
    expect(error.message).toMatch(/^Body validation error!/);
    expect(error.message).toMatch(field);
  });
});
