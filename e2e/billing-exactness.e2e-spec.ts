import path from 'node:path';
import { QueueName, type UsageEvent } from '@igw/contracts';
import { creditsToMicro } from '@igw/domain';
import { MessagingService } from '@igw/messaging';
import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { Client } from 'pg';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, eventually } from './support/http';
import { childEnvironment, startHealthyService, type ServiceProcess } from './support/service-process';
import { createTestDatabase, dropQueueData, testQueueBackend } from './support/test-environment';

const ADMIN_TOKEN = 'exactness-admin-token-0123456789';
const REQUESTS = 1500;
const CONCURRENCY = 40;
const OPENING_CREDITS = 1_000_000;

/**
 * Exact billing under load: many concurrent paid requests (plain and streamed) through two
 * gateway replicas, billing restarted mid-run, every usage event delivered a second time;
 * then ledger = sum of the responses' meta.usage.credits_used = balance drop, to the
 * micro-credit, with exactly one ledger entry per request.
 */
describe('billing stays exact under concurrent load, restarts and redelivery', () => {
  let database: ScratchDatabase;
  let emulator: RunningEmulator;
  let producer: MessagingService;
  const services: ServiceProcess[] = [];
  let queueEnv: NodeJS.ProcessEnv;
  let billingEnv: NodeJS.ProcessEnv;
  let billingPort: number;
  let billing: ServiceProcess;
  let gateways: string[];

  const startAndWait = (entry: string, port: number, env: NodeJS.ProcessEnv) => startHealthyService(entry, port, childEnvironment(env));

  const query = async <T>(sql: string, params: unknown[] = []): Promise<T[]> => {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      return (await client.query(sql, params)).rows as T[];
    } finally {
      await client.end();
    }
  };

  beforeAll(async () => {
    database = await createTestDatabase();
    emulator = await startEmulator();
    const backend = testQueueBackend(database.url);
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
    const key = (await call<{ key: string }>(`${billingUrl}/admin/v1/accounts/${account.body.id}/keys`, { token: ADMIN_TOKEN, body: {} })).body.key;
    let spentMicro = 0n;
    let done = 0;
    // Warm both replicas' key caches while billing is up: known keys keep working while it is away.
    for (const gateway of gateways) {
      const warm = await call<{ meta: { usage: { credits_used: number } } }>(`${gateway}/v1/chat/completions`, { token: key, body: { model: 'mini', messages: [{ role: 'user', content: 'warm' }] } });
      expect(warm.status).toBe(200);
      spentMicro += creditsToMicro(String(warm.body.meta.usage.credits_used));
    }
    const billed = REQUESTS + gateways.length;
    const failures: string[] = [];
    const one = async (index: number) => {
      const gateway = gateways[index % 2];
      const stream = index % 5 < 2;
      const words = 'lorem ipsum dolor sit amet consectetur adipiscing elit'.split(' ').slice(0, 1 + (index % 8)).join(' ');
      const body = { model: 'mini', messages: [{ role: 'user', content: `${index} ${words}` }], stream, ...(stream ? { stream_options: { include_usage: true } } : {}) };
      const response = await fetch(`${gateway}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      if (response.status !== 200) {
        failures.push(`${response.status} ${text.slice(0, 200)}`);
        return;
      }
      let credits: number;
      if (stream) {
        const events = text.split('\n\n').filter((event) => event.startsWith('data: {'));
        credits = JSON.parse(events.at(-1)!.slice(6)).meta.usage.credits_used;
      } else {
        credits = JSON.parse(text).meta.usage.credits_used;
      }
      spentMicro += creditsToMicro(String(credits));
      done++;
    };

    let next = 0;
    let restarted = false;
    let restart: Promise<void> = Promise.resolve();
    const worker = async () => {
      while (next < REQUESTS) {
        const index = next++;
        if (!restarted && index === Math.floor(REQUESTS / 3)) {
          restarted = true;
          // Billing goes away mid-run; its usage queue waits, and it picks up after restarting.
          restart = billing.stop().then(async () => {
            await new Promise((resolve) => setTimeout(resolve, 1500));
            billing = await startAndWait('apps/billing/src/main.js', billingPort, billingEnv);
          });
        }
        await one(index);
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, worker));
    await restart;
    expect(failures).toEqual([]);
    expect(done).toBe(REQUESTS);

    const usageRows = async () =>
      (await query<{ count: string; sum: string }>(`SELECT count(*)::text AS count, COALESCE(SUM(amount_micro), 0)::text AS sum FROM billing.ledger_entries WHERE account_id = $1 AND kind = 'usage'`, [account.body.id]))[0];
    await eventually(async () => Number((await usageRows()).count) === billed, 60_000, 200);

    // Deliver every usage event a second time, under new job ids: the ledger must not move.
    const entries = await query<{ request_id: string; key_id: string; model: string; endpoint: string; units: Record<string, number>; amount_micro: string; usd: string; catalogue_revision: number; prices: UsageEvent['prices']; occurred_at: Date }>(
      `SELECT request_id, key_id, model, endpoint, units, amount_micro::text, usd::text, catalogue_revision, prices, occurred_at FROM billing.ledger_entries WHERE account_id = $1 AND kind = 'usage'`,
      [account.body.id],
    );
    await producer.enqueueMany(
      QueueName.Usage,
      entries.map((entry) => ({
        name: 'usage.record' as const,
        data: {
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
        },
        options: { jobId: `${entry.request_id}-again` },
      })),
    );
    // Give the redelivered events time to be processed (and ignored).
    await new Promise((resolve) => setTimeout(resolve, 3_000));

    const after = await usageRows();
    expect(Number(after.count)).toBe(billed);
    const ledgerMicro = -BigInt(after.sum);
    const [{ balance_micro: balanceMicro }] = await query<{ balance_micro: string }>('SELECT balance_micro::text FROM billing.accounts WHERE id = $1', [account.body.id]);
    const dropMicro = BigInt(OPENING_CREDITS) * 1_000_000n - BigInt(balanceMicro);
    expect(ledgerMicro).toBe(spentMicro);
    expect(dropMicro).toBe(spentMicro);
    expect(spentMicro).toBeGreaterThan(0n);

    const report = await call<{ mismatches: unknown[] }>(`${billingUrl}/admin/v1/reconciliation`, { token: ADMIN_TOKEN });
    expect(report.body.mismatches).toEqual([]);
  }, 240_000);
});
