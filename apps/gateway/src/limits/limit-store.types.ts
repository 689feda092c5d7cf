import type { BalanceSnapshot, KeySpendSnapshot } from '@igw/contracts';

/**
 * A key's budget, held against as the account's credits are: the same hold (same id, same
 * amount) counts against both, in the same step. What is left is
 * `limit - spent in the current period - (settled - applied) - held`, with the key's own
 * `settled` (what the gateways metered for it) against billing's `applied`, as for the account.
 */
export interface KeyBudgetHold {
  keyId: string;
  limitMicro: bigint;
  /** The start (epoch ms) of the budget period `now` falls in: a snapshot of an earlier period has spent nothing of it. */
  periodStart: number;
  /** The newest spend this replica knows; the store keeps the newest any replica told it. */
  snapshot: KeySpendSnapshot;
}

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
  /** The key's budget, when it has one: the hold must fit in what is left of it too. */
  keyBudget?: KeyBudgetHold;
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
  /**
   * More money held for a request admitted already (its minute counted, its slot taken): only
   * `credits` is checked and taken. A request whose full cost is known only after work that must
   * not run before admission is let in on a first hold, then holds the rest this way.
   */
  holdOnly?: boolean;
}

/** A request that is over: its slot and hold are given back and what it cost is counted as spent. */
export interface Departure {
  concurrencyKey: string;
  slotId: string;
  credits?: { accountId: string; holdId: string; amountMicro: bigint; spentMicro: bigint; keyId?: string };
}

/**
 * A request still running: its slot and hold live `ttlMs` more from now, if they are still
 * there (never brought back once given back or lapsed).
 */
export interface Renewal {
  concurrencyKey: string;
  slotId: string;
  credits?: { accountId: string; holdId: string; amountMicro: bigint; keyId?: string };
  ttlMs: number;
}

export type RefusalReason = 'per-minute' | 'concurrency' | 'free-hourly' | 'credits' | 'key-budget';

export type AdmissionResult = { allowed: true } | { allowed: false; reason: RefusalReason; retryAfterSeconds: number };

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
  /** False while the store's server is known to be unreachable (admission then counts in the process). */
  readonly reachable: boolean;
  admit(admission: Admission, now: number): Promise<AdmissionResult>;
  /**
   * Gives back what `admit` took. A shared store hands the departure to its server before
   * returning, without waiting for a later turn of the event loop: called before the response
   * is written, whatever the client asks next, of any replica, is decided after it.
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

/** The fixed window `now` falls in, numbered from the epoch. */
export const windowOf = (now: number, windowMs: number) => Math.floor(now / windowMs);
/** Whole seconds until the window `now` falls in ends, at least one. */
export const secondsLeft = (now: number, windowMs: number) => Math.max(1, Math.ceil(((windowOf(now, windowMs) + 1) * windowMs - now) / 1000));
