import type { BalanceSnapshot } from '@igw/contracts';
import { HOUR_MS, MINUTE_MS, secondsLeft, windowOf, type Admission, type AdmissionResult, type Departure, type KeyBudgetHold, type LimitStore, type Renewal } from './limit-store.types';

interface Holds {
  heldMicro: bigint;
  holds: Map<string, { amountMicro: bigint; expiresAt: number }>;
}

interface AccountMoney extends Holds {
  balanceMicro: bigint;
  version: number;
  usageSpentMicro: bigint;
  settledMicro: bigint;
}

/** A key's budget counters, as lua/spendable.lua keeps them (keySpendable). */
interface KeyMoney extends Holds {
  version: number;
  periodStart: number;
  spentMicro: bigint;
  appliedMicro: bigint;
  settledMicro: bigint;
}

/** Counters of one process: standalone mode's, and a replica's own while Redis is unreachable. */
export class InMemoryLimitStore implements LimitStore {
  readonly reachable = true;
  private readonly windows = new Map<string, { window: number; count: number }>();
  private readonly inFlight = new Map<string, Map<string, number>>();
  private readonly accounts = new Map<string, AccountMoney>();
  private readonly keys = new Map<string, KeyMoney>();

  async admit(admission: Admission, now: number): Promise<AdmissionResult> {
    const { perMinute, concurrency, freeHourly, credits } = admission;
    const money = credits ? this.money(credits.accountId, credits.snapshot, now) : undefined;
    // The whole hold must fit: what a request may cost is never more than is left.
    if (money && credits && (spendable(money) <= 0n || spendable(money) < credits.amountMicro)) return { allowed: false, reason: 'credits', retryAfterSeconds: 0 };
    // The key's budget, when it has one, the same way and in the same step.
    const budget = credits?.keyBudget;
    const keyMoney = budget ? this.keyMoney(budget, now) : undefined;
    if (budget && keyMoney && credits) {
      const left = keyLeft(keyMoney, budget);
      if (left <= 0n || left < credits.amountMicro) return { allowed: false, reason: 'key-budget', retryAfterSeconds: 0 };
    }
    // A hold added to a request admitted already: its minute and slot were counted then.
    if (!admission.holdOnly) {
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
    }
    if (money && credits) {
      money.holds.set(credits.holdId, { amountMicro: credits.amountMicro, expiresAt: now + credits.ttlMs });
      money.heldMicro += credits.amountMicro;
    }
    if (keyMoney && credits) {
      keyMoney.holds.set(credits.holdId, { amountMicro: credits.amountMicro, expiresAt: now + credits.ttlMs });
      keyMoney.heldMicro += credits.amountMicro;
    }
    return { allowed: true };
  }

  finish(departure: Departure): void {
    const slots = this.inFlight.get(departure.concurrencyKey);
    slots?.delete(departure.slotId);
    if (slots?.size === 0) this.inFlight.delete(departure.concurrencyKey);
    const credits = departure.credits;
    if (!credits) return;
    for (const money of [this.accounts.get(credits.accountId), credits.keyId ? this.keys.get(credits.keyId) : undefined]) {
      if (!money) continue;
      const hold = money.holds.get(credits.holdId);
      if (hold) {
        money.holds.delete(credits.holdId);
        money.heldMicro -= hold.amountMicro;
      }
      money.settledMicro += credits.spentMicro;
    }
  }

  renew({ concurrencyKey, slotId, credits, ttlMs }: Renewal, now: number): void {
    const slots = this.inFlight.get(concurrencyKey);
    if (slots?.has(slotId)) slots.set(slotId, now + ttlMs);
    const hold = credits && this.accounts.get(credits.accountId)?.holds.get(credits.holdId);
    if (hold) hold.expiresAt = now + ttlMs;
    const keyHold = credits?.keyId ? this.keys.get(credits.keyId)?.holds.get(credits.holdId) : undefined;
    if (keyHold) keyHold.expiresAt = now + ttlMs;
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

  private keyMoney(budget: KeyBudgetHold, now: number): KeyMoney {
    let money = this.keys.get(budget.keyId);
    if (!money) {
      money = { ...budget.snapshot, settledMicro: budget.snapshot.appliedMicro, heldMicro: 0n, holds: new Map() };
      this.keys.set(budget.keyId, money);
    } else if (budget.snapshot.version > money.version) {
      Object.assign(money, budget.snapshot);
    }
    if (money.settledMicro < money.appliedMicro) money.settledMicro = money.appliedMicro;
    this.dropLapsedHolds(money, now);
    return money;
  }

  private dropLapsedHolds(money: Holds, now: number): void {
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

/** What is left of a key's budget: billing's spend in the current period (none if its period is over), the unapplied and the held. */
const keyLeft = (money: KeyMoney, budget: KeyBudgetHold) =>
  budget.limitMicro - (money.periodStart >= budget.periodStart ? money.spentMicro : 0n) - (money.settledMicro - money.appliedMicro) - money.heldMicro;

const spendable = (money: Pick<AccountMoney, 'balanceMicro' | 'settledMicro' | 'usageSpentMicro' | 'heldMicro'>) =>
  money.balanceMicro - (money.settledMicro - money.usageSpentMicro) - money.heldMicro;
