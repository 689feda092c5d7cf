import type { INestApplication } from '@nestjs/common';
import { Logger } from '@nestjs/common';
import { QueueName, usageBatchOf, MessagingService, type QueueBackendOptions } from '@igw/messaging';
import type { UsageEvent } from '@igw/contracts';
import type { ScratchDatabase } from '@igw/persistence';
import { loadEnvironment } from '@igw/config';
import { randomUUID } from 'node:crypto';
import { createTestDatabase, dropQueueData, queryRows, testQueueBackend } from '@igw/testing';
import { startBilling } from '../billing.app';
import { reconcileBalances } from '../ledger/reconciliation';

const ADMIN_TOKEN = 'integration-admin-token-intake-0123456789';

// $0.15 per million input tokens at 2,000,000 credits per USD: 1,000 tokens are 300 credits.
const PRICES = [{ unit: 'input_tokens', price: 0.15, per: 1_000_000 }];
const CREDITS_OF_1000_TOKENS_MICRO = 300_000_000n;

describe('billing refuses usage events that do not add up (the queue is a trust boundary)', () => {
  let database: ScratchDatabase;
  let app: INestApplication;
  let producer: MessagingService;
  let queue: QueueBackendOptions;
  let baseUrl: string;
  const errors: string[] = [];

  const admin = async <T>(urlPath: string, body?: unknown): Promise<T> => {
    const response = await fetch(`${baseUrl}${urlPath}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    expect(response.status).toBeLessThan(300);
    return (await response.json()) as T;
  };
  const sql = <Row>(text: string, params: unknown[] = []) => queryRows<Row>(database.url, text, params);

  async function waitFor(what: string, check: () => Promise<boolean>, timeoutMs = 30_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    queue = testQueueBackend(database.url);
    const { env, providers } = loadEnvironment({ BILLING_PORT: '0', LOG_LEVEL: 'error', ADMIN_TOKEN });
    // Billing's error log is where an operator is alerted: the test reads what it says.
    jest.spyOn(Logger.prototype, 'error').mockImplementation((message: unknown) => void errors.push(String(message)));
    app = await startBilling({ env, providers, databaseUrl: database.url, adminToken: ADMIN_TOKEN, queue });
    baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    producer = new MessagingService({ serviceName: 'test-producer', backend: queue });
  });

  afterAll(async () => {
    await producer?.onApplicationShutdown();
    await app?.close();
    await dropQueueData(queue);
    await database?.drop();
    jest.restoreAllMocks();
  });

  it('applies the sound events of a batch once, and keeps the others aside with their reason, logged by request id', async () => {
    const account = await admin<{ id: string }>('/admin/v1/accounts', { name: 'intake', credits: 1000 });
    const key = await admin<{ id: string }>(`/admin/v1/accounts/${account.id}/keys`, {});
    const other = await admin<{ id: string }>('/admin/v1/accounts', { name: 'victim', credits: 1000 });
    const otherKey = await admin<{ id: string }>(`/admin/v1/accounts/${other.id}/keys`, {});
    const event = (overrides: Partial<Record<keyof UsageEvent, unknown>> = {}): UsageEvent =>
      ({
        requestId: `req-${randomUUID()}`,
        accountId: account.id,
        keyId: key.id,
        model: 'gpt-4o-mini',
        endpoint: 'chat.completions',
        units: { input_tokens: 1000 },
        creditsMicro: CREDITS_OF_1000_TOKENS_MICRO.toString(),
        usd: '0.00015',
        catalogueRevision: 1,
        prices: PRICES,
        occurredAt: new Date().toISOString(),
        ...overrides,
      }) as UsageEvent;
    // One names the deployment that served it; the others, as older gateways journalled them, none.
    const sound = [event({ deployment: 'azure-eastus/gpt-4o-prod' }), event(), event({ units: { input_tokens: 0 }, creditsMicro: '0', usd: '0' })];
    const refused: Array<[UsageEvent, RegExp]> = [
      [event({ units: { input_tokens: -1000 }, creditsMicro: '0', usd: '0' }), /units\.input_tokens is not an integer/],
      [event({ units: { input_tokens: 1.5 } }), /units\.input_tokens is not an integer/],
      [event({ units: { input_tokens: 1e12 }, creditsMicro: '300000000000000', usd: '150' }), /units\.input_tokens is not an integer from 0 to/],
      [event({ creditsMicro: '-300000000', usd: '-0.00015' }), /creditsMicro is not a non-negative integer/],
      [event({ creditsMicro: '1' }), /creditsMicro 1 does not match its units at its prices \(300000000\)/],
      [event({ usd: '5' }), /usd 5 does not match/],
      [event({ prices: [{ unit: 'input_tokens', price: -0.15, per: 1_000_000 }] }), /prices\[0\]\.price is not a non-negative number/],
      [event({ keyId: otherKey.id }), /is not a key of account/],
      [event({ accountId: other.id }), /is not a key of account/],
      [event({ keyId: randomUUID() }), /does not exist/],
      [event({ accountId: 'not-a-uuid' }), /accountId is not a UUID/],
      [event({ occurredAt: new Date(Date.now() + 86_400_000).toISOString() }), /is in the future/],
      [event({ occurredAt: 'yesterday' }), /occurredAt is not a time/],
      [event({ occurredAt: '1970-01-01T00:00:00.000Z' }), /is before 2020/],
      [event({ deployment: 42 }), /deployment is not a string of at most 200 characters/],
      [event({ deployment: 'x'.repeat(201) }), /deployment is not a string of at most 200 characters/],
    ];
    const batch = [sound[0], ...refused.map(([one]) => one), sound[1], sound[2]];
    const data = await usageBatchOf(Buffer.from(batch.map((one) => JSON.stringify(one)).join('\n')));
    await producer.enqueue(QueueName.Usage, 'usage.recordBatch', data);
    // The same batch again (a gateway that retried): nothing is applied or kept twice.
    await producer.enqueue(QueueName.Usage, 'usage.recordBatch', data);

    const rejectedRows = () => sql<{ request_id: string; account_id: string; reason: string; event: UsageEvent }>(`SELECT request_id, account_id, reason, event FROM billing.rejected_usage`);
    await waitFor('the refused events to be kept', async () => (await rejectedRows()).length === refused.length);
    const ledgerRows = () => sql<{ request_id: string; amount_micro: string; deployment: string | null }>(`SELECT request_id, amount_micro::text, deployment FROM billing.ledger_entries WHERE kind = 'usage'`);
    await waitFor('the sound events to be applied', async () => (await ledgerRows()).length === sound.length);
    // Both jobs done: the second one found everything there already.
    await waitFor('both jobs', async () => errors.filter((line) => line.includes(refused[0][0].requestId)).length === 2);

    expect((await ledgerRows()).map((row) => row.request_id).sort()).toEqual(sound.map((one) => one.requestId).sort());
    expect(Object.fromEntries((await ledgerRows()).map((row) => [row.request_id, row.deployment]))).toEqual(Object.fromEntries(sound.map((one) => [one.requestId, one.deployment ?? null])));
    const kept = await rejectedRows();
    expect(kept).toHaveLength(refused.length);
    for (const [one, reason] of refused) {
      const row = kept.find((candidate) => candidate.request_id === one.requestId);
      expect(row?.reason).toMatch(reason);
      expect(row?.event).toEqual(one);
      expect(errors.some((line) => line.includes(one.requestId) && reason.test(line))).toBe(true);
    }
    const balances = await sql<{ id: string; balance_micro: string }>(`SELECT id, balance_micro::text FROM billing.accounts WHERE id = ANY($1::uuid[])`, [[account.id, other.id]]);
    expect(Object.fromEntries(balances.map((row) => [row.id, row.balance_micro]))).toEqual({
      [account.id]: (1000_000_000n - 2n * CREDITS_OF_1000_TOKENS_MICRO).toString(),
      [other.id]: 1000_000_000n.toString(),
    });
    const report = await reconcileBalances({ query: (text, params) => sql(text, params) });
    expect(report.mismatches).toEqual([]);
    expect(report.usageMismatches).toEqual([]);
  });

  it('refuses a batch whose only event is forged, and keeps that event', async () => {
    const forged = { requestId: `req-${randomUUID()}`, accountId: randomUUID(), keyId: randomUUID(), model: 'm', endpoint: 'chat.completions', units: { input_tokens: 10 }, creditsMicro: '-5', usd: '0', catalogueRevision: 1, prices: PRICES, occurredAt: new Date().toISOString() };
    await producer.enqueue(QueueName.Usage, 'usage.recordBatch', await usageBatchOf(Buffer.from(JSON.stringify(forged))));
    await waitFor('the forged event to be kept', async () => (await sql(`SELECT 1 FROM billing.rejected_usage WHERE request_id = $1`, [forged.requestId])).length === 1);
    expect(await sql(`SELECT 1 FROM billing.ledger_entries WHERE request_id = $1`, [forged.requestId])).toEqual([]);
  });
});
