import { balanceCrossingKey, balanceFellBelow, keyBudgetCrossingKey } from './alert-crossings';

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

describe('keyBudgetCrossingKey', () => {
  const may = new Date('2026-05-01T00:00:00Z');

  it('names a crossing by key, period start, budget and percent, case-insensitively', () => {
    expect(keyBudgetCrossingKey('K1', may, { limit: '25.00', unit: 'usd' }, 80)).toBe('key:k1:2026-05-01T00:00:00.000Z:25usd:80');
    expect(keyBudgetCrossingKey('k1', may, { limit: '25', unit: 'usd' }, 100)).toBe('key:k1:2026-05-01T00:00:00.000Z:25usd:100');
  });

  it('is the same for the same limit however it is written, and differs for a new period, limit or unit', () => {
    const key = keyBudgetCrossingKey('k1', may, { limit: '100', unit: 'credits' }, 80);
    expect(keyBudgetCrossingKey('k1', may, { limit: '100.000000', unit: 'credits' }, 80)).toBe(key);
    expect(keyBudgetCrossingKey('k1', new Date('2026-06-01T00:00:00Z'), { limit: '100', unit: 'credits' }, 80)).not.toBe(key);
    expect(keyBudgetCrossingKey('k1', may, { limit: '1000', unit: 'credits' }, 80)).not.toBe(key);
    expect(keyBudgetCrossingKey('k1', may, { limit: '100', unit: 'usd' }, 80)).not.toBe(key);
  });
});
