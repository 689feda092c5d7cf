import type { BalanceSnapshot } from '@igw/contracts';
import { HOUR_MS, MINUTE_MS, secondsLeft, windowOf, type Admission, type AdmissionResult, type Departure, type LimitStore, type Renewal } from './limit-store.types';

interface AccountMoney {
  balanceMicro: bigint;
  version: number;
  usageSpentMicro: bigint;
  settledMicro: bigint;
  heldMicro: bigint;
  holds: Map<string, { amountMicro: bigint; expiresAt: number }>;
}

/** Counters of one process: standalone mode's, and a replica's own while Redis is unreachable. */
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
