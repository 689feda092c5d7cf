import { Redis } from 'ioredis';
import { eventually, startTcpProxy, type TcpProxy, dropQueueData, uniqueQueuePrefix } from '@igw/testing';
import type { Admission } from './limit-store.types';
import { RedisLimitStore } from './redis-limit-store';

const redisUrl = process.env.REDIS_URL;
const COMMAND_TIMEOUT_MS = 200;

/**
 * Every path of the Redis limit store ends while Redis keeps its connection open and answers
 * nothing: admissions, departures, renewals, the credits look-up and close. Admissions fail like on a closed connection, so admission counts
 * locally; once Redis answers again the store is reachable again, and nothing it could not
 * send is left counted there.
 */
const describeOnRedis = redisUrl ? describe : describe.skip;
describeOnRedis('the redis limit store and a Redis that stops answering', () => {
  let proxy: TcpProxy;
  let raw: Redis;
  let prefix: string;
  let store: RedisLimitStore | undefined;
  const now = Date.now();

  beforeEach(async () => {
    const url = new URL(redisUrl as string);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port) || 6379 });
    url.host = `127.0.0.1:${proxy.port}`;
    prefix = uniqueQueuePrefix();
    raw = new Redis(redisUrl as string);
    store = RedisLimitStore.connect(url.toString(), prefix, { commandTimeoutMs: COMMAND_TIMEOUT_MS });
    await store.whenReachable(5_000);
  });

  afterEach(async () => {
    await store?.close();
    await proxy.close();
    raw.disconnect();
    await dropQueueData({ url: redisUrl, prefix });
  });

  const admission = (id: string, concurrency = 100): Admission => ({
    perMinute: { key: 'key:k:minute', limit: 1_000 },
    concurrency: { key: 'key:k:running', limit: concurrency, ttlMs: 60_000, slotId: id },
    credits: { accountId: 'acc', snapshot: { balanceMicro: 1_000_000n, version: 1, usageSpentMicro: 0n }, holdId: id, amountMicro: 1_000n, ttlMs: 60_000 },
  });
  const outcome = (promise: Promise<unknown>) => promise.then(
    (value) => ({ value }),
    (error: Error) => ({ error: error.message }),
  );

  it('fails admissions within the timeout instead of waiting, lets every other call end, and is reachable again once Redis answers', async () => {
    const s = store!;
    expect(await s.admit(admission('r1'), now)).toEqual({ allowed: true });
    s.finish({ concurrencyKey: 'key:k:running', slotId: 'r1', credits: { accountId: 'acc', holdId: 'r1', amountMicro: 1_000n, spentMicro: 10n } });
    // r2 runs through the outage.
    expect(await s.admit(admission('r2'), now)).toEqual({ allowed: true });
    await eventually(async () => (await raw.zscore(`${prefix}:limits:key:k:running`, 'r1')) === null, 5_000, 10);

    proxy.blackHole();
    // To Redis, which never answers.
    const refused = await outcome(s.admit({ ...admission('r3', 5), perMinute: { key: 'key:k:minute', limit: 5 } }, now));
    expect(refused).toEqual({ error: 'Command timed out' });
    expect(s.reachable).toBe(false);
    // Nothing else waits for Redis either: the next admission fails at once, like on a closed connection.
    expect(await outcome(s.admit(admission('r4'), now))).toEqual({ error: 'Redis is not answering' });
    expect(await outcome(s.available('acc', now))).toEqual({ error: 'Command timed out' });
    // r2 renews and ends: both calls are lost, neither waits.
    s.renew({ concurrencyKey: 'key:k:running', slotId: 'r2', credits: { accountId: 'acc', holdId: 'r2', amountMicro: 1_000n }, ttlMs: 60_000 }, now + 300);
    s.finish({ concurrencyKey: 'key:k:running', slotId: 'r2', credits: { accountId: 'acc', holdId: 'r2', amountMicro: 1_000n, spentMicro: 10n } });

    proxy.restore();
    await eventually(async () => s.reachable, 10_000, 50);
    const again = await s.admit(admission('r5'), now + 1);
    expect(again).toMatchObject({ allowed: true });
    // r3 and r4 never took a slot in Redis (r3's, had its script run, went back with r5's call);
    // r2's departure was lost with the outage: its slot lapses on its own.
    expect(await raw.zrange(`${prefix}:limits:key:k:running`, 0, -1)).toEqual(['r2', 'r5']);
  }, 30_000);

  it('counts nothing twice when a Redis that froze runs a timed-out admission late: the store gives its slot and hold back', async () => {
    const s = store!;
    const held = async () => BigInt((await raw.hget(`${prefix}:limits:account:acc:money`, 'held')) ?? '0');
    const narrow = (id: string) => admission(id, 3);
    expect(await s.admit(narrow('f1'), now)).toMatchObject({ allowed: true });

    proxy.freeze();
    // Admission would admit f2 locally now; the script call is held back, not lost.
    expect(await outcome(s.admit(narrow('f2'), now))).toEqual({ error: 'Command timed out' });
    proxy.restore();
    // Redis runs f2's admission late: its slot and hold are taken there.
    await eventually(async () => (await raw.zscore(`${prefix}:limits:key:k:running`, 'f2')) !== null, 5_000, 10);
    expect(await held()).toBe(2_000n);
    await eventually(async () => s.reachable, 10_000, 50);

    // The next call gives them back before it admits.
    expect(await s.admit(narrow('f3'), now)).toMatchObject({ allowed: true });
    expect(await raw.zscore(`${prefix}:limits:key:k:running`, 'f2')).toBeNull();
    expect(await raw.zrange(`${prefix}:limits:key:k:running`, 0, -1)).toEqual(['f1', 'f3']);
    expect(await held()).toBe(2_000n);
  }, 30_000);

  it('closes without waiting for Redis', async () => {
    proxy.blackHole();
    const closing = store!.close();
    store = undefined;
    await expect(closing).resolves.toBeUndefined();
  });
});
