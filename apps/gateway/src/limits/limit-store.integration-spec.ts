import { Redis } from 'ioredis';
import { dropQueueData, uniqueQueuePrefix } from '@igw/testing';
import { InMemoryLimitStore } from './in-memory-limit-store';
import { HOUR_MS, MINUTE_MS, type Admission, type AdmissionResult, type CreditHold, type Departure, type LimitStore } from './limit-store.types';
import { RedisLimitStore } from './redis-limit-store';

const redisUrl = process.env.REDIS_URL;
const stores: Array<[string, () => { store: LimitStore; cleanup: () => Promise<void> }]> = [
  ['memory', () => ({ store: new InMemoryLimitStore(), cleanup: async () => undefined })],
];
if (redisUrl) {
  stores.push([
    'redis',
    () => {
      const prefix = uniqueQueuePrefix();
      return { store: RedisLimitStore.connect(redisUrl, prefix), cleanup: () => dropQueueData({ url: redisUrl, prefix }) };
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
  let admittedSlots: Record<string, Array<{ slotId: string }>> = {};
  /** Admits with a fresh slot id, remembered per key so `finish` can give the oldest back. */
  const admit = async (input: AdmissionInput, at = now): Promise<AdmissionResult> => {
    const slotId = `slot-${++slotCount}`;
    const result = await store.admit({ ...input, concurrency: { ...input.concurrency, slotId } }, at);
    if (result.allowed) (admittedSlots[input.concurrency.key] ??= []).push({ slotId });
    return result;
  };
  const finish = (concurrencyKey: string, credits?: Departure['credits']) => {
    const { slotId } = admittedSlots[concurrencyKey]?.shift() ?? { slotId: 'none' };
    store.finish({ concurrencyKey, slotId, credits });
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
    // No wait: a departure reaches the store before finish returns, so what is asked next is decided after it.
    for (let i = 0; i < 4; i++) finish('key:k9:running');
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
    // No wait: a departure reaches the store before finish returns, so what is asked next is decided after it.
    finish('key:k2:running');
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
    /** Renewals go out on the next turn of the event loop: what is asked after it is decided after them. */
    const renewalsSent = () => new Promise((resolve) => setImmediate(resolve));

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
      await renewalsSent();
      // Past the first lapse (1 s) and within the renewed one (1.8 s): still running, still held
      // (the balance leaves room for a second hold, so only the slot refuses it).
      expect(await admit(single('r2'), now + 1_500)).toMatchObject({ allowed: false, reason: 'concurrency' });
      expect(await store.available('a9', now + 1_500)).toBe(11n);

      finish('key:c9:running', { accountId: 'a9', holdId: 'r1', amountMicro: 9n, spentMicro: 2n });
      // A renewal that comes after the departure (a timer that fired as the request ended) changes nothing.
      store.renew(renewal, now + 1_600);
      await renewalsSent();
      expect(await store.available('a9', now + 1_700)).toBe(18n);
      expect(await admit(single('r3'), now + 1_700)).toMatchObject({ allowed: true });
      expect(await store.available('a9', now + 1_700)).toBe(18n - 9n);
    });
    it('adds a hold to an admitted request without counting its minute or taking a slot, and only when it fits', async () => {
      const strict = (credits: CreditHold, holdOnly = false) =>
        ({ ...admission({ perMinute: { key: 'key:c11:minute', limit: 1 }, concurrency: { key: 'key:c11:running', limit: 1, ttlMs: 60_000 }, credits }), holdOnly });
      expect(await admit(strict(hold('a11', 'r1', 3n)), now)).toMatchObject({ allowed: true });
      // The key's one request a minute and one slot are the first step's: the rest is held all the same.
      expect(await admit(strict(hold('a11', 'r1:rest', 5n), true), now)).toMatchObject({ allowed: true });
      expect(await store.available('a11', now)).toBe(2n);
      // More than is left is refused as credits, and takes nothing.
      expect(await admit(strict(hold('a11', 'r1:more', 3n), true), now)).toMatchObject({ allowed: false, reason: 'credits' });
      expect(await store.available('a11', now)).toBe(2n);
      // Given back with its request: both holds, the cost counted once.
      store.finish({ concurrencyKey: 'key:c11:running', slotId: 'r1:rest', credits: { accountId: 'a11', holdId: 'r1:rest', amountMicro: 5n, spentMicro: 0n } });
      finish('key:c11:running', { accountId: 'a11', holdId: 'r1', amountMicro: 3n, spentMicro: 4n });
      expect(await store.available('a11', now)).toBe(6n);
    });
  });

  describe('key budgets, held against in the same step as the account', () => {
    const DAY = 86_400_000;
    const today = Math.floor(now / DAY) * DAY;
    const rich = { balanceMicro: 1_000_000n, version: 1, usageSpentMicro: 0n };
    const spend = (version: number, periodStart: number, spentMicro: bigint, appliedMicro: bigint) => ({ version, periodStart, spentMicro, appliedMicro });
    const budgeted = (key: string, holdId: string, amountMicro: bigint, snapshot = spend(1, today, 0n, 0n), ttlMs = 60_000, periodStart = today): AdmissionInput =>
      admission({
        perMinute: { key: `key:${key}:minute`, limit: 1000 },
        concurrency: { key: `key:${key}:running`, limit: 1000, ttlMs: 60_000 },
        credits: { accountId: `acc-${key}`, snapshot: rich, holdId, amountMicro, ttlMs, keyBudget: { keyId: key, limitMicro: 10n, periodStart, snapshot } },
      });

    it('takes a hold only when it fits in what is left of the key\'s budget, and refuses it as the key\'s', async () => {
      const results = [];
      for (const id of ['r1', 'r2', 'r3']) results.push(await admit(budgeted('b1', id, 4n), now));
      expect(results.map((result) => result.allowed)).toEqual([true, true, false]);
      expect(results[2]).toEqual({ allowed: false, reason: 'key-budget', retryAfterSeconds: 0 });
      // The refusal took nothing from the account; the two holds are held there too.
      expect(await store.available('acc-b1', now)).toBe(1_000_000n - 8n);
      expect(await admit(budgeted('b1', 'r4', 2n), now)).toMatchObject({ allowed: true });
      expect(await admit(budgeted('b1', 'r5', 1n), now)).toMatchObject({ allowed: false, reason: 'key-budget' });
    });

    it('counts what a request cost against the key until billing applies it, and a new period starts from nothing', async () => {
      await admit(budgeted('b2', 'r1', 6n), now);
      finish('key:b2:running', { accountId: 'acc-b2', holdId: 'r1', amountMicro: 6n, spentMicro: 5n, keyId: 'b2' });
      // 10 - 5 metered: a hold of 6 no longer fits, one of 5 does.
      expect(await admit(budgeted('b2', 'r2', 6n), now)).toMatchObject({ allowed: false, reason: 'key-budget' });
      expect(await admit(budgeted('b2', 'r3', 5n), now)).toMatchObject({ allowed: true });
      finish('key:b2:running', { accountId: 'acc-b2', holdId: 'r3', amountMicro: 5n, spentMicro: 5n, keyId: 'b2' });
      // Billing applied both: spent 10 in the period; not counted twice, still nothing left.
      expect(await admit(budgeted('b2', 'r4', 1n, spend(2, today, 10n, 10n)), now)).toMatchObject({ allowed: false, reason: 'key-budget' });
      // An older snapshot arriving late changes nothing.
      expect(await admit(budgeted('b2', 'r5', 1n, spend(1, today, 0n, 0n)), now)).toMatchObject({ allowed: false, reason: 'key-budget' });
      // The next day: billing's spend is of the day before, so the whole budget is there again.
      expect(await admit(budgeted('b2', 'r6', 10n, spend(2, today, 10n, 10n), 60_000, today + DAY), now + DAY)).toMatchObject({ allowed: true });
    });

    it('lets a key hold lapse with its request, and keeps a renewed one', async () => {
      expect(await admit(budgeted('b3', 'r1', 6n, spend(1, today, 0n, 0n), 1_000), now)).toMatchObject({ allowed: true });
      expect(await admit(budgeted('b3', 'r2', 6n), now)).toMatchObject({ allowed: false, reason: 'key-budget' });
      expect(await admit(budgeted('b3', 'r3', 6n), now + 1_500)).toMatchObject({ allowed: true });
      const slot = admittedSlots['key:b3:running'][1].slotId;
      store.renew({ concurrencyKey: 'key:b3:running', slotId: slot, credits: { accountId: 'acc-b3', holdId: 'r3', amountMicro: 6n, keyId: 'b3' }, ttlMs: 60_000 }, now + 50_000);
      await new Promise((resolve) => setImmediate(resolve));
      // r3's first lapse (60 s after admission) is past, its renewed one is not: still held.
      expect(await admit(budgeted('b3', 'r4', 6n), now + 70_000)).toMatchObject({ allowed: false, reason: 'key-budget' });
    });
  });
});

/**
 * Two stores on one prefix play two replicas: what one gives back or takes, the other sees at
 * once, however late either's event loop runs.
 */
const describeOnRedis = redisUrl ? describe : describe.skip;
describeOnRedis('the redis limit store, as other replicas see it', () => {
  const url = redisUrl as string;
  const now = Math.floor(Date.now() / HOUR_MS) * HOUR_MS + 1_000;
  let prefix: string;
  let raw: Redis;
  let replicas: RedisLimitStore[] = [];
  let requestCount = 0;

  const replica = async () => {
    const store = RedisLimitStore.connect(url, prefix);
    replicas.push(store);
    await store.whenReachable(5_000);
    return store;
  };

  interface Ask {
    key?: string;
    concurrency?: number;
    perMinute?: number;
    credits?: { accountId: string; balanceMicro: bigint; amountMicro: bigint };
  }
  /** Admits one request; `leave` is its departure. */
  const ask = async (store: RedisLimitStore, { key = 'k', concurrency = 1000, perMinute = 100_000, credits }: Ask = {}, at = now) => {
    const id = `r${++requestCount}`;
    const result = await store.admit(
      {
        perMinute: { key: `key:${key}:minute`, limit: perMinute },
        concurrency: { key: `key:${key}:running`, limit: concurrency, ttlMs: 60_000, slotId: id },
        credits: credits && {
          accountId: credits.accountId,
          snapshot: { balanceMicro: credits.balanceMicro, version: 1, usageSpentMicro: 0n },
          holdId: id,
          amountMicro: credits.amountMicro,
          ttlMs: 60_000,
        },
      },
      at,
    );
    const leave = (spentMicro = 0n) =>
      store.finish({
        concurrencyKey: `key:${key}:running`,
        slotId: id,
        credits: credits && { accountId: credits.accountId, holdId: id, amountMicro: credits.amountMicro, spentMicro },
      });
    return { result, leave };
  };

  const money = async (accountId: string) => {
    const [held, settled] = await raw.hmget(`${prefix}:limits:account:${accountId}:money`, 'held', 'settled');
    return { held: BigInt(held ?? '0'), settled: BigInt(settled ?? '0') };
  };
  const size = (name: string) => raw.zcard(`${prefix}:limits:${name}`);
  /**
   * Blocks this process's event loop, as a long garbage collection or a container at its CPU
   * limit does: no timer, socket event or promise of either replica runs meanwhile.
   */
  const stall = (ms: number) => {
    const until = performance.now() + ms;
    while (performance.now() < until) {
      // Busy on purpose.
    }
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

  it('gives a slot back before finish returns: another replica\'s very next admission finds it free', async () => {
    const [a, b] = [await replica(), await replica()];
    const first = await ask(a, { key: 'one', concurrency: 1 });
    expect(first.result).toEqual({ allowed: true });
    first.leave();
    // No timer, not even the next turn: A's departure is written before B's admission is.
    expect((await ask(b, { key: 'one', concurrency: 1 })).result).toEqual({ allowed: true });
  });

  it('gives a hold back and counts what it cost before finish returns', async () => {
    const [a, b] = [await replica(), await replica()];
    const poor = { accountId: 'poor', balanceMicro: 10n, amountMicro: 10n };
    const first = await ask(a, { key: 'p', credits: poor });
    expect(first.result).toEqual({ allowed: true });
    first.leave(3n);
    expect(await b.available('poor', now)).toBe(10n - 3n);
    // With the hold still counted nothing would be left (10 - 10) and this would be a 403.
    expect((await ask(b, { key: 'p', credits: { ...poor, amountMicro: 7n } })).result).toEqual({ allowed: true });
    expect(await b.available('poor', now)).toBe(10n - 3n - 7n);
  });

  it('hands a departure to Redis within finish, so a stall of the event loop right after it cannot delay it', async () => {
    const a = await replica();
    const request = await ask(a, { key: 'handed', concurrency: 1, credits: { accountId: 'handed', balanceMicro: 1_000n, amountMicro: 600n } });
    expect(request.result).toEqual({ allowed: true });
    request.leave(250n);
    stall(100);
    // Another connection's commands are written when called: had the departure waited for a
    // later turn of the loop (a timer, the next tick), Redis would answer these first.
    const [running, account] = await Promise.all([size('key:handed:running'), money('handed')]);
    expect(running).toBe(0);
    expect(account).toEqual({ held: 0n, settled: 250n });
  });

  it('keeps concurrency and credits exact across replicas while their event loop stalls for longer than a second', async () => {
    const [a, b] = [await replica(), await replica()];
    const account = (amountMicro: bigint) => ({ accountId: 'stalled', balanceMicro: 10_000n, amountMicro });
    // The replicas' own clocks, so a stall is time passing for the slots and holds too.
    const first = await ask(a, { key: 'st', concurrency: 2, credits: account(4_000n) }, Date.now());
    stall(1_200);
    const second = await ask(b, { key: 'st', concurrency: 2, credits: account(4_000n) }, Date.now());
    expect([first.result, second.result]).toEqual([{ allowed: true }, { allowed: true }]);
    stall(1_200);
    // Both slots taken, 2,000 left: nothing lapsed during the stalls, nothing overspent.
    expect((await ask(b, { key: 'st', concurrency: 2, credits: account(1_000n) }, Date.now())).result).toMatchObject({ allowed: false, reason: 'concurrency' });
    expect((await ask(a, { key: 'other', credits: account(2_001n) }, Date.now())).result).toMatchObject({ allowed: false, reason: 'credits' });
    expect(await b.available('stalled', Date.now())).toBe(2_000n);
    // A's request ends and A stalls at once: B, next, is admitted for exactly what is left.
    first.leave(3_000n);
    stall(200);
    const third = await ask(b, { key: 'st', concurrency: 2, credits: account(3_000n) }, Date.now());
    expect(third.result).toEqual({ allowed: true });
    expect(await a.available('stalled', Date.now())).toBe(0n);
    expect((await ask(a, { key: 'other', credits: account(1n) }, Date.now())).result).toMatchObject({ allowed: false, reason: 'credits' });
    second.leave(4_000n);
    third.leave(1_000n);
    stall(200);
    expect(await money('stalled')).toEqual({ held: 0n, settled: 8_000n });
    expect(await size('key:st:running')).toBe(0);
  });

  it('admits exactly a minute\'s limit across replicas, stalls between requests or not', async () => {
    const [a, b] = [await replica(), await replica()];
    const results: boolean[] = [];
    for (let i = 0; i < 12; i++) {
      const request = await ask(i % 2 === 0 ? a : b, { key: 'shared', perMinute: 10 });
      results.push(request.result.allowed);
      if (request.result.allowed) request.leave();
      if (i % 3 === 0) stall(50);
    }
    expect(results).toEqual([...Array(10).fill(true), false, false]);
    expect(await raw.get(`${prefix}:limits:key:shared:minute:${Math.floor(now / MINUTE_MS)}`)).toBe('12');
  });

  it('loses nothing: once every request is over nothing is held and everything spent is settled', async () => {
    const [a, b] = [await replica(), await replica()];
    const account = { accountId: 'busy', balanceMicro: 300_000n, amountMicro: 10_000n };
    let spentTotal = 0n;
    let admitted = 0;
    let counted = 0;
    // Time in flight, so that the requests of the eight workers overlap and leave in a mixed order.
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
    // Every departure was handed to Redis before `leave` returned: nothing to wait for.
    expect(await money('busy')).toEqual({ held: 0n, settled: spentTotal });
    expect(await size('key:busy:running')).toBe(0);
    expect(await size('account:busy:holds')).toBe(0);
    expect(await b.available('busy', now)).toBe(300_000n - spentTotal);
    expect(await raw.get(`${prefix}:limits:key:busy:minute:${Math.floor(now / MINUTE_MS)}`)).toBe(String(counted));
  });
});
