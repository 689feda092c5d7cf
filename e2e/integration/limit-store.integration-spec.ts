import { Redis } from 'ioredis';
import {
  HOUR_MS,
  InMemoryLimitStore,
  MINUTE_MS,
  RedisLimitStore,
  type Admission,
  type AdmissionResult,
  type CreditHold,
  type Departure,
  type LimitStore,
  type RedisLimitStoreOptions,
} from '../../apps/gateway/src/limits/limit-store';
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
      // Leases hold the next requests' credits ahead of time: what `available` reports here is without them (they have tests of their own below).
      return { store: new RedisLimitStore(redisUrl, prefix, { leaseIdleMs: 0 }), cleanup: () => dropQueueData({ url: redisUrl, prefix }) };
    },
  ]);
} else {
  it.skip('limit store on redis (REDIS_URL is not set)', () => undefined);
}

/** An admission without its slot id: `admit` below gives each request a fresh one. */
type AdmissionInput = Omit<Admission, 'concurrency'> & { concurrency: Omit<Admission['concurrency'], 'slotId'> };

const admission = (overrides: Partial<AdmissionInput> = {}): AdmissionInput => ({
  perMinute: { key: 'key:k1:minute', limit: 3 },
  concurrency: { key: 'key:k1:running', limit: 2, ttlMs: 60_000 },
  ...overrides,
});

describe.each(stores)('the %s limit store', (_name, make) => {
  let store: LimitStore;
  let cleanup: () => Promise<void>;
  // A fixed instant early in a minute and an hour, so windows do not roll over mid-test.
  const now = Math.floor(Date.now() / HOUR_MS) * HOUR_MS + 1_000;

  let slotCount = 0;
  let admittedSlots: Record<string, Array<{ slotId: string; mayWait?: boolean }>> = {};
  /** Admits with a fresh slot id, remembered per key (with what the store said of its departure) so `finish` can give the oldest back. */
  const admit = async (input: AdmissionInput, at = now): Promise<AdmissionResult> => {
    const slotId = `slot-${++slotCount}`;
    const result = await store.admit({ ...input, concurrency: { ...input.concurrency, slotId } }, at);
    if (result.allowed) (admittedSlots[input.concurrency.key] ??= []).push({ slotId, mayWait: result.departureMayWait });
    return result;
  };
  const finish = (concurrencyKey: string, credits?: Departure['credits']) => {
    const { slotId, mayWait } = admittedSlots[concurrencyKey]?.shift() ?? { slotId: 'none' };
    store.finish({ concurrencyKey, slotId, credits, mayWait });
  };

  beforeEach(async () => {
    admittedSlots = {};
    ({ store, cleanup } = make());
    if (store instanceof RedisLimitStore) await store.whenReachable(5_000);
  });
  afterEach(async () => {
    await store.close();
    await cleanup();
  });

  it('allows the per-minute limit, then refuses until the next minute', async () => {
    for (let i = 0; i < 3; i++) {
      expect(await admit(admission(), now)).toMatchObject({ allowed: true });
      finish('key:k1:running');
    }
    const refused = await admit(admission(), now);
    expect(refused).toMatchObject({ allowed: false, reason: 'per-minute' });
    expect(refused.allowed === false && refused.retryAfterSeconds).toBeGreaterThanOrEqual(58);
    expect(await admit(admission(), now + MINUTE_MS)).toMatchObject({ allowed: true });
  });

  it('admits requests arriving together in arrival order, each counted once', async () => {
    const burst = admission({ perMinute: { key: 'key:k9:minute', limit: 4 }, concurrency: { key: 'key:k9:running', limit: 100, ttlMs: 60_000 } });
    const results = await Promise.all(Array.from({ length: 10 }, () => admit(burst, now)));
    expect(results.map((result) => result.allowed)).toEqual([true, true, true, true, false, false, false, false, false, false]);
    for (let i = 0; i < 4; i++) finish('key:k9:running');
    await new Promise((resolve) => setTimeout(resolve, 50));
    const strict = admission({ perMinute: { key: 'key:k10:minute', limit: 100 }, concurrency: { key: 'key:k9:running', limit: 1, ttlMs: 60_000 } });
    // All four slots came back: one request fits under a limit of one.
    expect((await admit(strict, now)).allowed).toBe(true);
    expect((await admit(strict, now)).allowed).toBe(false);
  });

  it('counts requests in flight and frees a slot on release', async () => {
    const roomy = admission({ perMinute: { key: 'key:k2:minute', limit: 100 }, concurrency: { key: 'key:k2:running', limit: 2, ttlMs: 60_000 } });
    expect((await admit(roomy, now)).allowed).toBe(true);
    expect((await admit(roomy, now)).allowed).toBe(true);
    expect(await admit(roomy, now)).toMatchObject({ allowed: false, reason: 'concurrency', retryAfterSeconds: 1 });
    finish('key:k2:running');
    await new Promise((resolve) => setTimeout(resolve, 50));
    expect((await admit(roomy, now)).allowed).toBe(true);
  });

  it('lets the slot of a request whose departure never came lapse', async () => {
    const single = admission({ perMinute: { key: 'key:k3:minute', limit: 100 }, concurrency: { key: 'key:k3:running', limit: 1, ttlMs: 1_000 } });
    expect((await admit(single, now)).allowed).toBe(true);
    expect(await admit(single, now + 500)).toMatchObject({ allowed: false, reason: 'concurrency' });
    // Never finished (its departure lost with a replica or a Redis blip): free once its life is over.
    expect((await admit(single, now + 1_500)).allowed).toBe(true);
  });

  it('limits a free account per hour across its keys, counting only admitted requests', async () => {
    const free = (key: string) =>
      admission({
        perMinute: { key: `key:${key}:minute`, limit: 100 },
        concurrency: { key: `key:${key}:running`, limit: 100, ttlMs: 60_000 },
        freeHourly: { key: 'account:a1:hour', limit: 2 },
      });
    expect((await admit(free('x'), now)).allowed).toBe(true);
    expect((await admit(free('y'), now)).allowed).toBe(true);
    const refused = await admit(free('x'), now);
    expect(refused).toMatchObject({ allowed: false, reason: 'free-hourly' });
    expect(refused.allowed === false && refused.retryAfterSeconds).toBeGreaterThan(3000);
    expect((await admit(free('x'), now + HOUR_MS)).allowed).toBe(true);
  });

  describe('credits', () => {
    const roomy = (key: string, credits: CreditHold): AdmissionInput =>
      admission({ perMinute: { key: `key:${key}:minute`, limit: 1000 }, concurrency: { key: `key:${key}:running`, limit: 1000, ttlMs: 60_000 }, credits });
    const snapshot = (balanceMicro: bigint, version: number, usageSpentMicro: bigint) => ({ balanceMicro, version, usageSpentMicro });
    const hold = (accountId: string, holdId: string, amountMicro: bigint, balance = snapshot(10n, 1, 0n), ttlMs = 60_000): CreditHold => ({
      accountId,
      snapshot: balance,
      holdId,
      amountMicro,
      ttlMs,
    });
    const settled = async () => new Promise((resolve) => setTimeout(resolve, 30));

    it('refuses an account with nothing left, before counting the request against any limit', async () => {
      const refused = await admit(roomy('c0', hold('a0', 'r1', 1n, snapshot(0n, 3, 5n))), now);
      expect(refused).toMatchObject({ allowed: false, reason: 'credits' });
      expect(await store.available('a0', now)).toBe(0n);
      // The refusal did not use up the key's minute.
      const strict = admission({ perMinute: { key: 'key:c0:minute', limit: 1 }, concurrency: { key: 'key:c0:running', limit: 1, ttlMs: 60_000 } });
      expect(await admit(strict, now)).toMatchObject({ allowed: true });
    });

    it('holds each request\'s ceiling, and takes a hold only when it fits in what is left', async () => {
      const results = [];
      for (const id of ['r1', 'r2', 'r3', 'r4']) results.push((await admit(roomy('c1', hold('a1', id, 4n)), now)).allowed);
      // 10 left: 4 held (6 left), 8 held (2 left), then refused: a third hold of 4 does not fit in 2.
      expect(results).toEqual([true, true, false, false]);
      expect(await store.available('a1', now)).toBe(2n);
      // A smaller request still fits what is left, exactly.
      expect(await admit(roomy('c1', hold('a1', 'r5', 2n)), now)).toMatchObject({ allowed: true });
      expect(await store.available('a1', now)).toBe(0n);
    });

    it('turns a hold into what the request cost when it finishes, and takes the newer balance from billing', async () => {
      await admit(roomy('c2', hold('a2', 'r1', 4n)), now);
      await admit(roomy('c2', hold('a2', 'r2', 4n)), now);
      finish('key:c2:running', { accountId: 'a2', holdId: 'r1', amountMicro: 4n, spentMicro: 3n });
      await settled();
      // 10 - 3 spent (not in the balance yet) - 4 held.
      expect(await store.available('a2', now)).toBe(3n);
      // Billing applied the 3: the balance says so, and the spend is not subtracted twice.
      await admit(roomy('c2', hold('a2', 'r3', 1n, snapshot(7n, 2, 3n))), now);
      expect(await store.available('a2', now)).toBe(7n - 4n - 1n);
      // An older snapshot arriving late changes nothing.
      await admit(roomy('c2', hold('a2', 'r4', 1n, snapshot(10n, 1, 0n))), now);
      expect(await store.available('a2', now)).toBe(7n - 4n - 1n - 1n);
      // Finishing twice would be a bug elsewhere, but must not release a hold twice.
      finish('key:c2:running', { accountId: 'a2', holdId: 'r2', amountMicro: 4n, spentMicro: 2n });
      finish('key:c2:running', { accountId: 'a2', holdId: 'r2', amountMicro: 4n, spentMicro: 0n });
      await settled();
      expect(await store.available('a2', now)).toBe(7n - 2n - 1n - 1n);
    });

    it('catches up with usage billing applied that this store never metered', async () => {
      await admit(roomy('c3', hold('a3', 'r1', 1n, snapshot(100n, 1, 50n))), now);
      expect(await store.available('a3', now)).toBe(99n);
      await admit(roomy('c3', hold('a3', 'r2', 1n, snapshot(80n, 2, 70n))), now);
      expect(await store.available('a3', now)).toBe(78n);
    });

    it('lets the holds of a request that never finished lapse', async () => {
      await admit(roomy('c4', hold('a4', 'r1', 5n, snapshot(10n, 1, 0n), 1_000)), now);
      expect((await admit(roomy('c4', hold('a4', 'r2', 5n)), now)).allowed).toBe(true);
      expect((await admit(roomy('c4', hold('a4', 'r3', 1n)), now)).allowed).toBe(false);
      // r1's hold lapses one second later; r2's (60 s) still counts.
      expect(await admit(roomy('c4', hold('a4', 'r4', 1n)), now + 1_500)).toMatchObject({ allowed: true });
      expect(await store.available('a4', now + 1_500)).toBe(10n - 5n - 1n);
    });

    it('keeps the slot and hold of a request that renews them past their first lapse, and never brings back one given back', async () => {
      const single = (holdId: string) =>
        admission({
          perMinute: { key: 'key:c9:minute', limit: 1000 },
          concurrency: { key: 'key:c9:running', limit: 1, ttlMs: 1_000 },
          credits: hold('a9', holdId, 9n, snapshot(20n, 1, 0n), 1_000),
        });
      expect(await admit(single('r1'), now)).toMatchObject({ allowed: true });
      const running = admittedSlots['key:c9:running'][0].slotId;
      const renewal = { concurrencyKey: 'key:c9:running', slotId: running, credits: { accountId: 'a9', holdId: 'r1', amountMicro: 9n }, ttlMs: 1_000 };
      store.renew(renewal, now + 800);
      await settled();
      // Past the first lapse (1 s) and within the renewed one (1.8 s): still running, still held
      // (the balance leaves room for a second hold, so only the slot refuses it).
      expect(await admit(single('r2'), now + 1_500)).toMatchObject({ allowed: false, reason: 'concurrency' });
      expect(await store.available('a9', now + 1_500)).toBe(11n);

      finish('key:c9:running', { accountId: 'a9', holdId: 'r1', amountMicro: 9n, spentMicro: 2n });
      await settled();
      // A renewal that comes after the departure (a timer that fired as the request ended) changes nothing.
      store.renew(renewal, now + 1_600);
      await settled();
      expect(await store.available('a9', now + 1_700)).toBe(18n);
      expect(await admit(single('r3'), now + 1_700)).toMatchObject({ allowed: true });
      expect(await store.available('a9', now + 1_700)).toBe(18n - 9n);
    });
  });
});

/**
 * Departures that may wait (far from every limit) ride along with the replica's next
 * admission; the others go out at once. Two stores on one prefix play two replicas.
 */
const describeOnRedis = redisUrl ? describe : describe.skip;
describeOnRedis('departures of the redis limit store, as other replicas see them', () => {
  const url = redisUrl as string;
  const now = Math.floor(Date.now() / HOUR_MS) * HOUR_MS + 1_000;
  let prefix: string;
  let raw: Redis;
  let replicas: RedisLimitStore[] = [];
  let requestCount = 0;

  /**
   * By default a departure that may wait waits a minute here: only an admission of its
   * replica (or close) sends it; and no leases (they have tests of their own).
   */
  const replica = async (options: RedisLimitStoreOptions = { departureWaitMs: 60_000, leaseIdleMs: 0 }) => {
    const store = new RedisLimitStore(url, prefix, options);
    replicas.push(store);
    await store.whenReachable(5_000);
    return store;
  };

  interface Ask {
    key?: string;
    concurrency?: number;
    credits?: { accountId: string; balanceMicro: bigint; amountMicro: bigint };
  }
  /** Admits one request; `leave` is its departure, passing back what the store said of it. */
  const ask = async (store: RedisLimitStore, { key = 'k', concurrency = 1000, credits }: Ask = {}) => {
    const id = `r${++requestCount}`;
    const result = await store.admit(
      {
        perMinute: { key: `key:${key}:minute`, limit: 100_000 },
        concurrency: { key: `key:${key}:running`, limit: concurrency, ttlMs: 60_000, slotId: id },
        credits: credits && {
          accountId: credits.accountId,
          snapshot: { balanceMicro: credits.balanceMicro, version: 1, usageSpentMicro: 0n },
          holdId: id,
          amountMicro: credits.amountMicro,
          ttlMs: 60_000,
        },
      },
      now,
    );
    // Admitted on a lease: its slot and hold are the request's (as the meter does).
    const lease = result.allowed ? result.lease : undefined;
    const slotId = lease?.slotId ?? id;
    const leave = (spentMicro = 0n) =>
      store.finish({
        concurrencyKey: `key:${key}:running`,
        slotId,
        credits: credits && { accountId: credits.accountId, holdId: slotId, amountMicro: lease?.holdAmountMicro ?? credits.amountMicro, spentMicro },
        mayWait: result.allowed && result.departureMayWait,
      });
    return { result, leave };
  };

  const nextTurn = () => new Promise((resolve) => setImmediate(resolve));
  const money = async (accountId: string) => {
    const [held, settled] = await raw.hmget(`${prefix}:limits:account:${accountId}:money`, 'held', 'settled');
    return { held: BigInt(held ?? '0'), settled: BigInt(settled ?? '0') };
  };
  const size = (name: string) => raw.zcard(`${prefix}:limits:${name}`);

  /** Admit-script calls that reach Redis for this test's keys while `action` runs, as MONITOR sees them. */
  const admitCalls = async (action: () => Promise<void>): Promise<number> => {
    const client = new Redis(url);
    const monitor = await client.monitor();
    const marker = `${prefix}:seen-everything`;
    let calls = 0;
    let seenMarker = () => undefined as void;
    const allSeen = new Promise<void>((resolve) => (seenMarker = resolve));
    monitor.on('monitor', (_time: string, args: string[]) => {
      if (args[0].toLowerCase() === 'echo' && args[1] === marker) seenMarker();
      // The admit script's calls start with the minute's length; MONITOR shows commands in the order Redis ran them.
      else if (/^eval(sha)?$/i.test(args[0]) && args[3] === String(MINUTE_MS) && args.some((arg) => arg.startsWith(prefix))) calls++;
    });
    try {
      await action();
      await raw.echo(marker);
      await allSeen;
    } finally {
      monitor.disconnect();
      client.disconnect();
    }
    return calls;
  };

  beforeEach(() => {
    prefix = uniqueQueuePrefix();
    raw = new Redis(url);
  });
  afterEach(async () => {
    await Promise.all(replicas.map((store) => store.close()));
    replicas = [];
    raw.disconnect();
    await dropQueueData({ url, prefix });
  });

  it('gives a slot back at once near its key\'s limit: another replica\'s very next admission finds it free', async () => {
    const [a, b] = [await replica(), await replica()];
    const first = await ask(a, { key: 'one', concurrency: 1 });
    expect(first.result).toEqual({ allowed: true, departureMayWait: false });
    first.leave();
    // No timer, not even the next turn: A's departure is written before B's admission is.
    expect((await ask(b, { key: 'one', concurrency: 1 })).result).toMatchObject({ allowed: true });
  });

  it('gives a hold back at once when the account has little left beside it', async () => {
    const [a, b] = [await replica(), await replica()];
    const poor = { accountId: 'poor', balanceMicro: 10n, amountMicro: 10n };
    const first = await ask(a, { key: 'p', credits: poor });
    expect(first.result).toEqual({ allowed: true, departureMayWait: false });
    first.leave(3n);
    // Written before leave() returned: B, reading right away, already sees it.
    expect(await b.available('poor', now)).toBe(10n - 3n);
    // With the hold still counted nothing would be left (10 - 10) and this would be a 403.
    expect((await ask(b, { key: 'p', credits: { ...poor, amountMicro: 7n } })).result).toMatchObject({ allowed: true });
    expect(await b.available('poor', now)).toBe(10n - 3n - 7n);
  });

  it('sends at once a departure that cost more than its hold, however far from the limits', async () => {
    const [a, b] = [await replica(), await replica()];
    const request = await ask(a, { key: 'o', credits: { accountId: 'over', balanceMicro: 1_000n, amountMicro: 10n } });
    expect(request.result).toEqual({ allowed: true, departureMayWait: true });
    // Waiting would let the other replicas spend the 985 already gone.
    request.leave(995n);
    expect(await b.available('over', now)).toBe(5n);
  });

  it('far from the limits, lets departures ride along with the next admission: one script call per request instead of two', async () => {
    const a = await replica();
    const b = await replica();
    await ask(a, { key: 'warm-up' }); // Redis knows the script: no NOSCRIPT retry in the counts.
    const rich = { accountId: 'rich', balanceMicro: 1_000_000n, amountMicro: 1_000n };
    const oneAtATime = (options: Ask) => async () => {
      for (let i = 0; i < 10; i++) {
        const request = await ask(a, options);
        expect(request.result.allowed).toBe(true);
        request.leave(400n);
        // The next request arrives on a later turn, as it would from a client.
        await nextTurn();
      }
    };
    expect(await admitCalls(oneAtATime({ key: 'far', concurrency: 100, credits: rich }))).toBe(10);
    // The tenth departure is still waiting for company; another replica sees its hold.
    expect(await money('rich')).toEqual({ held: 1_000n, settled: 9n * 400n });
    expect(await b.available('rich', now)).toBe(1_000_000n - 9n * 400n - 1_000n);
    // Near a limit (a single slot) every departure goes out on its own.
    expect(await admitCalls(oneAtATime({ key: 'near', concurrency: 1 }))).toBe(20);
    // Closing sends what waits.
    await a.close();
    expect(await money('rich')).toEqual({ held: 0n, settled: 10n * 400n });
    expect(await size('key:far:running')).toBe(0);
    expect(await size('key:far:running:lazy')).toBe(0);
  });

  it('looks again before refusing while a departure may still be on its way from another replica', async () => {
    const options = { departureWaitMs: 200, secondLookMs: 400, leaseIdleMs: 0 };
    const [a, b] = [await replica(options), await replica(options)];
    const ramp = { key: 'ramp', concurrency: 4 };
    // Admitted far from the limit (1 of 4 slots); the key fills up meanwhile on the other replica.
    const early = await ask(a, ramp);
    expect(early.result).toEqual({ allowed: true, departureMayWait: true });
    const later = [await ask(b, ramp), await ask(b, ramp), await ask(b, ramp)];
    expect(later.map(({ result }) => result)).toEqual([
      { allowed: true, departureMayWait: true },
      { allowed: true, departureMayWait: false },
      { allowed: true, departureMayWait: false },
    ]);
    early.leave(); // Waits on A for up to 200 ms.
    const started = Date.now();
    // Sent at once, the departure would have made room: the refusal waits for the second look.
    expect((await ask(b, ramp)).result).toMatchObject({ allowed: true });
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    // Full, and no departure on its way: the second look refuses, as the first would have.
    expect((await ask(b, ramp)).result).toMatchObject({ allowed: false, reason: 'concurrency' });
    // Every request counted once in the key's minute, refused ones included.
    expect(await raw.get(`${prefix}:limits:key:ramp:minute:${Math.floor(now / MINUTE_MS)}`)).toBe('6');
  });

  it('loses nothing: once every request is over nothing is held and everything spent is settled', async () => {
    // Production settings: departures and leases both in play.
    const [a, b] = [await replica({}), await replica({})];
    const account = { accountId: 'busy', balanceMicro: 300_000n, amountMicro: 10_000n };
    let spentTotal = 0n;
    let admitted = 0;
    let counted = 0;
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const worker = async (store: RedisLimitStore, seed: number) => {
      for (let i = 0; i < 12; i++) {
        const request = await ask(store, { key: 'busy', concurrency: 6, credits: account });
        // A minute counts every request but those refused for credits (checked first).
        if (request.result.allowed || request.result.reason !== 'credits') counted++;
        if (!request.result.allowed) continue;
        admitted++;
        await pause((seed * 7 + i * 3) % 4);
        // Now and then a request costs more than was held, or nothing.
        const spent = i % 7 === 3 ? 12_000n : i % 5 === 0 ? 0n : BigInt(((seed + 1) * 1_237 * (i + 1)) % 10_000);
        spentTotal += spent;
        request.leave(spent);
        await pause((seed + i) % 3);
      }
    };
    await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map((seed) => worker(seed % 2 === 0 ? a : b, seed)));
    expect(admitted).toBeGreaterThan(20);
    // The last departures wait at most a few milliseconds, second looks a few more.
    await pause(100);
    expect(await money('busy')).toEqual({ held: 0n, settled: spentTotal });
    expect(await size('key:busy:running')).toBe(0);
    expect(await size('key:busy:running:lazy')).toBe(0);
    expect(await size('account:busy:holds')).toBe(0);
    expect(await size('account:busy:holds:lazy')).toBe(0);
    expect(await b.available('busy', now)).toBe(300_000n - spentTotal);
    expect(await raw.get(`${prefix}:limits:key:busy:minute:${Math.floor(now / MINUTE_MS)}`)).toBe(String(counted));
  });

  describe('leases: a key\'s next requests admitted ahead of time', () => {
    const leasing = { leaseIdleMs: 50 };
    const minuteCount = async (key: string) => Number(await raw.get(`${prefix}:limits:key:${key}:minute:${Math.floor(now / MINUTE_MS)}`));
    /** Whether the admission was decided without waiting for Redis (its promise settles within a few microtask turns). */
    const decidedAtOnce = async (admission: Promise<unknown>) => {
      let settled = false;
      void admission.then(() => (settled = true));
      for (let turn = 0; turn < 5; turn++) await Promise.resolve();
      return settled;
    };
    const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const scriptCalls = (store: RedisLimitStore) => jest.spyOn((store as unknown as { redis: { admitRequests(...args: unknown[]): Promise<number[]> } }).redis, 'admitRequests');

    it('admits requests that come one after another without a round trip each, one script call per several, and counts every one exactly', async () => {
      const a = await replica(leasing);
      const sent = scriptCalls(a);
      const rich = { accountId: 'rich', balanceMicro: 1_000_000n, amountMicro: 1_000n };
      const atOnce: boolean[] = [];
      let spent = 0n;
      for (let i = 0; i < 40; i++) {
        const id = `seq${i}`;
        const admission = a.admit(
          {
            perMinute: { key: 'key:seq:minute', limit: 1_000 },
            concurrency: { key: 'key:seq:running', limit: 100, ttlMs: 60_000, slotId: id },
            credits: { accountId: 'rich', snapshot: { balanceMicro: rich.balanceMicro, version: 1, usageSpentMicro: 0n }, holdId: id, amountMicro: rich.amountMicro, ttlMs: 60_000 },
          },
          now,
        );
        atOnce.push(await decidedAtOnce(admission));
        const result = await admission;
        expect(result.allowed).toBe(true);
        if (!result.allowed) return;
        const slotId = result.lease?.slotId ?? id;
        a.finish({ concurrencyKey: 'key:seq:running', slotId, credits: { accountId: 'rich', holdId: slotId, amountMicro: result.lease?.holdAmountMicro ?? rich.amountMicro, spentMicro: 20n }, mayWait: result.departureMayWait });
        spent += 20n;
        // Well within the lease's idle window, long enough for a top-up's answer to be back.
        await pause(2);
      }
      // The first goes to Redis (and asks for a lease of 16); every later one ran on the lease.
      expect(atOnce).toEqual([false, ...Array(39).fill(true)]);
      // The first admission, its departure (no admission came for it to ride along with), then a
      // top-up of 16 more whenever half were used (after 8 and 24); what the requests on the
      // lease spent (a fiftieth of their ceilings) is counted with each top-up.
      expect(sent).toHaveBeenCalledTimes(4);
      expect((await money('rich')).settled).toBe(20n * 24n);
      // While a request runs on it, the lease holds twice a request's hold: one for the request
      // and room for what finished ones spent since the last top-up.
      expect((await money('rich')).held).toBe(2_000n);
      // The lease is given back once its idle window ends, with what the last requests spent
      // and its unused counts.
      await pause(150);
      expect(sent).toHaveBeenCalledTimes(5);
      expect(await minuteCount('seq')).toBe(40);
      expect(await money('rich')).toEqual({ held: 0n, settled: spent });
      for (const name of ['key:seq:running', 'key:seq:running:lazy', 'account:rich:holds', 'account:rich:holds:lazy', `key:seq:minute:${Math.floor(now / MINUTE_MS)}:lazy`]) {
        expect(await size(name)).toBe(0);
      }
    });

    it('admits a request that comes while its key\'s lease is on its way on that lease, not with a call of its own; one that runs long is claimed', async () => {
      const a = await replica(leasing);
      const asking = (id: string) =>
        a.admit(
          {
            perMinute: { key: 'key:early:minute', limit: 1_000 },
            concurrency: { key: 'key:early:running', limit: 100, ttlMs: 60_000, slotId: id },
            credits: { accountId: 'early', snapshot: { balanceMicro: 1_000_000n, version: 1, usageSpentMicro: 0n }, holdId: id, amountMicro: 1_000n, ttlMs: 60_000 },
          },
          now,
        );
      const sent = scriptCalls(a);
      const first = asking('e1');
      // The first admission's call (which also asks for a lease) leaves on this turn.
      await nextTurn();
      expect(sent).toHaveBeenCalledTimes(1);
      const second = asking('e2');
      let callsWhenSecondAdmitted = -1;
      void second.then(() => (callsWhenSecondAdmitted = sent.mock.calls.length));
      expect((await first).allowed).toBe(true);
      const secondResult = await second;
      expect(secondResult.allowed).toBe(true);
      expect(callsWhenSecondAdmitted).toBe(1);
      // The lease counts its 16 requests in the minute and holds twice the request's hold.
      expect(await minuteCount('early')).toBe(17);
      expect(await money('early')).toEqual({ held: 3_000n, settled: 0n });
      // The second is still running a quarter of a second later: its lease is claimed for it.
      // The 15 counts it will not use leave the minute; its slot and hold live as long as it may.
      await pause(400);
      expect(sent).toHaveBeenCalledTimes(2);
      expect(await minuteCount('early')).toBe(2);
      expect(await money('early')).toEqual({ held: 3_000n, settled: 0n });
      expect(await size('key:early:running')).toBe(2);
      const leaseId = secondResult.allowed ? (secondResult.lease?.slotId ?? '') : '';
      expect(Number(await raw.zscore(`${prefix}:limits:key:early:running`, leaseId))).toBeGreaterThan(now + 60_000);
      // While it runs it renews them like any request: the claimed lease's slot and hold live on.
      a.renew({ concurrencyKey: 'key:early:running', slotId: leaseId, credits: { accountId: 'early', holdId: leaseId, amountMicro: 2_000n }, ttlMs: 60_000 }, now + 50_000);
      await pause(20);
      expect(Number(await raw.zscore(`${prefix}:limits:key:early:running`, leaseId))).toBe(now + 110_000);
      expect(Number(await raw.zscore(`${prefix}:limits:account:early:holds`, `${leaseId}:2000`))).toBe(now + 110_000);
      // A claimed lease admits no more: the next request goes to Redis (and asks for a lease of its own).
      const third = asking('e3');
      expect(await decidedAtOnce(third)).toBe(false);
      expect((await third).allowed).toBe(true);
      // The long request ends: the lease leaves with what it spent.
      a.finish({ concurrencyKey: 'key:early:running', slotId: leaseId, credits: { accountId: 'early', holdId: leaseId, amountMicro: 2_000n, spentMicro: 700n }, mayWait: true });
      await pause(20);
      expect(await size('key:early:running')).toBe(3);
      await pause(100);
      expect((await money('early')).settled).toBe(700n);
      expect(await raw.zscore(`${prefix}:limits:key:early:running`, leaseId)).toBeNull();
    });

    it('never lets leases loosen a limit another replica enforces: the minute still admits exactly its limit', async () => {
      const [a, b] = [await replica(leasing), await replica(leasing)];
      const perMinute = (store: RedisLimitStore, id: string) =>
        store.admit({ perMinute: { key: 'key:shared:minute', limit: 10 }, concurrency: { key: 'key:shared:running', limit: 1_000, ttlMs: 60_000, slotId: id } }, now);
      // A admits one and, far from the limit, leases its next requests up to half the minute: four.
      expect((await perMinute(a, 'a1')).allowed).toBe(true);
      expect(await minuteCount('shared')).toBe(5);
      const results: Array<Awaited<ReturnType<typeof perMinute>>> = [];
      for (let i = 0; i < 12; i++) {
        const result = await perMinute(b, `b${i}`);
        results.push(result);
        if (result.allowed) b.finish({ concurrencyKey: 'key:shared:running', slotId: result.lease?.slotId ?? `b${i}`, mayWait: result.departureMayWait });
      }
      // A's lease, unused, was given back: B got the nine the minute had left, then 429s.
      expect(results.filter((result) => result.allowed)).toHaveLength(9);
      expect(results.slice(9)).toEqual(Array(3).fill({ allowed: false, reason: 'per-minute', retryAfterSeconds: expect.any(Number) }));
    });

    it('goes to Redis for a request the lease does not cover (a larger hold)', async () => {
      const a = await replica(leasing);
      const asking = (id: string, amountMicro: bigint) =>
        a.admit(
          {
            perMinute: { key: 'key:big:minute', limit: 1_000 },
            concurrency: { key: 'key:big:running', limit: 100, ttlMs: 60_000, slotId: id },
            credits: { accountId: 'big', snapshot: { balanceMicro: 1_000_000n, version: 1, usageSpentMicro: 0n }, holdId: id, amountMicro, ttlMs: 60_000 },
          },
          now,
        );
      expect((await asking('small', 1_000n)).allowed).toBe(true);
      const larger = asking('larger', 5_000n);
      expect(await decidedAtOnce(larger)).toBe(false);
      expect((await larger).allowed).toBe(true);
      await pause(150);
      // Two requests held, the unused lease given back with its counts.
      expect(await money('big')).toEqual({ held: 6_000n, settled: 0n });
      expect(await minuteCount('big')).toBe(2);
    });

    it('a replica that dies with a lease leaves nothing held once it lapses, only the lease\'s counts in the minute', async () => {
      // B takes no lease of its own, to keep the counts plain.
      const [a, b] = [await replica(leasing), await replica()];
      const request = (store: RedisLimitStore, id: string, at: number) =>
        store.admit(
          {
            perMinute: { key: 'key:gone:minute', limit: 1_000 },
            concurrency: { key: 'key:gone:running', limit: 4, ttlMs: 60_000, slotId: id },
            credits: { accountId: 'gone', snapshot: { balanceMicro: 100_000n, version: 1, usageSpentMicro: 0n }, holdId: id, amountMicro: 1_000n, ttlMs: 60_000 },
          },
          at,
        );
      expect((await request(a, 'a1', now)).allowed).toBe(true);
      // A finishes its request, then is gone before giving its lease back.
      a.finish({ concurrencyKey: 'key:gone:running', slotId: 'a1', credits: { accountId: 'gone', holdId: 'a1', amountMicro: 1_000n, spentMicro: 0n } });
      await nextTurn();
      (a as unknown as { redis: Redis }).redis.disconnect();
      expect(await money('gone')).toEqual({ held: 2_000n, settled: 0n });
      expect(await size('key:gone:running')).toBe(1);
      // Two seconds later (by the clock the replicas pass in) the lease has lapsed.
      expect(await b.available('gone', now + 2_000)).toBe(100_000n);
      expect((await request(b, 'b1', now + 2_000)).allowed).toBe(true);
      expect(await size('key:gone:running')).toBe(1);
      // A's request, the 16 its lease counted for requests that never came (too many for this minute, never too few), B's.
      expect(await minuteCount('gone')).toBe(18);
    });
  });
});
