import { HOUR_MS, InMemoryLimitStore, MINUTE_MS, RedisLimitStore, type Admission, type LimitStore } from '../../apps/gateway/src/limits/limit-store';
import { dropQueueData, uniqueQueuePrefix } from '../support/test-environment';

const redisUrl = process.env.REDIS_URL;
const stores: Array<[string, () => { store: LimitStore; cleanup: () => Promise<void> }]> = [
  ['memory', () => ({ store: new InMemoryLimitStore(), cleanup: async () => undefined })],
];
if (redisUrl) {
  stores.push([
    'redis',
    () => {
      const prefix = uniqueQueuePrefix();
      return { store: new RedisLimitStore(redisUrl, prefix), cleanup: () => dropQueueData({ url: redisUrl, prefix }) };
    },
  ]);
} else {
  it.skip('limit store on redis (REDIS_URL is not set)', () => undefined);
}

const admission = (overrides: Partial<Admission> = {}): Admission => ({
  perMinute: { key: 'key:k1:minute', limit: 3 },
  concurrency: { key: 'key:k1:running', limit: 2, ttlMs: 60_000 },
  ...overrides,
});

describe.each(stores)('the %s limit store', (_name, make) => {
  let store: LimitStore;
  let cleanup: () => Promise<void>;
  // A fixed instant early in a minute and an hour, so windows do not roll over mid-test.
  const now = Math.floor(Date.now() / HOUR_MS) * HOUR_MS + 1_000;

  beforeEach(() => ({ store, cleanup } = make()));
  afterEach(async () => {
    await store.close();
    await cleanup();
  });

  it('allows the per-minute limit, then refuses until the next minute', async () => {
    for (let i = 0; i < 3; i++) {
      expect(await store.admit(admission(), now)).toEqual({ allowed: true });
      store.release('key:k1:running');
    }
    const refused = await store.admit(admission(), now);
    expect(refused).toMatchObject({ allowed: false, reason: 'per-minute' });
    expect(refused.allowed === false && refused.retryAfterSeconds).toBeGreaterThanOrEqual(58);
    expect(await store.admit(admission(), now + MINUTE_MS)).toEqual({ allowed: true });
  });

  it('counts requests in flight and frees a slot on release', async () => {
    const roomy = admission({ perMinute: { key: 'key:k2:minute', limit: 100 }, concurrency: { key: 'key:k2:running', limit: 2, ttlMs: 60_000 } });
    expect((await store.admit(roomy, now)).allowed).toBe(true);
    expect((await store.admit(roomy, now)).allowed).toBe(true);
    expect(await store.admit(roomy, now)).toMatchObject({ allowed: false, reason: 'concurrency', retryAfterSeconds: 1 });
    store.release('key:k2:running');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await store.admit(roomy, now)).allowed).toBe(true);
  });

  it('limits a free account per hour across its keys, counting only admitted requests', async () => {
    const free = (key: string) =>
      admission({
        perMinute: { key: `key:${key}:minute`, limit: 100 },
        concurrency: { key: `key:${key}:running`, limit: 100, ttlMs: 60_000 },
        freeHourly: { key: 'account:a1:hour', limit: 2 },
      });
    expect((await store.admit(free('x'), now)).allowed).toBe(true);
    expect((await store.admit(free('y'), now)).allowed).toBe(true);
    const refused = await store.admit(free('x'), now);
    expect(refused).toMatchObject({ allowed: false, reason: 'free-hourly' });
    expect(refused.allowed === false && refused.retryAfterSeconds).toBeGreaterThan(3000);
    expect((await store.admit(free('x'), now + HOUR_MS)).allowed).toBe(true);
  });
});
