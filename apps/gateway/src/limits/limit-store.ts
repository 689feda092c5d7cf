import { randomUUID } from 'node:crypto';
import type { BalanceSnapshot } from '@igw/platform';
import { Redis } from 'ioredis';

/**
 * Money held for one request while it runs: its most expensive outcome. While held it
 * counts as spent, so concurrent requests cannot together spend more than the account has
 * (plus, at worst, one request's hold).
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
  /** Paid endpoints: refused when nothing is left to spend, else the hold is taken. */
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

export type AdmissionResult =
  | {
      allowed: true;
      /**
       * Set by a store that batches departures, when the request was admitted far from its
       * key's and account's limits: its departure may then wait a few milliseconds for company.
       */
      departureMayWait?: boolean;
      /**
       * Set when the request was admitted from a reservation: the reservation's slot and hold
       * became the request's, so its departure gives back these (the hold no smaller than the
       * request's own).
       */
      reserved?: { slotId: string; holdAmountMicro: bigint };
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
    if (money && spendable(money) <= 0n) return { allowed: false, reason: 'credits', retryAfterSeconds: 0 };
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
 * Each admission and departure is one script argument, its fields (`admissionArgs`'s; for a
 * departure: running key, slot id, account key, holds key, hold member, held amount, spent,
 * may-wait flag, and for a reservation given back unused the minute key that counted it, ''
 * otherwise) joined by the unit separator: ioredis's per-argument work was a tenth of the
 * gateway's CPU under load. Key names come from ids, prefixes and numbers, never holding it.
 */
const FIELD_SEPARATOR = '\x1f';
const packFields = (fields: ReadonlyArray<string | number>) => fields.join(FIELD_SEPARATOR);

/** Result codes of the admit script; 1 to 4 are refusals (see REASONS). */
const ADMITTED = 0;
const LOOK_AGAIN = 5;

/**
 * One round trip for what a turn of the event loop produced: first the requests that
 * finished (slots and holds given back, their cost counted as spent), then the new ones
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
 * departure that may have been waiting then has arrived. Reservations (the key's next
 * request admitted ahead of time, see `reserve`) are listed the same way, in the minute's
 * `:lazy` set too, so a per-minute refusal while one may be given back also looks again.
 */
const ADMIT_SCRIPT = `${SPENDABLE_LUA}
local minuteMs, hourMs, accountTtl, departureCount = ARGV[1], ARGV[2], ARGV[3], tonumber(ARGV[4])
-- Each departure and admission travels as one argument, its fields joined by the unit separator.
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
for i = 5, 4 + departureCount do
  local d = split(ARGV[i])
  local waited = d[8] == '1'
  -- A reservation never used leaves the minute it was counted in, unless its listing lapsed
  -- first (then it stays counted: one request too many for that minute, never too few).
  if d[9] ~= '' and redis.call('ZREM', d[9] .. ':lazy', d[2]) == 1 and redis.call('EXISTS', d[9]) == 1 then
    redis.call('DECR', d[9])
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
-- Admits the replica's next request of the key ahead of time, when even with it the key and
-- account stay far from their limits: half the key's minute and slots at most, and three
-- holds' worth left to spend beside it. Counted like a request (minute, slot, hold) until the
-- replica claims it for a request or gives it back, and listed in the :lazy sets (the
-- minute's included) until then, so that a refusal meanwhile gets a second look. Its slot and
-- hold lapse with the listing: a replica that dies leaves nothing behind but one count in the
-- minute. 1 when reserved.
local function reserve(a, minute, running, leftAfter)
  local minuteKey, runningKey, account, holds = a[1], a[2], a[4], a[5]
  local withCredits = a[10] == '1'
  local amount = tonumber(a[14])
  if 2 * (minute + 1) > tonumber(a[6]) or 2 * (running + 1) > tonumber(a[7]) then return 0 end
  if withCredits and leftAfter - amount < 2 * amount then return 0 end
  local id, lapse = a[21], a[22]
  redis.call('INCR', minuteKey)
  redis.call('ZADD', minuteKey .. ':lazy', lapse, id)
  redis.call('PEXPIRE', minuteKey .. ':lazy', minuteMs)
  -- No lifetimes renewed here: an admission renewed the key's and the account's just before,
  -- a claim the key's, the account's (a day) being renewed by the admission this minute began with.
  redis.call('ZADD', runningKey, lapse, id)
  redis.call('ZADD', runningKey .. ':lazy', lapse, id)
  if withCredits then
    local member = id .. ':' .. a[14]
    redis.call('ZADD', holds, lapse, member)
    redis.call('ZADD', holds .. ':lazy', lapse, member)
    redis.call('HINCRBY', account, 'held', a[14])
  end
  return 1
end
-- A request this replica admitted from its reservation: the reservation's minute count stays
-- (no longer to be given back), its slot and hold become the request's, kept under the
-- reservation's names (listed as :lazy, the request having been admitted far from the limits)
-- and living as long as the request's own would, and the next reservation is taken if the key
-- is still far from them. A reservation that lapsed before its claim came is counted again.
-- The account's keys live a day from the admission that took the key's first reservation of
-- this minute (a reservation is claimed in the minute that counted it), far longer than
-- the request; the key's slots are renewed for as long as this request may run.
local function claim(a)
  local minuteKey, runningKey, account, holds = a[1], a[2], a[4], a[5]
  local withCredits = a[10] == '1'
  local now, reserved = a[16], a[23]
  redis.call('ZREM', minuteKey .. ':lazy', reserved)
  local slotExpiry = now + a[9]
  redis.call('ZADD', runningKey, slotExpiry, reserved)
  redis.call('ZADD', runningKey .. ':lazy', slotExpiry, reserved)
  redis.call('PEXPIRE', runningKey, a[9])
  redis.call('PEXPIRE', runningKey .. ':lazy', a[9])
  local leftAfter = 0
  if withCredits then
    if redis.call('ZADD', holds, a[17], a[24]) == 1 then redis.call('HINCRBY', account, 'held', a[25]) end
    redis.call('ZADD', holds .. ':lazy', a[17], a[24])
    leftAfter = spendable(account, holds, a[11], a[12], a[13], now)
  end
  redis.call('ZREMRANGEBYSCORE', runningKey, '-inf', now)
  local running = redis.call('ZCARD', runningKey)
  local minute = tonumber(redis.call('GET', minuteKey) or '0')
  local next = 0
  if a[20] == '1' then next = reserve(a, minute, running, leftAfter) end
  return ${ADMITTED}, 1 + 2 * next
end
local function admit(a)
  if a[23] ~= '' then return claim(a) end
  local minuteKey, runningKey, hourKey, account, holds = a[1], a[2], a[3], a[4], a[5]
  local withCredits = a[10] == '1'
  local now = a[16]
  local firstLook = a[19] ~= '1'
  local left = 0
  if withCredits then
    left = spendable(account, holds, a[11], a[12], a[13], now)
    if left <= 0 then
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
  local reserved = 0
  if far and a[20] == '1' then reserved = reserve(a, minute, running + 1, left - amount) end
  return ${ADMITTED}, (far and 1 or 0) + 2 * reserved
end
-- Two numbers per admission: its code, then the retry-after in ms for a refusal or, for an
-- admitted request, its may-wait flag (1) plus 2 when the next request was reserved.
local results = {}
for i = 5 + departureCount, #ARGV do
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

const REASONS = { 1: 'per-minute', 2: 'concurrency', 3: 'free-hourly', 4: 'credits' } as const;

/** An idle account's counters are forgotten after a day; the next snapshot rebuilds them. */
const ACCOUNT_TTL_MS = 86_400_000;

type ScriptedRedis = Redis & {
  admitRequests(...args: Array<string | number>): Promise<number[]>;
  availableCredits(...args: Array<string | number>): Promise<string | null>;
};

/** The amount rides in the member, so a lapsed hold can be released without another look-up. */
const holdMember = (holdId: string, amountMicro: bigint) => `${holdId}:${amountMicro}`;

interface PendingAdmission {
  args: Array<string | number>;
  resolve(result: AdmissionResult): void;
  reject(error: unknown): void;
  /** The reservation the script may take for the key's next request (see ADMIT_SCRIPT's `reserve`). */
  reservation?: Reservation;
}

/** A request of one key admitted ahead of time on this replica: the next one that fits may run at once. */
interface Reservation {
  id: string;
  concurrencyKey: string;
  /** The minute that counted it: the key's per-minute key and window. */
  perMinuteKey: string;
  minuteWindow: number;
  perMinuteLimit: number;
  concurrencyLimit: number;
  /** Absent for an admission without credits. */
  accountId?: string;
  amountMicro: bigint;
  /** The admission's `now` plus the use window: a request after this does not claim it. */
  usableUntil: number;
  timer?: NodeJS.Timeout;
}

/** Where `admissionArgs` puts the second-look and reserve flags. */
const SECOND_LOOK_FIELD = 18;
const RESERVE_FIELD = 19;

export interface RedisLimitStoreOptions {
  /** Longest a departure that may wait waits for an admission to ride along with. */
  departureWaitMs?: number;
  /**
   * How long a reservation (the key's next request admitted ahead of time) stays usable on
   * this replica; 0 takes none.
   */
  reservationUseMs?: number;
  /**
   * How long after a first look that found waiting departures the second look comes: the
   * longest wait plus what a busy replica's event loop may add to its timer.
   */
  secondLookMs?: number;
}

const DEPARTURE_WAIT_MS = 5;
const RESERVATION_USE_MS = 5;
/**
 * A reservation's slot, hold and listing lapse this long after its admission if this replica
 * neither claims nor gives it back (it died): long enough for a late claim and clocks that
 * differ between replicas. Second looks do not wait for it: a reservation is given back within
 * its use window plus a departure's wait.
 */
const RESERVATION_LAPSE_MS = 1_000;
const EVENT_LOOP_ALLOWANCE_MS = 20;

/**
 * The counters in Redis. What one turn of the event loop admitted goes out as one script
 * call, carrying the departures (finished requests) gathered since the last one: under load
 * that is one round trip and one socket write for many requests instead of two per request.
 */
export class RedisLimitStore implements LimitStore {
  private readonly redis: ScriptedRedis;
  private readonly keyPrefix: string;
  private readonly departureWaitMs: number;
  private readonly reservationUseMs: number;
  /** How long after its admission's `now` a reservation's listing lapses if neither claimed nor given back. */
  private readonly reservationLapseMs: number;
  private readonly secondLookMs: number;
  private readonly reservationPrefix = `rsv-${randomUUID()}-`;
  private reservationCount = 0;
  /** Per concurrency key, this replica's reservation, or null while one is being asked for. */
  private readonly reservations = new Map<string, Reservation | null>();
  /** Per concurrency key, the request waiting for the key's reservation on its way (one at most). */
  private readonly awaitingReservation = new Map<string, () => void>();
  private closing = false;
  /** A claim not sent yet: a departure of a claimed request must not overtake its claim. */
  private claimUnsent = false;
  private admissions: PendingAdmission[] = [];
  private departures: string[] = [];
  private sendScheduled = false;
  private claimScheduled = false;
  private departureTimer?: NodeJS.Timeout;
  private readonly secondLooks = new Map<NodeJS.Timeout, PendingAdmission>();

  constructor(url: string, prefix: string, options: RedisLimitStoreOptions = {}) {
    if (prefix.includes(FIELD_SEPARATOR)) throw new Error('the queue prefix must not contain the unit separator (\\x1f)');
    this.keyPrefix = `${prefix}:limits:`;
    this.departureWaitMs = options.departureWaitMs ?? DEPARTURE_WAIT_MS;
    this.reservationUseMs = options.reservationUseMs ?? RESERVATION_USE_MS;
    this.reservationLapseMs = Math.max(RESERVATION_LAPSE_MS, 2 * this.reservationUseMs);
    // An unused reservation is given back at the end of its use window, riding along for up to departureWaitMs.
    this.secondLookMs = options.secondLookMs ?? this.reservationUseMs + this.departureWaitMs + EVENT_LOOP_ALLOWANCE_MS;
    // Commands are not queued while disconnected: the meter turns to its local counters at once instead.
    this.redis = new Redis(url, { maxRetriesPerRequest: 1, enableOfflineQueue: false }) as ScriptedRedis;
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('admitRequests', { numberOfKeys: 0, lua: ADMIT_SCRIPT });
    this.redis.defineCommand('availableCredits', { numberOfKeys: 0, lua: AVAILABLE_SCRIPT });
  }

  get reachable(): boolean {
    return this.redis.status === 'ready';
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
   * holds a reservation the request fits, admits it at once and claims the reservation in the
   * next call (which also asks for the next reservation). Requests that come one after the
   * other then wait for no round trip, while every replica still sees each one counted.
   */
  admit(admission: Admission, now: number): Promise<AdmissionResult> {
    const key = admission.concurrency.key;
    const held = this.reservations.get(key);
    if (held && this.fits(held, admission, now)) {
      clearTimeout(held.timer);
      const next = this.newReservation(admission, now);
      this.reservations.set(key, null);
      this.claimUnsent = true;
      this.admissions.push({ args: this.admissionArgs(admission, now, next, held), resolve: () => undefined, reject: () => undefined, reservation: next });
      this.scheduleClaim();
      return Promise.resolve({ allowed: true, departureMayWait: true, reserved: { slotId: held.id, holdAmountMicro: held.amountMicro } });
    }
    // A reservation of this key is on its way: its answer is due sooner than a round trip of
    // the request's own, so the first request to come meanwhile waits for it (the others go
    // to Redis, so that a busy key's requests never queue behind reservations one by one).
    if (held === null && !admission.freeHourly && !this.awaitingReservation.has(key)) {
      return new Promise((resolve, reject) => this.awaitingReservation.set(key, () => this.admit(admission, now).then(resolve, reject)));
    }
    // One reservation per key at a time: none asked for while one is held or on its way.
    const reservation = held === undefined && !admission.freeHourly ? this.newReservation(admission, now) : undefined;
    if (reservation) this.reservations.set(key, null);
    return new Promise((resolve, reject) => {
      this.scheduleSend();
      this.admissions.push({ args: this.admissionArgs(admission, now, reservation), resolve, reject, reservation });
    });
  }

  private newReservation(admission: Admission, now: number): Reservation | undefined {
    if (this.reservationUseMs <= 0 || this.closing) return undefined;
    const { perMinute, concurrency, credits } = admission;
    return {
      id: `${this.reservationPrefix}${++this.reservationCount}`,
      concurrencyKey: concurrency.key,
      perMinuteKey: perMinute.key,
      minuteWindow: windowOf(now, MINUTE_MS),
      perMinuteLimit: perMinute.limit,
      concurrencyLimit: concurrency.limit,
      accountId: credits?.accountId,
      amountMicro: credits?.amountMicro ?? 0n,
      usableUntil: now + this.reservationUseMs,
    };
  }

  /** Whether the reservation stands for this request: same key, limits, minute and account, a hold no larger. */
  private fits(reservation: Reservation, admission: Admission, now: number): boolean {
    const { perMinute, concurrency, freeHourly, credits } = admission;
    return (
      !freeHourly &&
      now <= reservation.usableUntil &&
      windowOf(now, MINUTE_MS) === reservation.minuteWindow &&
      perMinute.key === reservation.perMinuteKey &&
      perMinute.limit === reservation.perMinuteLimit &&
      concurrency.limit === reservation.concurrencyLimit &&
      credits?.accountId === reservation.accountId &&
      (credits?.amountMicro ?? 0n) <= reservation.amountMicro
    );
  }

  /** The answer about the key's reservation on its way: kept if the script took it; a request waiting for it goes on. */
  private reservationAnswered(key: string, taken?: Reservation): void {
    if (taken) this.keep(taken);
    else this.reservations.delete(key);
    const waiting = this.awaitingReservation.get(key);
    this.awaitingReservation.delete(key);
    waiting?.();
  }

  /** Keeps what the script reserved until the end of its use window, then gives it back. */
  private keep(reservation: Reservation): void {
    // Cleared when the reservation is claimed or the store closes.
    reservation.timer = setTimeout(() => {
      this.reservations.delete(reservation.concurrencyKey);
      this.giveBack(reservation);
      this.scheduleDepartures();
    }, this.reservationUseMs);
    this.reservations.set(reservation.concurrencyKey, reservation);
  }

  /** An unused reservation leaves like a request that spent nothing, and also leaves the minute that counted it. */
  private giveBack(reservation: Reservation): void {
    const { id, concurrencyKey, accountId, amountMicro } = reservation;
    this.addDeparture(
      { concurrencyKey, slotId: id, credits: accountId ? { accountId, holdId: id, amountMicro, spentMicro: 0n } : undefined, mayWait: true },
      this.key(`${reservation.perMinuteKey}:${reservation.minuteWindow}`),
    );
  }

  /** Queues a departure for the next script call (its fields as ADMIT_SCRIPT's departure loop reads them). */
  private addDeparture({ concurrencyKey, slotId, credits, mayWait = false }: Departure, reservedMinuteKey = ''): void {
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
        reservedMinuteKey,
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
   */
  finish(departure: Departure): void {
    // Only a claimed request can finish before its admission went out.
    if (this.claimUnsent) this.send();
    this.addDeparture(departure);
    const { credits, mayWait = false } = departure;
    if (mayWait && (!credits || credits.spentMicro <= credits.amountMicro)) this.scheduleDepartures();
    else this.send();
  }

  async available(accountId: string, now: number): Promise<bigint | undefined> {
    // Departures of this replica still waiting go first, so what it reports includes them.
    if (this.departures.length > 0) this.send();
    const left = await this.redis.availableCredits(this.key(accountKey(accountId)), this.key(holdsKey(accountId)), now);
    return left === null ? undefined : BigInt(left);
  }

  async close(): Promise<void> {
    this.closing = true;
    // Admissions awaiting their second look get it now, after this replica's own departures.
    for (const [timer, pending] of this.secondLooks) {
      clearTimeout(timer);
      this.admissions.push(pending);
    }
    this.secondLooks.clear();
    for (const reservation of this.reservations.values()) {
      if (!reservation) continue;
      clearTimeout(reservation.timer);
      this.giveBack(reservation);
    }
    this.reservations.clear();
    // Finished requests give their slots and holds back before the connection goes.
    this.send();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private key(name: string): string {
    return this.keyPrefix + name;
  }

  /** `reserve`: the reservation to take for the key's next request, if far enough; `claimed`: the one this request was admitted from. */
  private admissionArgs(admission: Admission, now: number, reserve?: Reservation, claimed?: Reservation): Array<string | number> {
    const { perMinute, concurrency, freeHourly, credits } = admission;
    const accountId = credits?.accountId ?? 'none';
    return [
      this.key(`${perMinute.key}:${windowOf(now, MINUTE_MS)}`),
      this.key(concurrency.key),
      this.key(freeHourly ? `${freeHourly.key}:${windowOf(now, HOUR_MS)}` : `${perMinute.key}:unused`),
      this.key(accountKey(accountId)),
      this.key(holdsKey(accountId)),
      perMinute.limit,
      concurrency.limit,
      freeHourly ? freeHourly.limit : 0,
      concurrency.ttlMs,
      credits ? '1' : '0',
      credits ? credits.snapshot.balanceMicro.toString() : '0',
      credits ? credits.snapshot.version : 0,
      credits ? credits.snapshot.usageSpentMicro.toString() : '0',
      credits ? credits.amountMicro.toString() : '0',
      credits ? holdMember(credits.holdId, credits.amountMicro) : '',
      now,
      credits ? now + credits.ttlMs : 0,
      concurrency.slotId,
      '0',
      reserve ? '1' : '0',
      reserve ? reserve.id : '',
      reserve ? now + this.reservationLapseMs : 0,
      claimed ? claimed.id : '',
      claimed?.accountId ? holdMember(claimed.id, claimed.amountMicro) : '',
      claimed ? claimed.amountMicro.toString() : '0',
    ];
  }

  private scheduleSend(): void {
    if (this.sendScheduled) return;
    this.sendScheduled = true;
    setImmediate(() => this.send());
  }

  /**
   * A claim decides nothing (its request already runs), so it leaves a turn of the event loop
   * later than an admission would: the request's upstream call, which undici writes on the
   * next turn, goes out first instead of waiting behind the script call's CPU. A finish or
   * an admission that comes first takes it along.
   */
  private scheduleClaim(): void {
    if (this.sendScheduled || this.claimScheduled) return;
    this.claimScheduled = true;
    setImmediate(() =>
      setImmediate(() => {
        this.claimScheduled = false;
        if (this.claimUnsent) this.send();
      }),
    );
  }

  private scheduleDepartures(): void {
    if (this.departureTimer) return;
    this.departureTimer = setTimeout(() => this.send(), this.departureWaitMs);
  }

  private lookAgain(pending: PendingAdmission): void {
    pending.args[SECOND_LOOK_FIELD] = '1';
    // Near a limit: no reservation (and the key may have another on its way by the second look).
    pending.args[RESERVE_FIELD] = '0';
    pending.reservation = undefined;
    const timer = setTimeout(() => {
      this.secondLooks.delete(timer);
      this.admissions.push(pending);
      this.scheduleSend();
    }, this.secondLookMs);
    this.secondLooks.set(timer, pending);
  }

  private send(): void {
    this.sendScheduled = false;
    this.claimUnsent = false;
    clearTimeout(this.departureTimer);
    this.departureTimer = undefined;
    const batch = this.admissions;
    const departures = this.departures;
    this.admissions = [];
    this.departures = [];
    if (batch.length === 0 && departures.length === 0) return;
    this.redis.admitRequests(MINUTE_MS, HOUR_MS, ACCOUNT_TTL_MS, departures.length, ...departures, ...batch.map((pending) => packFields(pending.args))).then(
      (codes) => {
        batch.forEach((pending, index) => {
          const code = Number(codes[2 * index]);
          const detail = Number(codes[2 * index + 1]);
          if (pending.reservation) this.reservationAnswered(pending.reservation.concurrencyKey, code === ADMITTED && detail & 2 ? pending.reservation : undefined);
          if (code === ADMITTED) return pending.resolve({ allowed: true, departureMayWait: (detail & 1) === 1 });
          if (code === LOOK_AGAIN) return this.lookAgain(pending);
          const reason = REASONS[code as 1 | 2 | 3 | 4];
          pending.resolve({ allowed: false, reason, retryAfterSeconds: reason === 'credits' ? 0 : Math.max(1, Math.ceil(detail / 1000)) });
        });
      },
      // Departures lost with a failed call leave slots and holds to lapse on their own.
      (error: unknown) =>
        batch.forEach((pending) => {
          if (pending.reservation) this.reservationAnswered(pending.reservation.concurrencyKey);
          pending.reject(error);
        }),
    );
  }
}

const accountKey = (accountId: string) => `account:${accountId}:money`;
const holdsKey = (accountId: string) => `account:${accountId}:holds`;
