import { Redis } from 'ioredis';
import { requestPathRedisOptions } from '@igw/config';
import {
  ADMISSION_FIELDS,
  AVAILABLE_FIELDS,
  DEPARTURE_FIELDS,
  FIELD_SEPARATOR,
  packFields,
  RENEWAL_FIELDS,
  type AdmissionArgument,
  type DepartureArgument,
} from './lua-arguments';
import { limitScripts } from './lua-scripts';
import { RedisAnswerWatch } from './redis-answer-watch';
import { HOUR_MS, MINUTE_MS, windowOf, type Admission, type AdmissionResult, type Departure, type LimitStore, type RefusalReason, type Renewal } from './limit-store.types';

export interface RedisLimitStoreOptions {
  /**
   * Longest a command may go unanswered. Redis that accepts commands and never answers (a
   * frozen server, a network that drops everything) then fails calls like a closed connection:
   * the store is no longer `reachable` (admission counts locally) until a probe is answered.
   */
  commandTimeoutMs?: number;
}

const COMMAND_TIMEOUT_MS = 500;
/** An idle account's counters are forgotten after a day; the next snapshot rebuilds them. */
const ACCOUNT_TTL_MS = 86_400_000;
/** Failed admissions whose slots and holds are given back with the next call; beyond, the oldest are left to lapse. */
const MAX_COMPENSATIONS = 10_000;
/** The admit script's codes: 0 admitted, the others a refusal's reason. */
const REFUSALS: Record<number, RefusalReason> = { 1: 'per-minute', 2: 'concurrency', 3: 'free-hourly', 4: 'credits', 5: 'key-budget' };
const ADMITTED: AdmissionResult = { allowed: true };

type ScriptedRedis = Redis & {
  admitRequests(...args: Array<string | number>): Promise<number[]>;
  availableCredits(packed: string): Promise<string | null>;
  renewRequests(...packed: string[]): Promise<number>;
};

interface PendingAdmission {
  argument: AdmissionArgument;
  resolve(result: AdmissionResult): void;
  reject(error: unknown): void;
}

/** The amount rides in the member, so a lapsed hold can be released without another look-up. */
const holdMember = (holdId: string, amountMicro: bigint) => `${holdId}:${amountMicro}`;
const accountKey = (accountId: string) => `account:${accountId}:money`;
const holdsKey = (accountId: string) => `account:${accountId}:holds`;
const keyMoneyKey = (keyId: string) => `key:${keyId}:money`;
const keyHoldsKey = (keyId: string) => `key:${keyId}:holds`;

/**
 * The counters in Redis, shared by every replica. What one turn of the event loop admitted
 * goes out as one script call (lua/admit.lua), with the departures of requests that finished
 * meanwhile: under load one round trip and one socket write for many requests. A departure
 * goes out at once, in `finish`, never on a timer or a later turn: how late this process's
 * event loop runs changes when decisions are made, never what they are.
 */
export class RedisLimitStore implements LimitStore {
  private readonly redis: ScriptedRedis;
  private readonly keyPrefix: string;
  private readonly watch: RedisAnswerWatch;
  private admissions: PendingAdmission[] = [];
  private departures: string[] = [];
  private renewals: string[] = [];
  private sendScheduled = false;
  private closing = false;
  /**
   * Departures for admissions whose call failed: Redis may have run them all the same (a
   * timeout says nothing about whether the script ran), while admission admitted them
   * elsewhere. They go with every call until one succeeds; a departure of a slot or hold that
   * was never taken changes nothing.
   */
  private compensations: string[] = [];

  /** A store on a new connection to `url`, with the client options it needs. */
  static connect(url: string, prefix: string, options: RedisLimitStoreOptions = {}): RedisLimitStore {
    const commandTimeoutMs = options.commandTimeoutMs ?? COMMAND_TIMEOUT_MS;
    return new RedisLimitStore(new Redis(url, requestPathRedisOptions(commandTimeoutMs)), prefix, commandTimeoutMs);
  }

  /** `redis`: a connection of the store's own (closed with it), made with `requestPathRedisOptions`. */
  constructor(redis: Redis, prefix: string, commandTimeoutMs = COMMAND_TIMEOUT_MS) {
    if (prefix.includes(FIELD_SEPARATOR)) throw new Error('the queue prefix must not contain the unit separator (\\x1f)');
    this.keyPrefix = `${prefix}:limits:`;
    const scripts = limitScripts();
    this.redis = redis as ScriptedRedis;
    this.redis.on('error', () => undefined);
    this.redis.defineCommand('admitRequests', { numberOfKeys: 0, lua: scripts.admit });
    this.redis.defineCommand('renewRequests', { numberOfKeys: 0, lua: scripts.renew });
    this.redis.defineCommand('availableCredits', { numberOfKeys: 0, lua: scripts.available });
    this.watch = new RedisAnswerWatch(redis, commandTimeoutMs);
  }

  get reachable(): boolean {
    return this.watch.reachable;
  }

  whenReachable(timeoutMs: number): Promise<void> {
    return this.watch.whenReachable(timeoutMs);
  }

  /** Checks and counts the request in Redis, in the script call of this turn of the event loop. */
  admit(admission: Admission, now: number): Promise<AdmissionResult> {
    if (!this.watch.answering) return Promise.reject(new Error('Redis is not answering'));
    return new Promise((resolve, reject) => {
      this.admissions.push({ argument: this.admissionArgument(admission, now), resolve, reject });
      if (this.sendScheduled) return;
      this.sendScheduled = true;
      setImmediate(() => this.send());
    });
  }

  /** Sends the departure now, with the admissions of this turn so far (see the class). */
  finish({ concurrencyKey, slotId, credits }: Departure): void {
    const accountId = credits?.accountId ?? 'none';
    this.departures.push(
      packFields(DEPARTURE_FIELDS, {
        runningKey: this.key(concurrencyKey),
        slotId,
        accountKey: this.key(accountKey(accountId)),
        holdsKey: this.key(holdsKey(accountId)),
        holdMember: credits ? holdMember(credits.holdId, credits.amountMicro) : '',
        holdMicro: credits ? credits.amountMicro.toString() : '0',
        spentMicro: credits ? credits.spentMicro.toString() : '0',
        keyMoneyKey: credits?.keyId ? this.key(keyMoneyKey(credits.keyId)) : '',
        keyHoldsKey: credits?.keyId ? this.key(keyHoldsKey(credits.keyId)) : '',
      }),
    );
    this.send();
  }

  /**
   * Renewals of one turn of the event loop go out together, in a script call of their own:
   * nothing waits for them, and one lost (Redis unreachable) is made good by the next, a third
   * of the lapse later.
   */
  renew({ concurrencyKey, slotId, credits, ttlMs }: Renewal, now: number): void {
    if (this.closing) return;
    const packed = packFields(RENEWAL_FIELDS, {
      runningKey: this.key(concurrencyKey),
      slotId,
      lapse: now + ttlMs,
      ttlMs,
      holdsKey: credits ? this.key(holdsKey(credits.accountId)) : '',
      holdMember: credits ? holdMember(credits.holdId, credits.amountMicro) : '',
      keyHoldsKey: credits?.keyId ? this.key(keyHoldsKey(credits.keyId)) : '',
    });
    if (this.renewals.push(packed) > 1) return;
    setImmediate(() => {
      const renewals = this.renewals;
      this.renewals = [];
      if (!this.reachable) return;
      this.redis.renewRequests(...renewals).catch((error: unknown) => this.watch.noticeFailure(error));
    });
  }

  async available(accountId: string, now: number): Promise<bigint | undefined> {
    const packed = packFields(AVAILABLE_FIELDS, { accountKey: this.key(accountKey(accountId)), holdsKey: this.key(holdsKey(accountId)), now });
    const left = await this.redis.availableCredits(packed).catch((error: unknown) => {
      this.watch.noticeFailure(error);
      throw error;
    });
    return left === null ? undefined : BigInt(left);
  }

  async close(): Promise<void> {
    this.closing = true;
    this.watch.close();
    // Admissions of this turn are answered before the connection goes.
    this.send();
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private key(name: string): string {
    return this.keyPrefix + name;
  }

  private admissionArgument({ perMinute, concurrency, freeHourly, credits, holdOnly }: Admission, now: number): AdmissionArgument {
    const accountId = credits?.accountId ?? 'none';
    const budget = credits?.keyBudget;
    return {
      minuteKey: this.key(`${perMinute.key}:${windowOf(now, MINUTE_MS)}`),
      runningKey: this.key(concurrency.key),
      hourKey: freeHourly ? this.key(`${freeHourly.key}:${windowOf(now, HOUR_MS)}`) : '',
      accountKey: this.key(accountKey(accountId)),
      holdsKey: this.key(holdsKey(accountId)),
      perMinuteLimit: perMinute.limit,
      concurrencyLimit: concurrency.limit,
      freeHourlyLimit: freeHourly ? freeHourly.limit : 0,
      slotId: concurrency.slotId,
      slotTtlMs: concurrency.ttlMs,
      withCredits: credits ? '1' : '0',
      balanceMicro: credits ? credits.snapshot.balanceMicro.toString() : '0',
      balanceVersion: credits ? credits.snapshot.version : 0,
      usageSpentMicro: credits ? credits.snapshot.usageSpentMicro.toString() : '0',
      holdMicro: credits ? credits.amountMicro.toString() : '0',
      holdMember: credits ? holdMember(credits.holdId, credits.amountMicro) : '',
      holdLapse: credits ? now + credits.ttlMs : 0,
      now,
      keyMoneyKey: budget ? this.key(keyMoneyKey(budget.keyId)) : '',
      keyHoldsKey: budget ? this.key(keyHoldsKey(budget.keyId)) : '',
      keyLimitMicro: budget ? budget.limitMicro.toString() : '0',
      keyVersion: budget ? budget.snapshot.version : 0,
      keyPeriodStart: budget ? budget.snapshot.periodStart : 0,
      keySpentMicro: budget ? budget.snapshot.spentMicro.toString() : '0',
      keyAppliedMicro: budget ? budget.snapshot.appliedMicro.toString() : '0',
      keyCurrentPeriodStart: budget ? budget.periodStart : 0,
      holdOnly: holdOnly ? '1' : '0',
    };
  }

  /** The departure that undoes an admission: gives back its slot and hold, counts nothing as spent. */
  private undo(admission: AdmissionArgument): string {
    const { runningKey, slotId, accountKey: account, holdsKey: holds, holdMember: member, holdMicro, keyMoneyKey: keyMoney, keyHoldsKey: keyHolds } = admission;
    const departure: DepartureArgument = { runningKey, slotId, accountKey: account, holdsKey: holds, holdMember: member, holdMicro, spentMicro: '0', keyMoneyKey: keyMoney, keyHoldsKey: keyHolds };
    return packFields(DEPARTURE_FIELDS, departure);
  }

  private send(): void {
    this.sendScheduled = false;
    const [departures, batch] = [this.departures, this.admissions];
    this.departures = [];
    this.admissions = [];
    if (batch.length === 0 && departures.length === 0) return;
    const compensations = this.compensations;
    this.compensations = [];
    const args = [...compensations, ...departures, ...batch.map((pending) => packFields(ADMISSION_FIELDS, pending.argument))];
    this.redis.admitRequests(MINUTE_MS, HOUR_MS, ACCOUNT_TTL_MS, compensations.length + departures.length, ...args).then(
      (codes) => {
        batch.forEach((pending, index) => {
          const code = Number(codes[2 * index]);
          if (code === 0) return pending.resolve(ADMITTED);
          const reason = REFUSALS[code];
          const retryAfterMs = Number(codes[2 * index + 1]);
          pending.resolve({ allowed: false, reason, retryAfterSeconds: reason === 'credits' || reason === 'key-budget' ? 0 : Math.max(1, Math.ceil(retryAfterMs / 1000)) });
        });
      },
      // Departures lost with a failed call leave their slots and holds to lapse on their own.
      (error: unknown) => {
        this.watch.noticeFailure(error);
        this.compensations = [...compensations, ...batch.map((pending) => this.undo(pending.argument)), ...this.compensations];
        if (this.compensations.length > MAX_COMPENSATIONS) this.compensations = this.compensations.slice(-MAX_COMPENSATIONS);
        for (const pending of batch) pending.reject(error);
      },
    );
  }
}
