import path from 'node:path';
import { ErrorMessages, type UsageEvent } from '@igw/contracts';
import { QueueName, usageBatchOf, MessagingService, type QueueBackendOptions } from '@igw/messaging';
import { creditsToMicro } from '@igw/domain';
import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { eventually, finishedJobs, createTestDatabase, dropQueueData, queryRows, testQueueBackend } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { fireMixedLoad, spendUntilRefused } from './support/billing-load';
import { call } from './support/http';
import { childEnvironment, startHealthyService, type ServiceProcess } from './support/service-process';

const ADMIN_TOKEN = 'exactness-admin-token-0123456789';
const REQUESTS = 2000;
const CONCURRENCY = 40;
const OPENING_CREDITS = 1_000_000;

/**
 * Exact billing under load: many concurrent paid requests (chat, streamed chat, embeddings) through two
 * gateway replicas, billing restarted mid-run, every usage event delivered a second time;
 * then ledger = sum of the responses' meta.usage.credits_used = balance drop, to the
 * micro-credit, with exactly one ledger entry per request.
 */
describe('billing stays exact under concurrent load, restarts and redelivery', () => {
  let database: ScratchDatabase;
  let emulator: RunningEmulator;
  let producer: MessagingService;
  let backend: QueueBackendOptions;
  const services: ServiceProcess[] = [];
  let queueEnv: NodeJS.ProcessEnv;
  let billingEnv: NodeJS.ProcessEnv;
  let billingPort: number;
  let billing: ServiceProcess;
  let gateways: string[];

  const startAndWait = (entry: string, port: number, env: NodeJS.ProcessEnv) => startHealthyService(entry, port, childEnvironment(env));

  const query = <T>(sql: string, params: unknown[] = []) => queryRows<T>(database.url, sql, params);

  beforeAll(async () => {
    database = await createTestDatabase();
    emulator = await startEmulator();
    backend = testQueueBackend(database.url);
    queueEnv = backend.kind === 'redis' ? { REDIS_URL: backend.url, QUEUE_PREFIX: backend.prefix } : { DATABASE_URL: database.url };
    producer = new MessagingService({ serviceName: 'exactness-test', backend });
    const [cataloguePort, a, b] = await Promise.all([findFreePort(), findFreePort(), findFreePort()]);
    billingPort = await findFreePort();
    const common = { ...queueEnv, ADMIN_TOKEN };
    services.push(
      await startAndWait('apps/catalogue/src/main.js', cataloguePort, {
        ...common,
        DATABASE_URL: database.url,
        CATALOGUE_PORT: String(cataloguePort),
        CATALOGUE_FILE: path.join(__dirname, 'fixtures/chat-catalogue.yaml'),
      }),
    );
    billingEnv = { ...common, DATABASE_URL: database.url, BILLING_PORT: String(billingPort) };
    billing = await startAndWait('apps/billing/src/main.js', billingPort, billingEnv);
    const gatewayEnv = { ...common, OPENAI_API_KEY: 'k', OPENAI_BASE_URL: `${emulator.url}/v1`, RATE_LIMIT_RPM: '1000000', RATE_LIMIT_CONCURRENCY: '1000' };
    services.push(await startAndWait('apps/gateway/src/main.js', a, { ...gatewayEnv, PORT: String(a) }));
    services.push(await startAndWait('apps/gateway/src/main.js', b, { ...gatewayEnv, PORT: String(b) }));
    gateways = [`http://127.0.0.1:${a}`, `http://127.0.0.1:${b}`];
    for (const gateway of gateways) await eventually(async () => (await call(`${gateway}/readyz`)).status === 200, 20_000);
  }, 180_000);

  afterAll(async () => {
    await producer?.onApplicationShutdown();
    await billing?.stop();
    for (const service of services.reverse()) await service.stop();
    await emulator?.close();
    await dropQueueData({ url: queueEnv?.REDIS_URL, prefix: queueEnv?.QUEUE_PREFIX });
    await database?.drop();
  });

  it('bills every request exactly once, to the micro-credit', async () => {
    const billingUrl = `http://127.0.0.1:${billingPort}`;
    const account = await call<{ id: string }>(`${billingUrl}/admin/v1/accounts`, { token: ADMIN_TOKEN, body: { credits: OPENING_CREDITS, plan: 'paid' } });
    // A lifetime budget as large as the credits: the key's spend must come out as exact as the balance.
    const budget = { limit: String(OPENING_CREDITS), unit: 'credits', period: 'lifetime' };
    const created = await call<{ id: string; key: string }>(`${billingUrl}/admin/v1/accounts/${account.body.id}/keys`, { token: ADMIN_TOKEN, body: { budget } });
    const key = created.body.key;
    let spentMicro = 0n;
    // Warm both replicas' key caches while billing is up: known keys keep working while it is away.
    for (const gateway of gateways) {
      const warm = await call<{ meta: { usage: { credits_used: number } } }>(`${gateway}/v1/chat/completions`, { token: key, body: { model: 'mini', messages: [{ role: 'user', content: 'warm' }] } });
      expect(warm.status).toBe(200);
      spentMicro += creditsToMicro(String(warm.body.meta.usage.credits_used));
    }
    const billed = REQUESTS + gateways.length;
    let restart: Promise<void> = Promise.resolve();
    const load = await fireMixedLoad({
      gateways,
      key,
      requests: REQUESTS,
      concurrency: CONCURRENCY,
      beforeRequest: (index) => {
        if (index !== Math.floor(REQUESTS / 3)) return;
        // Billing goes away mid-run; its usage queue waits, and it picks up after restarting.
        restart = billing.stop().then(async () => {
          // Away for a while on purpose: usage piles up in the queue while requests go on.
          await new Promise((resolve) => setTimeout(resolve, 1500));
          billing = await startAndWait('apps/billing/src/main.js', billingPort, billingEnv);
        });
      },
    });
    await restart;
    expect(load.failures).toEqual([]);
    expect(load.answered).toBe(REQUESTS);
    spentMicro += load.spentMicro;

    const usageRows = async () =>
      (await query<{ count: string; sum: string }>(`SELECT count(*)::text AS count, COALESCE(SUM(amount_micro), 0)::text AS sum FROM billing.ledger_entries WHERE account_id = $1 AND kind = 'usage'`, [account.body.id]))[0];
    await eventually(async () => Number((await usageRows()).count) === billed, 60_000, 200);
    const byEndpoint = await query<{ endpoint: string; count: string }>(
      `SELECT endpoint, count(*)::text AS count FROM billing.ledger_entries WHERE account_id = $1 AND kind = 'usage' GROUP BY endpoint ORDER BY endpoint`,
      [account.body.id],
    );
    expect(byEndpoint).toEqual([
      { endpoint: 'chat.completions', count: String(billed - REQUESTS / 5) },
      { endpoint: 'embeddings', count: String(REQUESTS / 5) },
    ]);

    // Deliver every usage event a second time, in new batches: the ledger must not move.
    const entries = await query<{ request_id: string; key_id: string; model: string; endpoint: string; units: Record<string, number>; amount_micro: string; usd: string; catalogue_revision: number; prices: UsageEvent['prices']; occurred_at: Date }>(
      `SELECT request_id, key_id, model, endpoint, units, amount_micro::text, usd::text, catalogue_revision, prices, occurred_at FROM billing.ledger_entries WHERE account_id = $1 AND kind = 'usage'`,
      [account.body.id],
    );
    const again: UsageEvent[] = entries.map((entry) => ({
      requestId: entry.request_id,
      accountId: account.body.id,
      keyId: entry.key_id,
      model: entry.model,
      endpoint: entry.endpoint,
      units: entry.units,
      creditsMicro: (-BigInt(entry.amount_micro)).toString(),
      usd: entry.usd.replace(/^-/, ''),
      catalogueRevision: entry.catalogue_revision,
      prices: entry.prices,
      occurredAt: new Date(entry.occurred_at).toISOString(),
    }));
    const redeliveries: string[] = [];
    for (let index = 0; index < again.length; index += 500) {
      const lines = again.slice(index, index + 500).map((event) => JSON.stringify(event));
      const jobId = `redelivery-${account.body.id}-${index}`;
      await producer.enqueue(QueueName.Usage, 'usage.recordBatch', await usageBatchOf(Buffer.from(lines.join('\n'))), { jobId });
      redeliveries.push(jobId);
    }
    // Billing has run every redelivered batch, and applied none of its events.
    const redelivered = await finishedJobs(backend, QueueName.Usage, redeliveries, 60_000);
    expect(redelivered).toEqual(redeliveries.map(() => ({ state: 'completed', returnvalue: { applied: 0 } })));

    const after = await usageRows();
    expect(Number(after.count)).toBe(billed);
    const ledgerMicro = -BigInt(after.sum);
    const [{ balance_micro: balanceMicro }] = await query<{ balance_micro: string }>('SELECT balance_micro::text FROM billing.accounts WHERE id = $1', [account.body.id]);
    const dropMicro = BigInt(OPENING_CREDITS) * 1_000_000n - BigInt(balanceMicro);
    expect(ledgerMicro).toBe(spentMicro);
    expect(dropMicro).toBe(spentMicro);
    expect(spentMicro).toBeGreaterThan(0n);
    // The key's spend moved with its ledger rows, each applied once despite the redelivery.
    const [keySpend] = await query<{ spent_micro: string; usage_applied_micro: string }>('SELECT spent_micro::text, usage_applied_micro::text FROM billing.api_keys WHERE id = $1', [created.body.id]);
    expect(keySpend).toEqual({ spent_micro: spentMicro.toString(), usage_applied_micro: spentMicro.toString() });

    const report = await call<{ mismatches: unknown[]; usageMismatches: unknown[]; keyMismatches: unknown[] }>(`${billingUrl}/admin/v1/reconciliation`, { token: ADMIN_TOKEN });
    expect(report.body).toMatchObject({ mismatches: [], usageMismatches: [], keyMismatches: [] });
  }, 240_000);

  it('never lets concurrent requests overspend a small balance, across replicas sharing Redis', async () => {
    // Replicas share holds and limits through Redis; without it each process keeps its own, so one replica is tested.
    const replicas = queueEnv.REDIS_URL ? gateways : gateways.slice(0, 1);
    const billingUrl = `http://127.0.0.1:${billingPort}`;
    const openingCredits = 300;
    const account = await call<{ id: string }>(`${billingUrl}/admin/v1/accounts`, { token: ADMIN_TOKEN, body: { credits: openingCredits, plan: 'paid' } });
    const key = (await call<{ key: string }>(`${billingUrl}/admin/v1/accounts/${account.body.id}/keys`, { token: ADMIN_TOKEN, body: {} })).body.key;
    // The test catalogue's prices at 2,000,000 credits per USD.
    const { admitted, spentMicro, refusals, ceilingMicro } = await spendUntilRefused({ gateways: replicas, key, prices: { inputCredits: 0.3, outputCredits: 1.2 }, burst: 60, maxBursts: 8 });
    expect(admitted).toBeGreaterThan(0);
    expect([...refusals.keys()]).toEqual([`403 ${ErrorMessages.creditsExhausted}`]);

    // Billing applies every admitted request once, and the balance drops by what the responses said.
    await eventually(async () => {
      const [{ count }] = await query<{ count: string }>(`SELECT count(*)::text AS count FROM billing.ledger_entries WHERE account_id = $1 AND kind = 'usage'`, [account.body.id]);
      return Number(count) === admitted;
    }, 20_000);
    const [{ balance_micro: balanceMicro }] = await query<{ balance_micro: string }>('SELECT balance_micro::text FROM billing.accounts WHERE id = $1', [account.body.id]);
    expect(creditsToMicro(String(openingCredits)) - BigInt(balanceMicro)).toBe(spentMicro);
    // Never more than the balance (a hold is taken only when it fits), however the requests were spread over the replicas.
    expect(spentMicro).toBeLessThanOrEqual(creditsToMicro(String(openingCredits)));
    // And it was not refused early: the last burst was refused only once less than one request's ceiling was left.
    expect(spentMicro).toBeGreaterThan(creditsToMicro(String(openingCredits)) - ceilingMicro);
  }, 120_000);
});
