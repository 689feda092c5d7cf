import { balanceCrossingKey, balanceFellBelow, keyBudgetCrossings, type KeySpendMove } from './alert-crossings';

describe('balanceFellBelow', () => {
  it.each([
    [100n, 150n, 99n, true],
    [100n, 100n, 99n, true],
    [100n, 150n, 100n, false],
    [100n, 99n, 50n, false],
    [100n, 50n, 150n, false],
    [100n, 150n, -5n, true],
    [0n, 1n, -1n, true],
    [0n, 0n, 0n, false],
    [null, 150n, 0n, false],
  ])('threshold %p, balance %p -> %p: %p', (threshold, before, after, expected) => {
    expect(balanceFellBelow(threshold, before, after)).toBe(expected);
  });

  it('fires once over a run of charges, and again only after a top-up back to the threshold', () => {
    const threshold = 1_000n;
    let balance = 1_300n;
    const fired: number[] = [];
    const move = (amount: bigint, step: number) => {
      if (balanceFellBelow(threshold, balance, balance + amount)) fired.push(step);
      balance += amount;
    };
    [-100n, -100n, -100n, -100n, -100n].forEach((amount, step) => move(amount, step)); // 1300 -> 800, crossed at step 3
    move(150n, 5); // 950: still below, not re-armed
    move(-10n, 6);
    move(60n, 7); // 1000: re-armed
    move(-1n, 8); // 999: crossed again
    expect(fired).toEqual([3, 8]);
  });

  it('keys a crossing by account and balance version, case-insensitively', () => {
    expect(balanceCrossingKey('ABC-1', 7)).toBe('balance:abc-1:7');
  });
});

describe('keyBudgetCrossings', () => {
  const periodStart = new Date('2026-11-01T00:00:00Z');
  const move = (limit: bigint, before: bigint, after: bigint): KeySpendMove => ({ keyId: 'K1', limitMicro: limit, spentBeforeMicro: before, spentAfterMicro: after, periodStart });
  const percents = (limit: bigint, before: bigint, after: bigint) => keyBudgetCrossings(move(limit, before, after)).map((crossing) => crossing.percent);

  it('crosses 80 % when the spend reaches exactly 80 % of the limit, not a micro-credit before', () => {
    expect(percents(1_000n, 0n, 799n)).toEqual([]);
    expect(percents(1_000n, 0n, 800n)).toEqual([80]);
    expect(percents(1_000n, 799n, 800n)).toEqual([80]);
    expect(percents(1_000n, 800n, 900n)).toEqual([]);
  });

  it('compares exactly where 80 % is not a whole number of micro-credits', () => {
    // 80 % of 7 is 5.6: 5 has not reached it, 6 has.
    expect(percents(7n, 0n, 5n)).toEqual([]);
    expect(percents(7n, 5n, 6n)).toEqual([80]);
  });

  it('crosses 100 % when the spend reaches the limit, and both at once in one jump', () => {
    expect(percents(1_000n, 900n, 1_000n)).toEqual([100]);
    expect(percents(1_000n, 900n, 999n)).toEqual([]);
    expect(percents(1_000n, 0n, 5_000n)).toEqual([80, 100]);
    expect(percents(1_000n, 1_000n, 2_000n)).toEqual([]);
  });

  it('sends nothing for a spend that falls, stays, or a limit of 0', () => {
    expect(percents(1_000n, 900n, 100n)).toEqual([]);
    expect(percents(1_000n, 850n, 850n)).toEqual([]);
    expect(percents(0n, 0n, 10n)).toEqual([]);
    expect(percents(-5n, 0n, 10n)).toEqual([]);
  });

  it('works on amounts far past a double (bigint all the way)', () => {
    const limit = 9_000_000_000_000_000_000n;
    expect(percents(limit, (limit * 8n) / 10n - 1n, (limit * 8n) / 10n)).toEqual([80]);
  });

  it('names each crossing by key, period start and percent, so a period has one event per threshold', () => {
    expect(keyBudgetCrossings(move(1_000n, 0n, 1_000n))).toEqual([
      { percent: 80, type: 'key.budget_threshold', dedupeKey: 'key:k1:2026-11-01T00:00:00.000Z:80' },
      { percent: 100, type: 'key.budget_exhausted', dedupeKey: 'key:k1:2026-11-01T00:00:00.000Z:100' },
    ]);
    const nextPeriod = keyBudgetCrossings({ ...move(1_000n, 0n, 800n), periodStart: new Date('2026-12-01T00:00:00Z') });
    expect(nextPeriod.map((crossing) => crossing.dedupeKey)).toEqual(['key:k1:2026-12-01T00:00:00.000Z:80']);
  });
});
