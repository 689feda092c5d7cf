import path from 'node:path';
import { Redis } from 'ioredis';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody } from './support/http';
import { startDistributedHarness, type DistributedHarness } from './support/distributed-harness';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

const CATALOGUE_FILE = path.join(__dirname, 'fixtures/chat-catalogue.yaml');
/**
 * Limit windows are aligned to clock minutes (and hours): a burst that straddles a boundary
 * is legitimately counted in two windows, so counted bursts start with time to spare.
 */
async function awayFromWindowBoundary(): Promise<void> {
  const intoMinute = Date.now() % 60_000;
  if (intoMinute > 45_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100));
}

// Accounts hold 1,000 credits: a request's hold (up to 500 output tokens of 'mini', ~620 credits) must fit in what is left.
const ask = (model = 'mini') => ({ model, messages: [{ role: 'user', content: 'hello' }] });

describe('request limits', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({
      CATALOGUE_FILE,
      OPENAI_API_KEY: 'k',
      OPENAI_BASE_URL: `${emulator.url}/v1`,
      RATE_LIMIT_RPM: '5',
      RATE_LIMIT_CONCURRENCY: '1',
      FREE_TIER_HOURLY_LIMIT: '3',
    });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  const chat = (key: string, model?: string) => call(`${harness.gateway}/v1/chat/completions`, { token: key, body: ask(model) });

  it('allows the per-minute limit of a key and answers 429 Too Many Requests with retry-after beyond it', async () => {
    const { key } = await harness.paidKey(1_000);
    await awayFromWindowBoundary();
    for (let i = 0; i < 5; i++) expect((await chat(key)).status).toBe(200);
    const refused = await chat(key);
    expectErrorBody(refused, 429, '/v1/chat/completions', /^Too Many Requests$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    // Another key has its own limit.
    expect((await chat((await harness.paidKey(1_000)).key)).status).toBe(200);
  });

  it('limits the requests a key has in flight at once', async () => {
    const { key } = await harness.paidKey(1_000);
    const seen = emulator.requests.length;
    const firstCall = chat(key, 'test/unhurried');
    // Its upstream call began: the first request holds the key's one slot until the answer comes.
    await eventually(async () => emulator.requests.slice(seen).some((request) => (request.body as { model?: string }).model === 'unhurried@delay=800'), 10_000, 10);
    const [first, second] = await Promise.all([firstCall, chat(key, 'test/unhurried')]);
    expect(first.status).toBe(200);
    expectErrorBody(second, 429, '/v1/chat/completions', /^Too Many Requests$/);
    expect(second.headers.get('retry-after')).toBe('1');
    expect((await chat(key)).status).toBe(200);
  });

  it('holds a free account to its hourly limit and says a paid plan is needed', async () => {
    const account = await call<{ id: string }>(`${harness.billing}/admin/v1/accounts`, { token: harness.adminToken, body: { credits: 1_000, plan: 'free' } });
    const keyOf = async () => (await call<{ key: string }>(`${harness.billing}/admin/v1/accounts/${account.body.id}/keys`, { token: harness.adminToken, body: {} })).body.key;
    const [a, b] = [await keyOf(), await keyOf()];
    await awayFromWindowBoundary();
    expect((await chat(a)).status).toBe(200);
    expect((await chat(b)).status).toBe(200);
    expect((await chat(a)).status).toBe(200);
    const refused = await chat(b);
    expectErrorBody(refused, 429, '/v1/chat/completions', /free plan.*this hour.*paid plan/i);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
  });
});

/** The limits hold across replicas: two gateway processes count in one Redis. */
const describeWithRedis = process.env.REDIS_URL ? describe : describe.skip;
describeWithRedis('request limits shared by two gateway replicas (Redis)', () => {
  let emulator: RunningEmulator;
  let harness: DistributedHarness;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startDistributedHarness({
      adminToken: 'limits-admin-token-0123456789',
      catalogueFile: CATALOGUE_FILE,
      gateways: 2,
      gatewayEnv: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: `${emulator.url}/v1`, RATE_LIMIT_RPM: '4' },
    });
  }, 180_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  it('refuses the fifth request of a minute whichever replica it reaches', async () => {
    // Credits for many whole holds: this is about the per-minute count, not money.
    const key = await harness.paidKey(100_000);
    const gateways = harness.gateways;
    await awayFromWindowBoundary();
    const statuses: number[] = [];
    for (let i = 0; i < 5; i++) statuses.push((await call(`${gateways[i % 2]}/v1/chat/completions`, { token: key, body: ask() })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 429]);
  });

  it('gives every slot and hold back and counts every charge, whichever replica served the request', async () => {
    const adminToken = 'limits-admin-token-0123456789';
    const account = await call<{ id: string }>(`${harness.billing}/admin/v1/accounts`, { token: adminToken, body: { credits: 100_000, plan: 'paid' } });
    const key = (await call<{ key: string }>(`${harness.billing}/admin/v1/accounts/${account.body.id}/keys`, { token: adminToken, body: {} })).body.key;
    await awayFromWindowBoundary();
    let chargedMicro = 0n;
    for (let i = 0; i < 4; i++) {
      const response = await call<{ meta: { usage: { credits_used: number } } }>(`${harness.gateways[i % 2]}/v1/chat/completions`, { token: key, body: ask() });
      expect(response.status).toBe(200);
      chargedMicro += BigInt(Math.round(response.body.meta.usage.credits_used * 1_000_000));
    }
    const redis = new Redis(process.env.REDIS_URL as string);
    try {
      const money = `${harness.queueEnv.QUEUE_PREFIX}:limits:account:${account.body.id}:money`;
      await eventually(async () => (await redis.hget(money, 'held')) === '0', 5_000);
      expect(await redis.hmget(money, 'held', 'settled')).toEqual(['0', chargedMicro.toString()]);
      let cursor = '0';
      do {
        const [next, running] = await redis.scan(cursor, 'MATCH', `${harness.queueEnv.QUEUE_PREFIX}:limits:key:*:running*`, 'COUNT', 1_000);
        for (const name of running) expect(await redis.zcard(name)).toBe(0);
        cursor = next;
      } while (cursor !== '0');
    } finally {
      redis.disconnect();
    }
  });
});
