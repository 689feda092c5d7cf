import { crossedBudgetPercent, type KeySpendChange, type KeySpendState } from './key-spend';

const day = (iso: string) => new Date(iso);
const state = (periodStart: string, spentMicro: bigint, spentUsd = '0'): KeySpendState => ({ periodStart: day(periodStart), spentMicro, spentUsd });
const change = (before: KeySpendState, after: KeySpendState, budget: KeySpendChange['budget'] = { limit: '10', unit: 'credits', period: 'day' }): KeySpendChange => ({
  keyId: 'k',
  accountId: 'a',
  keyName: null,
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

  // Cases carried over from the alerts' former detector of its own.
  const credits = (limit: string) => ({ limit, unit: 'credits' as const, period: 'month' as const });
  const crossed = (limit: string, before: bigint, after: bigint) =>
    [80, 100].filter((percent) => crossedBudgetPercent(change(state('2026-05-01', before), state('2026-05-01', after), credits(limit)), percent));

  it('compares exactly where a share is not a whole number of micro-credits', () => {
    // 80 % of 7 micro-credits is 5.6: 5 has not reached it, 6 has.
    expect(crossed('0.000007', 0n, 5n)).toEqual([]);
    expect(crossed('0.000007', 5n, 6n)).toEqual([80]);
    expect(crossed('0.000007', 6n, 7n)).toEqual([100]);
  });

  it('crosses both shares in one jump, and neither once past them', () => {
    expect(crossed('0.001', 0n, 5_000n)).toEqual([80, 100]);
    expect(crossed('0.001', 900n, 999n)).toEqual([]);
    expect(crossed('0.001', 1_000n, 2_000n)).toEqual([]);
  });

  it('crosses nothing when the spend falls or stays', () => {
    expect(crossed('0.001', 900n, 100n)).toEqual([]);
    expect(crossed('0.001', 850n, 850n)).toEqual([]);
    expect(crossed('0.001', 0n, 0n)).toEqual([]);
  });

  it('calls any spend of a zero budget exhausted, and nothing spent nothing', () => {
    expect(crossed('0', 0n, 0n)).toEqual([]);
    expect(crossed('0', 0n, 1n)).toEqual([80, 100]);
  });

  it('works on amounts far past a double (bigint all the way)', () => {
    const limitMicro = 9_000_000_000_000_000_000n;
    expect(crossed('9000000000000', (limitMicro * 8n) / 10n - 1n, (limitMicro * 8n) / 10n)).toEqual([80]);
  });

  it('compares a USD budget in USD even where the credits would say otherwise', () => {
    const usd = { limit: '0.00000000000001', unit: 'usd' as const, period: 'day' as const };
    // 0.8e-14 USD has reached 80 % of it; the credits (rounded) have not moved.
    expect(crossedBudgetPercent(change(state('2026-01-01', 0n, '0'), state('2026-01-01', 0n, '0.000000000000008'), usd), 80)).toBe(true);
    expect(crossedBudgetPercent(change(state('2026-01-01', 0n, '0'), state('2026-01-01', 0n, '0.000000000000008'), usd), 100)).toBe(false);
  });
});

