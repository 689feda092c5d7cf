import path from 'node:path';
import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { eventually, createTestDatabase, dropQueueData, uniqueQueuePrefix } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody } from './support/http';
import { childEnvironment, startHealthyService, type ServiceProcess } from './support/service-process';

const ADMIN_TOKEN = 'auth-outage-admin-token-0123456789';
const KEY_CACHE_TTL_MS = 10_000;

/**
 * Billing goes away while the gateway (a process of its own) holds keys in its cache: keys
 * within their cache TTL keep working (documented), keys past it fail closed with 503, like keys
 * never seen, until billing is back.
 */
describe('API keys while billing is unreachable (distributed processes)', () => {
  let emulator: RunningEmulator;
  let database: ScratchDatabase;
  let queueEnv: NodeJS.ProcessEnv;
  const services: ServiceProcess[] = [];
  let billing: ServiceProcess;
  let billingEnv: NodeJS.ProcessEnv;
  let billingPort: number;
  let billingUrl: string;
  let gateway: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    database = await createTestDatabase();
    queueEnv = process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL, QUEUE_PREFIX: uniqueQueuePrefix() } : { DATABASE_URL: database.url };
    const start = async (name: string, portVariable: string, extra: NodeJS.ProcessEnv) => {
      const port = await findFreePort();
      const env = childEnvironment({ ...queueEnv, ADMIN_TOKEN, HOST: '127.0.0.1', [portVariable]: String(port), ...extra });
      const service = await startHealthyService(`apps/${name}/src/main.js`, port, env);
      services.push(service);
      return { service, env, port, url: `http://127.0.0.1:${port}` };
    };
    await start('catalogue', 'CATALOGUE_PORT', { DATABASE_URL: database.url, CATALOGUE_FILE: path.join(__dirname, 'fixtures/distributed-catalogue.yaml') });
    ({ service: billing, env: billingEnv, port: billingPort, url: billingUrl } = await start('billing', 'BILLING_PORT', { DATABASE_URL: database.url }));
    gateway = (
      await start('gateway', 'PORT', {
        OPENAI_API_KEY: 'k',
        OPENAI_BASE_URL: `${emulator.url}/v1`,
        KEY_CACHE_TTL_MS: String(KEY_CACHE_TTL_MS),
        RPC_TIMEOUT_MS: '1000',
      })
    ).url;
    await eventually(async () => (await call(`${gateway}/readyz`)).status === 200, 20_000);
    // The first key look-up over a cold queue can take longer than this test's 1 s RPC_TIMEOUT_MS
    // on a loaded machine: one key is looked up first, so the test times what it is about.
    const warmUp = await newKey();
    await eventually(async () => (await chat(warmUp)).status === 200, 20_000, 250);
  }, 120_000);

  afterAll(async () => {
    for (const service of services.reverse()) await service.stop();
    await dropQueueData({ url: queueEnv?.REDIS_URL, prefix: queueEnv?.QUEUE_PREFIX });
    await database?.drop();
    await emulator?.close();
  });

  const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
  const chat = (key: string) => call(`${gateway}/v1/chat/completions`, { token: key, body });
  const newKey = async () => {
    const account = await call<{ id: string }>(`${billingUrl}/admin/v1/accounts`, { token: ADMIN_TOKEN, body: { credits: 1_000_000, plan: 'paid' } });
    return (await call<{ key: string }>(`${billingUrl}/admin/v1/accounts/${account.body.id}/keys`, { token: ADMIN_TOKEN, body: {} })).body.key;
  };

  it('serves cached keys within their TTL, refuses expired and unknown ones with 503, and recovers with billing', async () => {
    const cachedKey = await newKey();
    const neverSeenKey = await newKey();
    const cachedAt = Date.now();
    expect((await chat(cachedKey)).status).toBe(200);

    expect(await billing.stop()).toBe(0);
    // Stopping takes a second or two: the entry is well within its TTL still.
    expect((await chat(cachedKey)).status).toBe(200);
    expectErrorBody(await chat(neverSeenKey), 503, '/v1/chat/completions', /^API keys cannot be verified right now/);

    // The TTL is what is under test: only time makes a cached key expire.
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, cachedAt + KEY_CACHE_TTL_MS + 100 - Date.now())));
    expectErrorBody(await chat(cachedKey), 503, '/v1/chat/completions', /^API keys cannot be verified right now/);
    expectErrorBody(await chat(neverSeenKey), 503, '/v1/chat/completions', /^API keys cannot be verified right now/);

    billing = await startHealthyService('apps/billing/src/main.js', billingPort, billingEnv);
    services.push(billing);
    await eventually(async () => (await chat(cachedKey)).status === 200, 20_000, 200);
    expect((await chat(neverSeenKey)).status).toBe(200);
  });
});
