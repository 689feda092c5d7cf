import { randomUUID } from 'node:crypto';
import type { BalanceSnapshot } from '@igw/contracts';
import { Redis } from 'ioredis';

/**
 * Money held for one request while it runs: its most expensive outcome. While held it
 * counts as spent, and is taken only when it fits in what is left, so concurrent requests
 * cannot together spend more than the account has.
 */
export interface CreditHold {
  accountId: string;
  /** The newest balance this replica knows; the store keeps the newest any replica told it. */
  snapshot: BalanceSnapshot;
  /** Unique per request. */
  holdId: string;
  amountMicro: bigint;
  /** A replica that dies leaves its holds behind; they lapse after this long. */
  ttlMs: number;
}

/** What one request asks of the limits. Windows are fixed: `windowMs` long, aligned to the epoch. */
export interface Admission {
  perMinute: { key: string; limit: number };
  /** In flight per key: each request takes a slot (`slotId`, unique) that lapses after `ttlMs` if never given back. */
  concurrency: { key: string; limit: number; ttlMs: number; slotId: string };
  /** Only for accounts on the free plan. */
  freeHourly?: { key: string; limit: number };
  /** Paid endpoints: refused when less is left to spend than the hold, else the hold is taken. */
  credits?: CreditHold;
}

/** A request that is over: its slot and hold are given back and what it cost is counted as spent. */
export interface Departure {
  concurrencyKey: string;
  slotId: string;
  credits?: { accountId: string; holdId: string; amountMicro: bigint; spentMicro: bigint };
  /** The admission's `departureMayWait`, passed back unchanged (never set it otherwise). */
  mayWait?: boolean;
}

/**
 * A request still running: its slot and hold live `ttlMs` more from now, if they are still
 * there (never brought back once given back or lapsed).
 */
export interface Renewal {
  concurrencyKey: string;
  slotId: string;
  credits?: { accountId: string; holdId: string; amountMicro: bigint };
  ttlMs: number;
}

export type AdmissionResult =
  | {
      allowed: true;
      /**
       * Set by a store that batches departures, when the request was admitted far from its
       * key's and account's limits: its departure may then wait a few milliseconds for company.
       */
      departureMayWait?: boolean;
      /**
       * Set when the request was admitted on a lease (the key's requests admitted ahead of
       * time): it runs on the lease's slot and hold, so its departure names these (the hold no
       * smaller than the request's own).
       */
      lease?: { slotId: string; holdAmountMicro: bigint };
    }
  | { allowed: false; reason: 'per-minute' | 'concurrency' | 'free-hourly' | 'credits'; retryAfterSeconds: number };

/**
 * The counters behind the limits and the credit holds: in the process (standalone) or in
 * Redis, shared by every replica.
 *
 * Spending is tracked per account as `settled` (every charge the gateways metered, ever)
 * against billing's `usageSpentMicro` (every charge already in the balance): what is left is
 * `balance - (settled - usageSpent) - held`. Both totals only grow, so any snapshot, however
 * late or out of order, gives the right answer; when billing is ahead (charges metered
 * before this store existed) `settled` catches up.
 */
export interface LimitStore {
  /** False while the store's server is known to be unreachable. */
  readonly reachable: boolean;
  admit(admission: Admission, now: number): Promise<AdmissionResult>;
  /**
   * Gives back what `admit` took, before the request's response is sent. A store in Redis
   * writes it to Redis before returning, or a few milliseconds later when `mayWait` allows.
   */
  finish(departure: Departure): void;
  /** Pushes a running request's slot and hold lapse on (see Renewal); best effort, nothing waits for it. */
  renew(renewal: Renewal, now: number): void;
  /** Credits an account can still spend, in micro-credits (for tests and diagnostics). */
  available(accountId: string, now: number): Promise<bigint | undefined>;
  close(): Promise<void>;
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;

const windowOf = (now: number, windowMs: number) => Math.floor(now / windowMs);
const secondsLeft = (now: number, windowMs: number) => Math.max(1, Math.ceil(((windowOf(now, windowMs) + 1) * windowMs - now) / 1000));

interface AccountMoney {
  balanceMicro: bigint;
  version: number;
  usageSpentMicro: bigint;
  settledMicro: bigint;
  heldMicro: bigint;
  holds: Map<string, { amountMicro: bigint; expiresAt: number }>;
}

/** Counters of one process, for standalone mode. */
export class InMemoryLimitStore implements LimitStore {
  readonly reachable = true;
  private readonly windows = new Map<string, { window: number; count: number }>();
  private readonly inFlight = new Map<string, Map<string, number>>();
  private readonly accounts = new Map<string, AccountMoney>();

  async admit(admission: Admission, now: number): Promise<AdmissionResult> {
    const { perMinute, concurrency, freeHourly, credits } = admission;
    const money = credits ? this.money(credits.accountId, credits.snapshot, now) : undefined;
    // The whole hold must fit: what a request may cost is never more than is left.
    if (money && credits && (spendable(money) <= 0n || spendable(money) < credits.amountMicro)) return { allowed: false, reason: 'credits', retryAfterSeconds: 0 };
    if (freeHourly && this.count(freeHourly.key, now, HOUR_MS) >= freeHourly.limit) {
      return { allowed: false, reason: 'free-hourly', retryAfterSeconds: secondsLeft(now, HOUR_MS) };
    }
    if (this.increment(perMinute.key, now, MINUTE_MS) > perMinute.limit) {
      return { allowed: false, reason: 'per-minute', retryAfterSeconds: secondsLeft(now, MINUTE_MS) };
    }
    let slots = this.inFlight.get(concurrency.key);
    if (!slots) this.inFlight.set(concurrency.key, (slots = new Map()));
    for (const [slotId, expiresAt] of slots) if (expiresAt <= now) slots.delete(slotId);
    if (slots.size >= concurrency.limit) return { allowed: false, reason: 'concurrency', retryAfterSeconds: 1 };
    slots.set(concurrency.slotId, now + concurrency.ttlMs);
    if (freeHourly) this.increment(freeHourly.key, now, HOUR_MS);
    if (money && credits) {
      money.holds.set(credits.holdId, { amountMicro: credits.amountMicro, expiresAt: now + credits.ttlMs });
      money.heldMicro += credits.amountMicro;
    }
    return { allowed: true };
  }

  finish(departure: Departure): void {
    const slots = this.inFlight.get(departure.concurrencyKey);
    slots?.delete(departure.slotId);
    if (slots?.size === 0) this.inFlight.delete(departure.concurrencyKey);
    const credits = departure.credits;
    const money = credits && this.accounts.get(credits.accountId);
    if (!credits || !money) return;
    const hold = money.holds.get(credits.holdId);
    if (hold) {
      money.holds.delete(credits.holdId);
      money.heldMicro -= hold.amountMicro;
    }
    money.settledMicro += credits.spentMicro;
  }

  renew({ concurrencyKey, slotId, credits, ttlMs }: Renewal, now: number): void {
    const slots = this.inFlight.get(concurrencyKey);
    if (slots?.has(slotId)) slots.set(slotId, now + ttlMs);
    const hold = credits && this.accounts.get(credits.accountId)?.holds.get(credits.holdId);
    if (hold) hold.expiresAt = now + ttlMs;
  }

  async available(accountId: string, now: number): Promise<bigint | undefined> {
    const money = this.accounts.get(accountId);
    if (!money) return undefined;
    this.dropLapsedHolds(money, now);
    return spendable(money);
  }

  async close(): Promise<void> {
    this.windows.clear();
  }

  private money(accountId: string, snapshot: BalanceSnapshot, now: number): AccountMoney {
    let money = this.accounts.get(accountId);
    if (!money) {
      money = { ...snapshot, settledMicro: snapshot.usageSpentMicro, heldMicro: 0n, holds: new Map() };
      this.accounts.set(accountId, money);
    } else if (snapshot.version > money.version) {
      Object.assign(money, snapshot);
    }
    if (money.settledMicro < money.usageSpentMicro) money.settledMicro = money.usageSpentMicro;
    this.dropLapsedHolds(money, now);
    return money;
  }

  private dropLapsedHolds(money: AccountMoney, now: number): void {
    for (const [holdId, hold] of money.holds) {
      if (hold.expiresAt > now) continue;
      money.holds.delete(holdId);
      money.heldMicro -= hold.amountMicro;
    }
  }

  private count(key: string, now: number, windowMs: number): number {
    const entry = this.windows.get(key);
    return entry && entry.window === windowOf(now, windowMs) ? entry.count : 0;
  }

  private increment(key: string, now: number, windowMs: number): number {
    const window = windowOf(now, windowMs);
    const entry = this.windows.get(key);
    if (!entry || entry.window !== window) {
      // A new window: also the moment to forget windows that have ended.
      if (this.windows.size > 100_000) for (const [k, v] of this.windows) if (v.window < window - 1) this.windows.delete(k);
      this.windows.set(key, { window, count: 1 });
      return 1;
    }
    return ++entry.count;
  }
}

const spendable = (money: Pick<AccountMoney, 'balanceMicro' | 'settledMicro' | 'usageSpentMicro' | 'heldMicro'>) =>
  money.balanceMicro - (money.settledMicro - money.usageSpentMicro) - money.heldMicro;

/**
 * The money part of an admission, shared by the admit and available scripts: takes the
 * newer snapshot, lets `settled` catch up with billing, drops lapsed holds, and leaves
 * what can still be spent. Amounts stay below 2^53 micro-credits, where Lua's numbers are exact.
 */
const SPENDABLE_LUA = `
local function spendable(account, holds, balance, version, usageSpent, now)
  local money = redis.call('HMGET', account, 'version', 'usageSpent', 'settled', 'held', 'balance')
  if tonumber(version) > tonumber(money[1] or '-1') then
    redis.call('HSET', account, 'balance', balance, 'version', version, 'usageSpent', usageSpent)
    money[2], money[5] = usageSpent, balance
  end
  local applied = tonumber(money[2])
  local settled = tonumber(money[3] or '0')
  if settled < applied then
    redis.call('HSET', account, 'settled', money[2])
    settled = applied
  end
  local held = tonumber(money[4] or '0')
  local lapsed = redis.call('ZRANGEBYSCORE', holds, '-inf', now)
  if #lapsed > 0 then
    local released = 0
    for _, member in ipairs(lapsed) do released = released + tonumber(string.match(member, ':(%d+)$')) end
    redis.call('ZREMRANGEBYSCORE', holds, '-inf', now)
    redis.call('HINCRBY', account, 'held', string.format('%d', -released))
    held = held - released
  end
  return tonumber(money[5]) - (settled - applied) - held
end
`;

/**
 * Each lease operation, departure and admission is one script argument, its fields
 * (`addLeaseOp`'s, `addDeparture`'s, `admissionArgs`'s) joined by the unit separator: ioredis's per-argument work was a tenth of the
 * gateway's CPU under load. Key names come from ids, prefixes and numbers, never holding it.
 */
const FIELD_SEPARATOR = '\x1f';
const packFields = (fields: ReadonlyArray<string | number>) => fields.join(FIELD_SEPARATOR);

/** Result codes of the admit script; 1 to 4 are refusals (see REASONS). */
const ADMITTED = 0;
const LOOK_AGAIN = 5;

/**
 * One round trip for what a turn of the event loop produced: first the leases topped up or
 * claimed, then the requests that finished (slots and holds given back, their cost counted
 * as spent; leases given back), then the new ones
 * admitted in order, each checked and counted atomically (credits, the free plan's hour,
 * the key's minute, its in-flight count), so replicas share the limits exactly. Key names
 * travel in ARGV (already prefixed) because a batch names a varying number of keys; this
 * store needs a single Redis, not a cluster.
 *
 * Each admitted request comes back with a flag: whether its departure may wait (see
 * `RedisLimitStore.finish`). Such a request's slot and hold are also listed in the `:lazy`
 * sets beside the key's slots and the account's holds, until its departure or their lapse.
 * A refusal for credits or concurrency while such a listing exists is not final: the caller
 * gets LOOK_AGAIN, nothing counted, and asks again (flagged as a second look) once every
 * departure that may have been waiting then has arrived. Leases (the key's next requests
 * admitted ahead of time, see `grantLease`) are listed the same way, in the minute's `:lazy`
 * set too, so a per-minute refusal while one may be given back also looks again.
 */
const ADMIT_SCRIPT = `${SPENDABLE_LUA}
local minuteMs, hourMs, accountTtl = ARGV[1], ARGV[2], ARGV[3]
local leaseOpCount, departureCount = tonumber(ARGV[4]), tonumber(ARGV[5])
-- Each lease operation, departure and admission travels as one argument, its fields joined by the unit separator.
local function split(packed)
  local fields, from = {}, 1
  while true do
    local at = string.find(packed, '\\31', from, true)
    if not at then
      fields[#fields + 1] = string.sub(packed, from)
      return fields
    end
    fields[#fields + 1] = string.sub(packed, from, at - 1)
    from = at + 1
  end
end
-- A lease (see \`grantLease\`) topped up or claimed, in \`addLeaseOp\`'s fields. Both first count
-- what the lease's finished requests spent. A top-up counts more of the key's minute for it
-- when the key and account are still far from their limits (its own slot and hold among
-- what they hold) and pushes its lapse on; it returns how many. A claim binds the lease to a
-- long request: the counts it will not use leave the minute, and its slot and hold live as
-- long as the request may.
local function leaseOp(o)
  local minuteKey, runningKey, account, holds, id, member = o[2], o[3], o[4], o[5], o[6], o[7]
  if o[9] ~= '0' then redis.call('HINCRBY', account, 'settled', o[9]) end
  local result = 1
  if o[1] == 'claim' then
    if redis.call('ZREM', minuteKey .. ':lazy', id) == 1 and o[10] ~= '0' and redis.call('EXISTS', minuteKey) == 1 then
      redis.call('DECRBY', minuteKey, o[10])
    end
    redis.call('PEXPIRE', runningKey, o[13])
    redis.call('PEXPIRE', runningKey .. ':lazy', o[13])
  else
    local now = o[17]
    redis.call('ZREMRANGEBYSCORE', runningKey, '-inf', now)
    local minute = tonumber(redis.call('GET', minuteKey) or '0')
    result = math.min(tonumber(o[14]), math.floor(tonumber(o[15]) / 2) - minute)
    if result < 1 or 2 * redis.call('ZCARD', runningKey) > tonumber(o[16]) then return 0 end
    if member ~= '' and spendable(account, holds, o[18], o[19], o[20], now) < 2 * tonumber(o[8]) then return 0 end
    if redis.call('INCRBY', minuteKey, result) == result then redis.call('PEXPIRE', minuteKey, minuteMs) end
    redis.call('ZADD', minuteKey .. ':lazy', o[11], id)
    redis.call('PEXPIRE', minuteKey .. ':lazy', minuteMs)
  end
  redis.call('ZADD', runningKey, o[11], id)
  redis.call('ZADD', runningKey .. ':lazy', o[11], id)
  if member ~= '' then
    if redis.call('ZADD', holds, o[12], member) == 1 then redis.call('HINCRBY', account, 'held', o[8]) end
    redis.call('ZADD', holds .. ':lazy', o[12], member)
  end
  return result
end
local results = {}
for i = 6, 5 + leaseOpCount do
  results[#results + 1] = leaseOp(split(ARGV[i]))
end
for i = 6 + leaseOpCount, 5 + leaseOpCount + departureCount do
  local d = split(ARGV[i])
  local waited = d[8] == '1'
  -- A lease leaves the minute the counts it did not use, unless its listing lapsed first
  -- (then they stay counted: requests too many for that minute, never too few).
  if d[9] ~= '' and redis.call('ZREM', d[9] .. ':lazy', d[2]) == 1 and d[10] ~= '0' and redis.call('EXISTS', d[9]) == 1 then
    redis.call('DECRBY', d[9], d[10])
  end
  redis.call('ZREM', d[1], d[2])
  if waited then redis.call('ZREM', d[1] .. ':lazy', d[2]) end
  if d[5] ~= '' then
    if redis.call('ZREM', d[4], d[5]) == 1 then redis.call('HINCRBY', d[3], 'held', '-' .. d[6]) end
    if waited then redis.call('ZREM', d[4] .. ':lazy', d[5]) end
    if d[7] ~= '0' then redis.call('HINCRBY', d[3], 'settled', d[7]) end
  end
end
-- Whether a :lazy set lists a live slot or hold: a request whose departure may be on its way
-- late. Entries lapse with their slot or hold (same score), so lost departures leave none behind.
local function mayBeLate(lazy, now)
  redis.call('ZREMRANGEBYSCORE', lazy, '-inf', now)
  return redis.call('ZCARD', lazy) > 0
end
-- Leases the replica the key's next requests (up to the number asked), admitted ahead of time,
-- when even with them the key and account stay far from their limits: half the key's minute
-- and slots at most, and three times the lease's hold left to spend beside it. The lease is
-- counted in the minute for each of its requests, and holds one slot and one hold (enough for
-- one request and what finished ones spent meanwhile), which the replica's requests use one
-- at a time, until it gives the lease back with its unused counts. It is listed in the :lazy
-- sets (the minute's included) until then, so that a refusal meanwhile gets a second look.
-- Its slot, hold and listing lapse unless topped up: a replica that dies leaves nothing behind
-- but the lease's counts in the minute. Returns the number of requests leased.
local function grantLease(a, minute, running, leftAfter)
  local minuteKey, runningKey, account, holds = a[1], a[2], a[4], a[5]
  local hold = tonumber(a[23])
  local granted = math.min(tonumber(a[20]), math.floor(tonumber(a[6]) / 2) - minute)
  if granted < 1 or 2 * (running + 1) > tonumber(a[7]) then return 0 end
  if a[10] == '1' and leftAfter - hold < 2 * hold then return 0 end
  local id, lapse = a[21], a[22]
  redis.call('INCRBY', minuteKey, granted)
  redis.call('ZADD', minuteKey .. ':lazy', lapse, id)
  redis.call('PEXPIRE', minuteKey .. ':lazy', minuteMs)
  -- No lifetimes renewed here: the admission just before renewed the key's and the account's.
  redis.call('ZADD', runningKey, lapse, id)
  redis.call('ZADD', runningKey .. ':lazy', lapse, id)
  if a[10] == '1' then
    local member = id .. ':' .. a[23]
    redis.call('ZADD', holds, lapse, member)
    redis.call('ZADD', holds .. ':lazy', lapse, member)
    redis.call('HINCRBY', account, 'held', a[23])
  end
  return granted
end
local function admit(a)
  local minuteKey, runningKey, hourKey, account, holds = a[1], a[2], a[3], a[4], a[5]
  local withCredits = a[10] == '1'
  local now = a[16]
  local firstLook = a[19] ~= '1'
  local left = 0
  if withCredits then
    left = spendable(account, holds, a[11], a[12], a[13], now)
    -- The whole hold must fit: what a request may cost is never more than is left.
    if left <= 0 or left < tonumber(a[14]) then
      if firstLook and mayBeLate(holds .. ':lazy', now) then return ${LOOK_AGAIN}, 0 end
      return 4, 0
    end
  end
  local freeLimit = tonumber(a[8])
  if freeLimit > 0 then
    local used = tonumber(redis.call('GET', hourKey) or '0')
    if used >= freeLimit then return 3, redis.call('PTTL', hourKey) end
  end
  local minute = redis.call('INCR', minuteKey)
  if minute == 1 then redis.call('PEXPIRE', minuteKey, minuteMs) end
  if minute > tonumber(a[6]) then
    if firstLook and mayBeLate(minuteKey .. ':lazy', now) then
      redis.call('DECR', minuteKey)
      return ${LOOK_AGAIN}, 0
    end
    return 1, redis.call('PTTL', minuteKey)
  end
  -- A slot per request in flight, lapsing on its own: a departure lost on the way (Redis
  -- restarted, a replica killed) cannot hold a key at its limit for longer than the slot's life.
  redis.call('ZREMRANGEBYSCORE', runningKey, '-inf', now)
  local running, limit = redis.call('ZCARD', runningKey), tonumber(a[7])
  if running >= limit then
    if firstLook and mayBeLate(runningKey .. ':lazy', now) then
      -- Not counted this time: the second look counts it.
      redis.call('DECR', minuteKey)
      return ${LOOK_AGAIN}, 0
    end
    return 2, 1000
  end
  -- Far from the limits: at most half the key's slots taken (this one included), and as
  -- much left to spend after this request's hold as the hold itself.
  local amount = tonumber(a[14])
  local far = 2 * (running + 1) <= limit and (not withCredits or left - amount >= amount)
  local slotExpiry = now + a[9]
  redis.call('ZADD', runningKey, slotExpiry, a[18])
  redis.call('PEXPIRE', runningKey, a[9])
  if far then
    redis.call('ZADD', runningKey .. ':lazy', slotExpiry, a[18])
    redis.call('PEXPIRE', runningKey .. ':lazy', a[9])
  end
  if freeLimit > 0 then
    if redis.call('INCR', hourKey) == 1 then redis.call('PEXPIRE', hourKey, hourMs) end
  end
  if withCredits then
    redis.call('ZADD', holds, a[17], a[15])
    redis.call('HINCRBY', account, 'held', a[14])
    redis.call('PEXPIRE', account, accountTtl)
    redis.call('PEXPIRE', holds, accountTtl)
    if far then
      redis.call('ZADD', holds .. ':lazy', a[17], a[15])
      redis.call('PEXPIRE', holds .. ':lazy', accountTtl)
    end
  end
  local leased = 0
  if far and a[20] ~= '0' then leased = grantLease(a, minute, running + 1, left - amount) end
  return ${ADMITTED}, (far and 1 or 0) + 2 * leased
end
-- After a number per lease operation, two per admission: its code, then the retry-after in ms
-- for a refusal or, for an admitted request, its may-wait flag (1) plus twice the requests leased.
for i = 6 + leaseOpCount + departureCount, #ARGV do
  local code, detail = admit(split(ARGV[i]))
  results[#results + 1] = code
  results[#results + 1] = detail
end
return results
`;

const AVAILABLE_SCRIPT = `${SPENDABLE_LUA}
if redis.call('HEXISTS', ARGV[1], 'balance') == 0 then return false end
return string.format('%d', spendable(ARGV[1], ARGV[2], '0', '-1', '0', ARGV[3]))
`;

/**
 * Running requests' slots and holds (the :lazy listings with them) live longer, each in
 * `RedisLimitStore.renew`'s fields; XX: one already given back or lapsed is never brought
 * back (its departure, or the lapse, already counted it out).
 */
const RENEW_SCRIPT = `
for i = 1, #ARGV do
  local r = {}
  for field in string.gmatch(ARGV[i], '[^\\31]+') do r[#r + 1] = field end
  local runningKey, slotId, lapse, ttl = r[1], r[2], r[3], tonumber(r[4])
  if redis.call('ZADD', runningKey, 'XX', 'CH', lapse, slotId) == 1 then
    redis.call('ZADD', runningKey .. ':lazy', 'XX', lapse, slotId)
    if redis.call('PTTL', runningKey) < ttl then redis.call('PEXPIRE', runningKey, ttl) end
    if redis.call('PTTL', runningKey .. ':lazy') > 0 and redis.call('PTTL', runningKey .. ':lazy') < ttl then redis.call('PEXPIRE', runningKey .. ':lazy', ttl) end
  end
  if r[5] then
    redis.call('ZADD', r[5], 'XX', lapse, r[6])
    redis.call('ZADD', r[5] .. ':lazy', 'XX', lapse, r[6])
  end
end
return #ARGV
`;

const REASONS = { 1: 'per-minute', 2: 'concurrency', 3: 'free-hourly', 4: 'credits' } as const;

/** An idle account's counters are forgotten after a day; the next snapshot rebuilds them. */
const ACCOUNT_TTL_MS = 86_400_000;

type ScriptedRedis = Redis & {
  admitRequests(...args: Array<string | number>): Promise<number[]>;
  availableCredits(...args: Array<string | number>): Promise<string | null>;
  renewRequests(...args: string[]): Promise<number>;
};

/** The amount rides in the member, so a lapsed hold can be released without another look-up. */
const holdMember = (holdId: string, amountMicro: bigint) => `${holdId}:${amountMicro}`;

/** A balance snapshot as the scripts read it (balance, version, usage spent); zeros without one. */
const snapshotFields = (snapshot?: BalanceSnapshot): Array<string | number> =>
  snapshot ? [snapshot.balanceMicro.toString(), snapshot.version, snapshot.usageSpentMicro.toString()] : ['0', 0, '0'];

interface PendingAdmission {
  args: Array<string | number>;
  resolve(result: AdmissionResult): void;
  reject(error: unknown): void;
  /** The lease the script may grant for the key's next requests (see ADMIT_SCRIPT's `grantLease`). */
  lease?: Lease;
}

/**
 * Requests of one key admitted ahead of time on this replica (see ADMIT_SCRIPT's `grantLease`):
 * the replica's next requests of the key that fit run at once, one at a time, on the lease's
 * slot and hold. What they spend is counted in Redis with the next top-up, claim or the
 * lease's return, and the hold covers it until then.
 */
interface Lease {
  id: string;
  concurrencyKey: string;
  /** The minute that counted it: the key's per-minute key and window. */
  perMinuteKey: string;
  minuteWindow: number;
  perMinuteLimit: number;
  concurrencyLimit: number;
  /** Absent for an admission without credits. */
  accountId?: string;
  /** The largest hold of a request the lease admits. */
  amountMicro: bigint;
  /** What the lease holds: room for one request and what finished ones spent since the last count. */
  holdMicro: bigint;
  /** How long a request's slot and hold live once claimed (the admission's). */
  slotTtlMs: number;
  holdTtlMs: number;
  /** Requests counted in the minute for it, and how many of them ran. */
  counts: number;
  used: number;
  /** Spent by its finished requests and not yet sent to Redis. */
  unsettledMicro: bigint;
  /** The `now` of the admission or top-up that last pushed its lapse on. */
  extendedAt: number;
  /** The request it runs: its number (the `used` it took) and its admission's `now`. */
  running?: { request: number; startedAt: number };
  topUpPending: boolean;
  /** Claimed for a long request: it admits no more and leaves with that request. */
  bound: boolean;
  /**
   * One timer each for the lease's life, re-armed (`refresh`) rather than made anew per
   * request: the claim's runs CLAIM_AFTER_MS after each request starts, the idle one the idle
   * window after each ends; each looks at the lease when it fires.
   */
  claimTimer?: NodeJS.Timeout;
  idleTimer?: NodeJS.Timeout;
}

/** Where `admissionArgs` puts the second-look flag and the number of requests to lease. */
const SECOND_LOOK_FIELD = 18;
const LEASE_FIELD = 19;

export interface RedisLimitStoreOptions {
  /** Longest a departure that may wait waits for an admission to ride along with. */
  departureWaitMs?: number;
  /**
   * How long a lease (the key's next requests admitted ahead of time) stays on this replica
   * with no request using it; 0 takes none.
   */
  leaseIdleMs?: number;
  /**
   * How long after a first look that found waiting departures the second look comes: the
   * longest wait plus what a busy replica's event loop may add to its timer.
   */
  secondLookMs?: number;
  /**
   * Longest a command may go unanswered. Redis that accepts commands and never answers (a
   * frozen server, a network that drops everything) then fails calls like a closed connection:
   * this store is no longer `reachable` (the meter counts locally) until a probe is answered.
   */
  commandTimeoutMs?: number;
}

const DEPARTURE_WAIT_MS = 5;
const LEASE_IDLE_MS = 5;
/**
 * Requests a lease asks for at a time: at ~1,500 sequential requests a second, one script call
 * per ten milliseconds instead of one per request. It is topped up when half are used.
 */
const LEASE_REQUESTS = 16;
/**
 * A lease's slot, hold and listing lapse this long after its last admission or top-up if this
 * replica neither tops it up nor gives it back (it died): long enough for a late claim and
 * clocks that differ between replicas. Second looks do not wait for it: an unused lease is
 * given back within its idle window plus a departure's wait.
 */
const LEASE_LAPSE_MS = 1_000;
/** A request that runs on a lease this long is claimed: its slot and hold then live as long as it may. */
const CLAIM_AFTER_MS = 250;
const EVENT_LOOP_ALLOWANCE_MS = 20;
const COMMAND_TIMEOUT_MS = 500;
const MAX_COMPENSATIONS = 10_000;
/**
 * Probes in a row a connection may leave unanswered before it is replaced by a new one: TCP
 * may take many minutes to give up on a peer that vanished, and until then nothing on that
 * connection is answered.
 */
const UNANSWERED_PROBES_BEFORE_RECONNECT = 4;
/** A lease admits requests only while a claim of them would come well before its lapse. */
const LEASE_USABLE_MS = LEASE_LAPSE_MS - CLAIM_AFTER_MS - 10 * EVENT_LOOP_ALLOWANCE_MS;

/**
 * The counters in Redis. What one turn of the event loop admitted goes out as one script
 * call, carrying the departures (finished requests) gathered since the last one: under load
 * that is one round trip and one socket write for many requests instead of two per request.
 * Requests that come one after the other run on leases and need no call of their own.
 */
export class RedisLimitStore implements LimitStore {
  private readonly redis: ScriptedRedis;
  private readonly keyPrefix: string;
  private readonly departureWaitMs: number;
  private readonly leaseIdleMs: number;
  private readonly secondLookMs: number;
  private readonly leasePrefix = `lease-${randomUUID()}-`;
  private leaseCount = 0;
  /** Per concurrency key, this replica's lease, or null while one is being asked for. */
  private readonly leases = new Map<string, Lease | null>();
  /** Leases claimed for a long request, by id, until it ends (they are no longer in `leases`). */
  private readonly claimedLeases = new Map<string, Lease>();
  /** Per concurrency key, the request waiting for the key's lease on its way (one at most). */
  private readonly awaitingLease = new Map<string, () => void>();
  private closing = false;
  private leaseOps: Array<{ args: string; answer?: (granted: number) => void }> = [];
  private admissions: PendingAdmission[] = [];
  private departures: string[] = [];
  private sendScheduled = false;
  private leaseOpScheduled = false;
  private departureTimer?: NodeJS.Timeout;
  private readonly secondLooks = new Map<NodeJS.Timeout, PendingAdmission>();
  private readonly commandTimeoutMs: number;
  /** False from a command that went unanswered until a probe is answered. */
  private answering = true;
  private probeTimer?: NodeJS.Timeout;
  private renewals: string[] = [];
  /**
   * Departures for admissions whose call failed: Redis may have run them all the same (a
   * timeout says nothing about whether the script ran), while the meter admitted them
   * elsewhere. They go with every call until one succeeds; a departure of a slot or hold that
   * was never taken changes nothing.
   */
  private compensations: string[] = [];

  constructor(url: string, prefix: string, options: RedisLimitStoreOptions = {}) {
    if (prefix.includes(FIELD_SEPARATOR)) throw new Error('the queue prefix must not contain the unit separator (\\x1f)');
    this.keyPrefix = `${prefix}:limits:`;
    this.departureWaitMs = options.departureWaitMs ?? DEPARTURE_WAIT_MS;
    this.leaseIdleMs = options.leaseIdleMs ?? LEASE_IDLE_MS;
    // An unused lease is given back at the end of its idle window, riding along for up to departureWaitMs.
    this.secondLookMs = options.secondLookMs ?? this.leaseIdleMs + this.departureWaitMs + EVENT_LOOP_ALLOWANCE_MS;
    this.commandTimeoutMs = options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS;
    // Commands are not queued while disconnected, nor waited for beyond their timeout: the
    // meter turns to its local counters instead. (ioredis keeps a command that timed out in
    // its queue, so a late answer is still matched to it and to nothing else.)
    // Nor sent again on a new connection: a request the meter admitted locally once its
    // admission timed out must not be counted in Redis as well, minutes later.
    this.redis = new Redis(url, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: false,
      commandTimeout: this.commandTimeoutMs,
      autoResendUnfulfilledCommands: false,
    }) as ScriptedRedis;
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('renewRequests', { numberOfKeys: 0, lua: RENEW_SCRIPT });
    this.redis.defineCommand('admitRequests', { numberOfKeys: 0, lua: ADMIT_SCRIPT });
    this.redis.defineCommand('availableCredits', { numberOfKeys: 0, lua: AVAILABLE_SCRIPT });
  }

  get reachable(): boolean {
    return this.redis.status === 'ready' && this.answering;
  }

  /**
   * A call failed: if it went unanswered, Redis is treated as unreachable from now on (no more
   * requests wait for a timeout each) until it answers a probe; a connection that leaves
   * several probes unanswered is replaced.
   */
  private noticeFailure(error: unknown): void {
    if (!isTimeout(error) || !this.answering || this.closing) return;
    this.answering = false;
    let unanswered = 0;
    const probe = () => {
      this.probeTimer = setTimeout(() => {
        if (this.closing) return;
        if (this.redis.status !== 'ready') return probe();
        this.redis.ping().then(
          () => {
            this.answering = true;
            this.probeTimer = undefined;
          },
          (failure: unknown) => {
            if (isTimeout(failure) && ++unanswered >= UNANSWERED_PROBES_BEFORE_RECONNECT) {
              unanswered = 0;
              this.redis.disconnect(true);
            }
            probe();
          },
        );
      }, this.commandTimeoutMs);
      this.probeTimer.unref();
    };
    probe();
  }

  /** Resolves once connected, or after `timeoutMs` in any case (the meter copes with an unreachable Redis). */
  async whenReachable(timeoutMs: number): Promise<void> {
    if (this.reachable) return;
    await new Promise<void>((resolve) => {
      const timer = setTimeout(done, timeoutMs);
      function done() {
        clearTimeout(timer);
        resolve();
      }
      this.redis.once('ready', done);
    });
  }

  /**
   * Checks and counts the request in Redis, in the next script call; or, when this replica
   * holds a lease of the key the request fits, admits it at once on the lease (a top-up goes
   * out when half its requests are used). Requests that come one after the other then wait
   * for no round trip and make one script call per several of them, while every replica
   * still sees each one counted.
   */
  admit(admission: Admission, now: number): Promise<AdmissionResult> {
    if (!this.answering) return Promise.reject(new Error('Redis is not answering'));
    const key = admission.concurrency.key;
    const lease = this.leases.get(key);
    if (lease && this.fits(lease, admission, now)) return Promise.resolve(this.admitOnLease(lease, admission, now));
    // A lease of this key is on its way: its answer is due sooner than a round trip of the
    // request's own, so the first request to come meanwhile waits for it (the others go to
    // Redis, so that a busy key's requests never queue behind leases one by one).
    if (lease === null && !admission.freeHourly && !this.awaitingLease.has(key)) {
      return new Promise((resolve, reject) => this.awaitingLease.set(key, () => this.admit(admission, now).then(resolve, reject)));
    }
    // One lease per key at a time: none asked for while one is held or on its way.
    const next = lease === undefined && !admission.freeHourly ? this.newLease(admission, now) : undefined;
    if (next) this.leases.set(key, null);
    return new Promise((resolve, reject) => {
      this.scheduleSend();
      this.admissions.push({ args: this.admissionArgs(admission, now, next), resolve, reject, lease: next });
    });
  }

  private admitOnLease(lease: Lease, admission: Admission, now: number): AdmissionResult {
    lease.running = { request: ++lease.used, startedAt: now };
    if (lease.claimTimer) lease.claimTimer.refresh();
    else lease.claimTimer = setTimeout(() => this.claim(lease), CLAIM_AFTER_MS);
    // Half the room beside a request's hold taken by what finished requests spent: time to count it.
    const muchUnsettled = lease.unsettledMicro * 2n > lease.holdMicro - lease.amountMicro;
    if (!lease.topUpPending && (lease.counts - lease.used <= LEASE_REQUESTS / 2 || muchUnsettled)) this.topUp(lease, admission, now);
    return { allowed: true, departureMayWait: true, lease: { slotId: lease.id, holdAmountMicro: lease.holdMicro } };
  }

  private newLease(admission: Admission, now: number): Lease | undefined {
    if (this.leaseIdleMs <= 0 || this.closing) return undefined;
    const { perMinute, concurrency, credits } = admission;
    const amountMicro = credits?.amountMicro ?? 0n;
    return {
      id: `${this.leasePrefix}${++this.leaseCount}`,
      concurrencyKey: concurrency.key,
      perMinuteKey: perMinute.key,
      minuteWindow: windowOf(now, MINUTE_MS),
      perMinuteLimit: perMinute.limit,
      concurrencyLimit: concurrency.limit,
      accountId: credits?.accountId,
      amountMicro,
      holdMicro: 2n * amountMicro,
      slotTtlMs: concurrency.ttlMs,
      holdTtlMs: credits?.ttlMs ?? concurrency.ttlMs,
      counts: 0,
      used: 0,
      unsettledMicro: 0n,
      extendedAt: now,
      topUpPending: false,
      bound: false,
    };
  }

  /** Whether the lease can run this request now: idle, a count left, same key, limits, minute and account, room in its hold. */
  private fits(lease: Lease, admission: Admission, now: number): boolean {
    const { perMinute, concurrency, freeHourly, credits } = admission;
    const amountMicro = credits?.amountMicro ?? 0n;
    return (
      !lease.running &&
      !freeHourly &&
      lease.used < lease.counts &&
      now <= lease.extendedAt + LEASE_USABLE_MS &&
      windowOf(now, MINUTE_MS) === lease.minuteWindow &&
      perMinute.key === lease.perMinuteKey &&
      perMinute.limit === lease.perMinuteLimit &&
      concurrency.limit === lease.concurrencyLimit &&
      credits?.accountId === lease.accountId &&
      amountMicro <= lease.amountMicro &&
      lease.unsettledMicro + amountMicro <= lease.holdMicro
    );
  }

  /** The answer about the key's lease on its way: kept if the script granted requests; a request waiting for it goes on. */
  private leaseAnswered(lease: Lease, granted = 0): void {
    const key = lease.concurrencyKey;
    if (granted > 0) {
      lease.counts = granted;
      this.leases.set(key, lease);
      this.whenIdle(lease);
    } else {
      this.leases.delete(key);
    }
    const waiting = this.awaitingLease.get(key);
    this.awaitingLease.delete(key);
    waiting?.();
  }

  /** An idle lease goes back once no request has used it for the idle window (a top-up on its way is waited for). */
  private whenIdle(lease: Lease): void {
    if (lease.idleTimer) {
      lease.idleTimer.refresh();
      return;
    }
    // A request that uses the lease meanwhile re-arms it when it ends.
    lease.idleTimer = setTimeout(() => {
      if (lease.running) return;
      if (lease.topUpPending) return this.whenIdle(lease);
      this.leases.delete(lease.concurrencyKey);
      this.giveBack(lease);
      this.scheduleDepartures();
    }, this.leaseIdleMs);
  }

  /** More requests for a lease half used, counting what its finished requests spent. */
  private topUp(lease: Lease, admission: Admission, now: number): void {
    lease.topUpPending = true;
    this.addLeaseOp(
      lease,
      'topup',
      {
        unused: 0,
        slotLapse: now + LEASE_LAPSE_MS,
        holdLapse: now + LEASE_LAPSE_MS,
        runningTtlMs: 0,
        asked: LEASE_REQUESTS,
        now,
        snapshot: snapshotFields(admission.credits?.snapshot),
      },
      (granted) => {
        lease.topUpPending = false;
        if (granted > 0 && !lease.bound) {
          lease.counts += granted;
          lease.extendedAt = now;
        }
      },
    );
    this.scheduleLeaseOp();
  }

  /**
   * A request still running on a lease after CLAIM_AFTER_MS: the lease becomes its own (slot
   * and hold living as long as it may run, unused counts given back) and admits no more.
   */
  private claim(lease: Lease, request = lease.running?.request): void {
    const running = lease.running;
    if (!running || running.request !== request || lease.bound || this.closing) return;
    // A top-up on its way would add counts the claim could not give back: its answer comes first.
    if (lease.topUpPending) {
      setTimeout(() => this.claim(lease, request), EVENT_LOOP_ALLOWANCE_MS);
      return;
    }
    const at = running.startedAt + CLAIM_AFTER_MS;
    lease.bound = true;
    this.leases.delete(lease.concurrencyKey);
    this.claimedLeases.set(lease.id, lease);
    this.addLeaseOp(lease, 'claim', {
      unused: lease.counts - lease.used,
      slotLapse: at + lease.slotTtlMs,
      holdLapse: at + lease.holdTtlMs,
      runningTtlMs: lease.slotTtlMs,
      asked: 0,
      now: at,
      snapshot: snapshotFields(),
    });
    lease.counts = lease.used;
    this.scheduleSend();
  }

  /** Queues a lease operation (fields as ADMIT_SCRIPT's `leaseOp` reads them); what finished requests spent goes with it. */
  private addLeaseOp(
    lease: Lease,
    op: 'topup' | 'claim',
    fields: { unused: number; slotLapse: number; holdLapse: number; runningTtlMs: number; asked: number; now: number; snapshot: Array<string | number> },
    answer?: (granted: number) => void,
  ): void {
    const accountId = lease.accountId ?? 'none';
    const unsettled = lease.unsettledMicro;
    lease.unsettledMicro = 0n;
    const args = packFields([
      op,
      this.minuteKey(lease.perMinuteKey, lease.minuteWindow),
      this.key(lease.concurrencyKey),
      this.key(accountKey(accountId)),
      this.key(holdsKey(accountId)),
      lease.id,
      lease.accountId ? holdMember(lease.id, lease.holdMicro) : '',
      lease.holdMicro.toString(),
      unsettled.toString(),
      fields.unused,
      fields.slotLapse,
      fields.holdLapse,
      fields.runningTtlMs,
      fields.asked,
      lease.perMinuteLimit,
      lease.concurrencyLimit,
      fields.now,
      ...fields.snapshot,
    ]);
    this.leaseOps.push({ args, answer });
  }

  /** An unused lease leaves like a request that spent what its requests spent, and leaves the minute its unused counts. */
  private giveBack(lease: Lease): void {
    const { id, concurrencyKey, accountId, holdMicro, unsettledMicro } = lease;
    lease.unsettledMicro = 0n;
    clearTimeout(lease.claimTimer);
    clearTimeout(lease.idleTimer);
    this.claimedLeases.delete(id);
    this.addDeparture(
      { concurrencyKey, slotId: id, credits: accountId ? { accountId, holdId: id, amountMicro: holdMicro, spentMicro: unsettledMicro } : undefined, mayWait: true },
      { minuteKey: this.minuteKey(lease.perMinuteKey, lease.minuteWindow), unused: lease.counts - lease.used },
    );
  }

  /** Queues a departure for the next script call (its fields as ADMIT_SCRIPT's departure loop reads them). */
  private addDeparture({ concurrencyKey, slotId, credits, mayWait = false }: Departure, lease?: { minuteKey: string; unused: number }): void {
    const accountId = credits?.accountId ?? 'none';
    this.departures.push(
      packFields([
        this.key(concurrencyKey),
        slotId,
        this.key(accountKey(accountId)),
        this.key(holdsKey(accountId)),
        credits ? holdMember(credits.holdId, credits.amountMicro) : '',
        credits ? credits.amountMicro.toString() : '0',
        credits ? credits.spentMicro.toString() : '0',
        mayWait ? '1' : '0',
        lease?.minuteKey ?? '',
        lease?.unused ?? 0,
      ]),
    );
  }

  /**
   * A departure goes out at once, in this call: its bytes reach Redis before the response's
   * reach the client (callers finish before answering), so whatever the client asks next,
   * of any replica, comes after it. Sent on the next turn of the event loop instead, it
   * could lose that race to a replica descheduled between answering and that turn (seen on
   * a busy 2-core machine as a 403 about once in eight runs of the two-replica test).
   * Unless the admission said it may wait: then it rides along with the next admission of
   * this replica, or leaves after `departureWaitMs` at the latest. That saves a round trip
   * per request when requests come one at a time, without changing any decision:
   * - A departure only lowers the key's in-flight count and the account's held amount, and
   *   raises its settled amount by no more than the hold it releases (else it is not kept
   *   waiting). So a waiting departure can make another admission of the same key or
   *   account (on any replica) be refused for concurrency or credits, never allowed, and
   *   cannot touch the per-minute or free-hour counts.
   * - Only a request admitted far from its limits may wait (margins in ADMIT_SCRIPT). Near a
   *   limit, where the next request is likely to need what this one gives back (a client
   *   that got its answer from one replica asking another at once), it goes out at once.
   * - But other requests of the key or account, on any replica, may bring it to its limit
   *   while this one runs, so the flag is no proof. The script refuses no request for
   *   concurrency or credits while a slot or hold whose departure may be waiting is listed
   *   there: it looks again `secondLookMs` later, when every departure that was waiting at
   *   the first look has been sent. The second look decides, as the first would have with
   *   every departure sent at once (or allows a request because a slot or hold came back in
   *   between, as if it had arrived that much later). Only such refusals wait for it, and
   *   they are rare: the key or account had to come near its limit while a request admitted
   *   far from it was running.
   * The second look counts on every waiting departure leaving within EVENT_LOOP_ALLOWANCE_MS
   * of its due time: no replica's event loop stalls for longer than that.
   * A request that ran on a lease leaves nothing to send: the lease's slot and hold stay for
   * its next request, and what it spent is counted with the lease's next top-up, claim or
   * return (the lease's hold, which counts as spent meanwhile, is at least as large).
   */
  finish(departure: Departure): void {
    const current = this.leases.get(departure.concurrencyKey);
    const lease = current?.id === departure.slotId ? current : this.claimedLeases.get(departure.slotId);
    if (lease?.running) return this.finishOnLease(lease, departure.credits?.spentMicro ?? 0n);
    this.addDeparture(departure);
    const { credits, mayWait = false } = departure;
    if (mayWait && (!credits || credits.spentMicro <= credits.amountMicro)) this.scheduleDepartures();
    else this.send();
  }

  private finishOnLease(lease: Lease, spentMicro: bigint): void {
    lease.running = undefined;
    lease.unsettledMicro += spentMicro;
    // More spent than the lease holds (a request beyond its ceiling) cannot wait to be counted.
    const overspent = lease.unsettledMicro > lease.holdMicro;
    if (!lease.bound && !this.closing && !overspent && (lease.used < lease.counts || lease.topUpPending)) return this.whenIdle(lease);
    if (this.leases.get(lease.concurrencyKey) === lease) this.leases.delete(lease.concurrencyKey);
    // Given back with a top-up on its way, the counts that top-up adds stay counted (too many, never too few).
    this.giveBack(lease);
    if (overspent) this.send();
    else this.scheduleDepartures();
  }

  /**
   * Renewals of one turn of the event loop go out together, in a script call of their own:
   * nothing waits for them, and one lost (Redis unreachable) is made good by the next, a third
   * of the lapse later.
   */
  renew({ concurrencyKey, slotId, credits, ttlMs }: Renewal, now: number): void {
    if (this.closing) return;
    const fields: Array<string | number> = [this.key(concurrencyKey), slotId, now + ttlMs, ttlMs];
    if (credits) fields.push(this.key(holdsKey(credits.accountId)), holdMember(credits.holdId, credits.amountMicro));
    if (this.renewals.push(packFields(fields)) > 1) return;
    setImmediate(() => {
      const renewals = this.renewals;
      this.renewals = [];
      if (!this.reachable) return;
      this.redis.renewRequests(...renewals).catch((error: unknown) => this.noticeFailure(error));
    });
  }

  async available(accountId: string, now: number): Promise<bigint | undefined> {
    // What this replica's requests spent goes first, so what it reports includes it: idle
    // leases of the account go back, and departures still waiting go out.
    for (const [key, lease] of this.leases) {
      if (!lease || lease.accountId !== accountId || lease.running || lease.topUpPending) continue;
      this.leases.delete(key);
      this.giveBack(lease);
    }
    if (this.departures.length > 0 || this.leaseOps.length > 0) this.send();
    const left = await this.redis.availableCredits(this.key(accountKey(accountId)), this.key(holdsKey(accountId)), now).catch((error: unknown) => {
      this.noticeFailure(error);
      throw error;
    });
    return left === null ? undefined : BigInt(left);
  }

  async close(): Promise<void> {
    this.closing = true;
    clearTimeout(this.probeTimer);
    // Admissions awaiting their second look get it now, after this replica's own departures.
    for (const [timer, pending] of this.secondLooks) {
      clearTimeout(timer);
      this.admissions.push(pending);
    }
    this.secondLooks.clear();
    for (const lease of [...this.leases.values(), ...this.claimedLeases.values()]) if (lease) this.giveBack(lease);
    this.leases.clear();
    // Finished requests give their slots and holds back before the connection goes.
    this.send();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private key(name: string): string {
    return this.keyPrefix + name;
  }

  /** The Redis key that counts a key's requests in one minute window. */
  private minuteKey(perMinuteKey: string, window: number): string {
    return this.key(`${perMinuteKey}:${window}`);
  }

  /** `lease`: the lease to ask for the key's next requests, if far enough from the limits. */
  private admissionArgs(admission: Admission, now: number, lease?: Lease): Array<string | number> {
    const { perMinute, concurrency, freeHourly, credits } = admission;
    const accountId = credits?.accountId ?? 'none';
    return [
      this.minuteKey(perMinute.key, windowOf(now, MINUTE_MS)),
      this.key(concurrency.key),
      this.key(freeHourly ? `${freeHourly.key}:${windowOf(now, HOUR_MS)}` : `${perMinute.key}:unused`),
      this.key(accountKey(accountId)),
      this.key(holdsKey(accountId)),
      perMinute.limit,
      concurrency.limit,
      freeHourly ? freeHourly.limit : 0,
      concurrency.ttlMs,
      credits ? '1' : '0',
      ...snapshotFields(credits?.snapshot),
      credits ? credits.amountMicro.toString() : '0',
      credits ? holdMember(credits.holdId, credits.amountMicro) : '',
      now,
      credits ? now + credits.ttlMs : 0,
      concurrency.slotId,
      '0',
      lease ? LEASE_REQUESTS : 0,
      lease ? lease.id : '',
      lease ? now + LEASE_LAPSE_MS : 0,
      lease ? lease.holdMicro.toString() : '0',
    ];
  }

  private scheduleSend(): void {
    if (this.sendScheduled) return;
    this.sendScheduled = true;
    setImmediate(() => this.send());
  }

  /**
   * A top-up decides nothing for the request that asked for it (it already runs), so it
   * leaves a turn of the event loop later than an admission would: the request's upstream
   * call, which undici writes on the next turn, goes out first instead of waiting behind the
   * script call's CPU. A finish or an admission that comes first takes it along.
   */
  private scheduleLeaseOp(): void {
    if (this.sendScheduled || this.leaseOpScheduled) return;
    this.leaseOpScheduled = true;
    setImmediate(() =>
      setImmediate(() => {
        this.leaseOpScheduled = false;
        if (this.leaseOps.length > 0) this.send();
      }),
    );
  }

  private scheduleDepartures(): void {
    if (this.departureTimer) return;
    this.departureTimer = setTimeout(() => this.send(), this.departureWaitMs);
  }

  private lookAgain(pending: PendingAdmission): void {
    pending.args[SECOND_LOOK_FIELD] = '1';
    // Near a limit: no lease (and the key may have another on its way by the second look).
    pending.args[LEASE_FIELD] = 0;
    pending.lease = undefined;
    const timer = setTimeout(() => {
      this.secondLooks.delete(timer);
      this.admissions.push(pending);
      this.scheduleSend();
    }, this.secondLookMs);
    this.secondLooks.set(timer, pending);
  }

  private send(): void {
    this.sendScheduled = false;
    clearTimeout(this.departureTimer);
    this.departureTimer = undefined;
    const [leaseOps, departures, batch] = [this.leaseOps, this.departures, this.admissions];
    this.leaseOps = [];
    this.departures = [];
    this.admissions = [];
    if (leaseOps.length === 0 && batch.length === 0 && departures.length === 0) return;
    const compensations = this.compensations;
    this.compensations = [];
    const args = [...leaseOps.map((op) => op.args), ...compensations, ...departures, ...batch.map((pending) => packFields(pending.args))];
    this.redis.admitRequests(MINUTE_MS, HOUR_MS, ACCOUNT_TTL_MS, leaseOps.length, compensations.length + departures.length, ...args).then(
      (codes) => {
        leaseOps.forEach((op, index) => op.answer?.(Number(codes[index])));
        const offset = leaseOps.length;
        batch.forEach((pending, index) => {
          const code = Number(codes[offset + 2 * index]);
          const detail = Number(codes[offset + 2 * index + 1]);
          if (pending.lease) this.leaseAnswered(pending.lease, code === ADMITTED ? Math.floor(detail / 2) : 0);
          if (code === ADMITTED) return pending.resolve({ allowed: true, departureMayWait: (detail & 1) === 1 });
          if (code === LOOK_AGAIN) return this.lookAgain(pending);
          const reason = REASONS[code as 1 | 2 | 3 | 4];
          pending.resolve({ allowed: false, reason, retryAfterSeconds: reason === 'credits' ? 0 : Math.max(1, Math.ceil(detail / 1000)) });
        });
      },
      // Departures and lease operations lost with a failed call leave slots and holds to lapse on their own.
      (error: unknown) => {
        this.noticeFailure(error);
        this.compensations = [...compensations, ...batch.map(({ args: a }) => packFields([a[1], a[17], a[3], a[4], a[14], a[13], '0', '1', '', 0])), ...this.compensations];
        // Bounded: beyond, the oldest are left to lapse with their slots and holds.
        if (this.compensations.length > MAX_COMPENSATIONS) this.compensations = this.compensations.slice(-MAX_COMPENSATIONS);
        leaseOps.forEach((op) => op.answer?.(0));
        batch.forEach((pending) => {
          if (pending.lease) this.leaseAnswered(pending.lease);
          pending.reject(error);
        });
      },
    );
  }
}

/** ioredis's error for a command left unanswered past `commandTimeout`. */
const isTimeout = (error: unknown) => error instanceof Error && /timed out/i.test(error.message);

const accountKey = (accountId: string) => `account:${accountId}:money`;
const holdsKey = (accountId: string) => `account:${accountId}:holds`;
