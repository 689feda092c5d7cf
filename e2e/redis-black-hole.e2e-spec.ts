import path from 'node:path';
import { Redis } from 'ioredis';
import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { eventually, startTcpProxy, type TcpProxy, createTestDatabase, dropQueueData, queryRows, uniqueQueuePrefix } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody } from './support/http';
import { childEnvironment, startHealthyService, type ServiceProcess } from './support/service-process';

const ADMIN_TOKEN = 'black-hole-admin-token-0123456789';
const RPM = 6;

/**
 * A Redis that keeps its connections open and stops answering (a frozen server, a network
 * that drops everything) must not hang paid requests: the gateway's Redis runs through a
 * proxy that swallows every byte. Requests are answered meanwhile, their limits counted by
 * the gateway alone; when Redis is back the gateway counts in Redis again, and every
 * answered request reaches the ledger.
 */
const describeWithRedis = process.env.REDIS_URL ? describe : describe.skip;
describeWithRedis('a Redis that stops answering', () => {
  let database: ScratchDatabase;
  let emulator: RunningEmulator;
  let proxy: TcpProxy;
  let redis: Redis;
  let queueEnv: NodeJS.ProcessEnv;
  let gateway: ServiceProcess | undefined;
  let gatewayUrl: string;
  let billingUrl: string;
  const services: ServiceProcess[] = [];

  beforeAll(async () => {
    database = await createTestDatabase();
    emulator = await startEmulator();
    const redisUrl = new URL(process.env.REDIS_URL as string);
    queueEnv = { REDIS_URL: redisUrl.toString(), QUEUE_PREFIX: uniqueQueuePrefix() };
    redis = new Redis(redisUrl.toString());
    proxy = await startTcpProxy({ host: redisUrl.hostname, port: Number(redisUrl.port) || 6379 });
    const proxiedUrl = new URL(redisUrl);
    proxiedUrl.host = `127.0.0.1:${proxy.port}`;
    const [cataloguePort, billingPort, gatewayPort] = await Promise.all([findFreePort(), findFreePort(), findFreePort()]);
    services.push(
      await startHealthyService(
        'apps/catalogue/src/main.js',
        cataloguePort,
        childEnvironment({ ...queueEnv, ADMIN_TOKEN, DATABASE_URL: database.url, CATALOGUE_PORT: String(cataloguePort), CATALOGUE_FILE: path.join(__dirname, 'fixtures/chat-catalogue.yaml') }),
      ),
    );
    services.push(await startHealthyService('apps/billing/src/main.js', billingPort, childEnvironment({ ...queueEnv, ADMIN_TOKEN, DATABASE_URL: database.url, BILLING_PORT: String(billingPort) })));
    billingUrl = `http://127.0.0.1:${billingPort}`;
    gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    gateway = await startHealthyService(
      'apps/gateway/src/main.js',
      gatewayPort,
      childEnvironment({
        ...queueEnv,
        REDIS_URL: proxiedUrl.toString(),
        ADMIN_TOKEN,
        PORT: String(gatewayPort),
        OPENAI_API_KEY: 'k',
        OPENAI_BASE_URL: `${emulator.url}/v1`,
        LOG_LEVEL: 'log',
        RATE_LIMIT_RPM: String(RPM),
        RATE_LIMIT_CONCURRENCY: '1',
        REDIS_COMMAND_TIMEOUT_MS: '300',
        RPC_TIMEOUT_MS: '1000',
      }),
    );
  }, 180_000);

  afterAll(async () => {
    await gateway?.stop(5_000);
    for (const service of services.reverse()) await service.stop();
    await proxy?.close();
    redis?.disconnect();
    await emulator?.close();
    await dropQueueData({ url: queueEnv?.REDIS_URL, prefix: queueEnv?.QUEUE_PREFIX });
    await database?.drop();
  });

  it('answers paid requests meanwhile, counting limits locally, and counts in Redis again once it answers', async () => {
    const account = await call<{ id: string }>(`${billingUrl}/admin/v1/accounts`, { token: ADMIN_TOKEN, body: { credits: 1_000, plan: 'paid' } });
    expect({ status: account.status, body: account.body }).toMatchObject({ status: 201 });
    const created = await call<{ id: string; key: string }>(`${billingUrl}/admin/v1/accounts/${account.body.id}/keys`, { token: ADMIN_TOKEN, body: {} });
    expect({ status: created.status, body: created.body }).toMatchObject({ status: 201 });
    const chat = () => call(`${gatewayUrl}/v1/chat/completions`, { token: created.body.key, body: { model: 'mini', messages: [{ role: 'user', content: 'hello' }] } });
    // Windows are clock minutes: the whole test runs inside one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 30_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100));
    const minuteKey = `${queueEnv.QUEUE_PREFIX}:limits:key:${created.body.id}:minute:${Math.floor(Date.now() / 60_000)}`;
    const answered: string[] = [];
    const paid = async () => {
      const response = await chat();
      if (response.status === 200) answered.push(response.headers.get('x-request-id')!);
      return response.status;
    };

    const before = [await paid(), await paid()];
    // On a failure, what the gateway said about it is in the diff.
    expect({ before, log: before.every((status) => status === 200) ? '' : gateway!.output().slice(-4_000) }).toEqual({ before: [200, 200], log: '' });
    expect(await redis.get(minuteKey)).toBe('2');

    proxy.blackHole();
    const during: number[] = [];
    for (let i = 0; i <= RPM; i++) during.push(await paid());
    // The gateway's own count starts afresh: the minute's limit again, then 429.
    expect(during).toEqual([...Array<number>(RPM).fill(200), 429]);
    expect(gateway!.output()).toMatch(/Redis is unreachable: limits and credit holds are counted by this replica alone/);
    expect(await redis.get(minuteKey)).toBe('2');
    // A key the gateway does not know yet cannot be looked up meanwhile: 503 within RPC_TIMEOUT_MS, no hang.
    const unknown = await call<{ key: string }>(`${billingUrl}/admin/v1/accounts/${account.body.id}/keys`, { token: ADMIN_TOKEN, body: {} });
    const lookedUp = await call(`${gatewayUrl}/v1/chat/completions`, { token: unknown.body.key, body: { model: 'mini', messages: [{ role: 'user', content: 'hello' }] } });
    expectErrorBody(lookedUp, 503, '/v1/chat/completions', /billing service is not answering/);

    proxy.restore();
    // Locally the key is at its limit: only Redis (which counted 2 of 6) admits it again.
    await eventually(async () => (await paid()) === 200, 20_000, 200);
    expect(Number(await redis.get(minuteKey))).toBeGreaterThan(2);
    expect(gateway!.output()).toMatch(/Redis answers again/);
    // Nothing counted twice: the admission that timed out (then admitted locally) holds no slot and no credits in Redis.
    const limits = `${queueEnv.QUEUE_PREFIX}:limits:`;
    await eventually(async () => (await redis.zcard(`${limits}key:${created.body.id}:running`)) === 0, 5_000);
    expect(await redis.hget(`${limits}account:${account.body.id}:money`, 'held')).toBe('0');

    // Every answered request is billed once; the usage batches that waited went out.
    await eventually(
      async () => (await queryRows(database.url, `SELECT 1 FROM billing.ledger_entries WHERE account_id = $1 AND kind = 'usage'`, [account.body.id])).length === answered.length,
      30_000,
      200,
    );
    const ledger = await queryRows<{ request_id: string }>(database.url, `SELECT request_id FROM billing.ledger_entries WHERE account_id = $1 AND kind = 'usage'`, [account.body.id]);
    expect(ledger.map((row) => row.request_id).sort()).toEqual([...answered].sort());
  }, 60_000);
});
