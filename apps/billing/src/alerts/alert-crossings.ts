/**
 * When an alert is due, as pure functions of the amounts before and after one change: a
 * crossing is a move from one side of a line to the other, so each is seen exactly once by the
 * change that made it (changes of one account or key are serialised by its row lock).
 */

/** The balance fell from at least `thresholdMicro` to under it. A top-up back to it or above re-arms the alert. */
export function balanceFellBelow(thresholdMicro: bigint | null, beforeMicro: bigint, afterMicro: bigint): boolean {
  return thresholdMicro !== null && beforeMicro >= thresholdMicro && afterMicro < thresholdMicro;
}

/** The shares of a key's budget that raise an alert, in percent. */
export const KEY_BUDGET_THRESHOLDS = [80, 100] as const;
export type KeyBudgetThreshold = (typeof KEY_BUDGET_THRESHOLDS)[number];

export interface KeyBudgetCrossing {
  percent: KeyBudgetThreshold;
  type: 'key.budget_threshold' | 'key.budget_exhausted';
  /** One event per key, period and threshold, however often the spend moves across it. */
  dedupeKey: string;
}

export interface KeySpendMove {
  keyId: string;
  /** The budget, in micro-credits; 0 or less sends nothing (there is nothing to spend). */
  limitMicro: bigint;
  spentBeforeMicro: bigint;
  spentAfterMicro: bigint;
  /** When the budget's period began (UTC); a lifetime budget passes its key's creation or the epoch. */
  periodStart: Date;
}

/**
 * The thresholds a change of a key's spend crossed upwards, lowest first: spend reaching
 * exactly 80 % counts (the share is compared exactly, in integers). Spend that falls back
 * (a refund) crosses nothing; the dedupe key keeps a second rise in the same period silent.
 */
export function keyBudgetCrossings(move: KeySpendMove): KeyBudgetCrossing[] {
  if (move.limitMicro <= 0n || move.spentAfterMicro <= move.spentBeforeMicro) return [];
  const reached = (spent: bigint, percent: number) => spent * 100n >= move.limitMicro * BigInt(percent);
  return KEY_BUDGET_THRESHOLDS.filter((percent) => !reached(move.spentBeforeMicro, percent) && reached(move.spentAfterMicro, percent)).map((percent) => ({
    percent,
    type: percent === 100 ? 'key.budget_exhausted' : 'key.budget_threshold',
    dedupeKey: `key:${move.keyId.toLowerCase()}:${move.periodStart.toISOString()}:${percent}`,
  }));
}

/** The dedupe key of a balance crossing: the balance version is unique per change of the account. */
export const balanceCrossingKey = (accountId: string, balanceVersion: number): string => `balance:${accountId.toLowerCase()}:${balanceVersion}`;
