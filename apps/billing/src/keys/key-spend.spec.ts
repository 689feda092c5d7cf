import { crossedBudgetPercent, type KeySpendChange, type KeySpendState } from './key-spend';

const day = (iso: string) => new Date(iso);
const state = (periodStart: string, spentMicro: bigint, spentUsd = '0'): KeySpendState => ({ periodStart: day(periodStart), spentMicro, spentUsd });
const change = (before: KeySpendState, after: KeySpendState, budget: KeySpendChange['budget'] = { limit: '10', unit: 'credits', period: 'day' }): KeySpendChange => ({
  keyId: 'k',
  accountId: 'a',
  budget,
  before,
  after,
  appliedMicro: after.spentMicro,
  version: 2,
});

describe('crossedBudgetPercent (the hook for budget alerts)', () => {
  it('says when a change takes the spend across a share of the limit, exactly, once', () => {
    expect(crossedBudgetPercent(change(state('2026-01-01', 7_999_999n), state('2026-01-01', 8_000_000n)), 80)).toBe(true);
    expect(crossedBudgetPercent(change(state('2026-01-01', 8_000_000n), state('2026-01-01', 9_000_000n)), 80)).toBe(false);
    expect(crossedBudgetPercent(change(state('2026-01-01', 7_000_000n), state('2026-01-01', 7_999_999n)), 80)).toBe(false);
    expect(crossedBudgetPercent(change(state('2026-01-01', 9_000_000n), state('2026-01-01', 10_000_000n)), 100)).toBe(true);
  });

  it('starts a new period below every share', () => {
    expect(crossedBudgetPercent(change(state('2026-01-01', 9_000_000n), state('2026-01-02', 8_500_000n)), 80)).toBe(true);
  });

  it('compares USD budgets in USD, and says nothing without a budget', () => {
    const usd = { limit: '0.5', unit: 'usd' as const, period: 'month' as const };
    expect(crossedBudgetPercent(change(state('2026-01-01', 0n, '0.39'), state('2026-01-01', 0n, '0.4'), usd), 80)).toBe(true);
    expect(crossedBudgetPercent(change(state('2026-01-01', 0n, '0.4'), state('2026-01-01', 0n, '0.49'), usd), 100)).toBe(false);
    expect(crossedBudgetPercent(change(state('2026-01-01', 0n), state('2026-01-01', 10n), null), 80)).toBe(false);
  });
});
