import { Redis } from 'ioredis';

/** What one request asks of the limits. Windows are fixed: `windowMs` long, aligned to the epoch. */
export interface Admission {
  perMinute: { key: string; limit: number };
  concurrency: { key: string; limit: number; ttlMs: number };
  /** Only for accounts on the free plan. */
  freeHourly?: { key: string; limit: number };
}

export type AdmissionResult =
  | { allowed: true }
  | { allowed: false; reason: 'per-minute' | 'concurrency' | 'free-hourly'; retryAfterSeconds: number };

/** The counters behind the limits: in the process (standalone) or in Redis, shared by every replica. */
export interface LimitStore {
  admit(admission: Admission, now: number): Promise<AdmissionResult>;
  release(concurrencyKey: string): void;
  close(): Promise<void>;
}

export const MINUTE_MS = 60_000;
export const HOUR_MS = 3_600_000;

const windowOf = (now: number, windowMs: number) => Math.floor(now / windowMs);
const secondsLeft = (now: number, windowMs: number) => Math.max(1, Math.ceil(((windowOf(now, windowMs) + 1) * windowMs - now) / 1000));

/** Counters of one process, for standalone mode. */
export class InMemoryLimitStore implements LimitStore {
  private readonly windows = new Map<string, { window: number; count: number }>();
  private readonly inFlight = new Map<string, number>();

  async admit(admission: Admission, now: number): Promise<AdmissionResult> {
    const { perMinute, concurrency, freeHourly } = admission;
    if (freeHourly && this.count(freeHourly.key, now, HOUR_MS) >= freeHourly.limit) {
      return { allowed: false, reason: 'free-hourly', retryAfterSeconds: secondsLeft(now, HOUR_MS) };
    }
    if (this.increment(perMinute.key, now, MINUTE_MS) > perMinute.limit) {
      return { allowed: false, reason: 'per-minute', retryAfterSeconds: secondsLeft(now, MINUTE_MS) };
    }
    const running = this.inFlight.get(concurrency.key) ?? 0;
    if (running >= concurrency.limit) return { allowed: false, reason: 'concurrency', retryAfterSeconds: 1 };
    this.inFlight.set(concurrency.key, running + 1);
    if (freeHourly) this.increment(freeHourly.key, now, HOUR_MS);
    return { allowed: true };
  }

  release(concurrencyKey: string): void {
    const running = (this.inFlight.get(concurrencyKey) ?? 1) - 1;
    if (running <= 0) this.inFlight.delete(concurrencyKey);
    else this.inFlight.set(concurrencyKey, running);
  }

  async close(): Promise<void> {
    this.windows.clear();
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

/**
 * One round trip admits a request: the free plan's hour, the key's minute and its in-flight
 * count are checked and counted atomically, so replicas share the limits exactly.
 */
const ADMIT_SCRIPT = `
local freeLimit = tonumber(ARGV[4])
if freeLimit > 0 then
  local used = tonumber(redis.call('GET', KEYS[3]) or '0')
  if used >= freeLimit then return {3, redis.call('PTTL', KEYS[3])} end
end
local minute = redis.call('INCR', KEYS[1])
if minute == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[2]) end
if minute > tonumber(ARGV[1]) then return {1, redis.call('PTTL', KEYS[1])} end
local running = redis.call('INCR', KEYS[2])
redis.call('PEXPIRE', KEYS[2], ARGV[6])
if running > tonumber(ARGV[3]) then
  redis.call('DECR', KEYS[2])
  return {2, 1000}
end
if freeLimit > 0 then
  if redis.call('INCR', KEYS[3]) == 1 then redis.call('PEXPIRE', KEYS[3], ARGV[5]) end
end
return {0, 0}
`;

const RELEASE_SCRIPT = `
local running = redis.call('DECR', KEYS[1])
if running <= 0 then redis.call('DEL', KEYS[1]) end
return running
`;

const REASONS = { 1: 'per-minute', 2: 'concurrency', 3: 'free-hourly' } as const;

export class RedisLimitStore implements LimitStore {
  private readonly redis: Redis;

  constructor(url: string, prefix: string) {
    this.redis = new Redis(url, { keyPrefix: `${prefix}:limits:`, maxRetriesPerRequest: 2, enableOfflineQueue: true });
    this.redis.defineCommand('admitRequest', { numberOfKeys: 3, lua: ADMIT_SCRIPT });
    this.redis.defineCommand('releaseRequest', { numberOfKeys: 1, lua: RELEASE_SCRIPT });
  }

  async admit(admission: Admission, now: number): Promise<AdmissionResult> {
    const { perMinute, concurrency, freeHourly } = admission;
    const minuteKey = `${perMinute.key}:${windowOf(now, MINUTE_MS)}`;
    const hourKey = freeHourly ? `${freeHourly.key}:${windowOf(now, HOUR_MS)}` : `${perMinute.key}:unused`;
    const [code, ttlMs] = (await (this.redis as Redis & { admitRequest(...args: Array<string | number>): Promise<[number, number]> }).admitRequest(
      minuteKey,
      concurrency.key,
      hourKey,
      perMinute.limit,
      MINUTE_MS,
      concurrency.limit,
      freeHourly ? freeHourly.limit : 0,
      HOUR_MS,
      concurrency.ttlMs,
    )) as [number, number];
    if (code === 0) return { allowed: true };
    const reason = REASONS[code as 1 | 2 | 3];
    return { allowed: false, reason, retryAfterSeconds: Math.max(1, Math.ceil(Number(ttlMs) / 1000)) };
  }

  release(concurrencyKey: string): void {
    void (this.redis as Redis & { releaseRequest(key: string): Promise<number> }).releaseRequest(concurrencyKey).catch(() => undefined);
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}
