import { formatScaled, parseDecimal, toScaledUnits, USD_SCALE } from '@igw/domain';

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

/**
 * The dedupe key of a key's budget crossing (whether one happened is `crossedBudgetPercent`'s,
 * in keys/key-spend.ts): one event per key, period, budget and threshold, so a spend that moves
 * back and forth across a line in one period sends it once, while a new period or a changed
 * budget (its limit or unit) arms every threshold again.
 */
export function keyBudgetCrossingKey(keyId: string, periodStart: Date, budget: { limit: string; unit: string }, percent: KeyBudgetThreshold): string {
  const limit = formatScaled(toScaledUnits(parseDecimal(budget.limit), USD_SCALE), USD_SCALE);
  return `key:${keyId.toLowerCase()}:${periodStart.toISOString()}:${limit}${budget.unit}:${percent}`;
}

/** The dedupe key of a balance crossing: the balance version is unique per change of the account. */
export const balanceCrossingKey = (accountId: string, balanceVersion: number): string => `balance:${accountId.toLowerCase()}:${balanceVersion}`;
