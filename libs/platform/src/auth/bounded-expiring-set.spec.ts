import { BoundedExpiringSet } from './bounded-expiring-set';

describe('BoundedExpiringSet', () => {
  it('forgets a value once its lifetime is over', () => {
    const set = new BoundedExpiringSet(10, 1_000);
    set.add('a', 0);
    expect(set.has('a', 999)).toBe(true);
    expect(set.has('a', 1_000)).toBe(false);
    expect(set.size).toBe(0);
  });

  it('keeps at most its size, dropping the oldest first', () => {
    const set = new BoundedExpiringSet(3, 60_000);
    for (let i = 0; i < 1_000; i++) set.add(`k${i}`, i);
    expect(set.size).toBe(3);
    expect(['k996', 'k997', 'k998', 'k999'].map((k) => set.has(k, 1_000))).toEqual([false, true, true, true]);
  });

  it('adding a value again renews it and makes it the newest', () => {
    const set = new BoundedExpiringSet(2, 1_000);
    set.add('a', 0);
    set.add('b', 10);
    set.add('a', 500);
    set.add('c', 600);
    expect([set.has('a', 1_200), set.has('b', 700), set.has('c', 700)]).toEqual([true, false, true]);
  });

  it('drops expired values as new ones come, not only when asked', () => {
    const set = new BoundedExpiringSet(100, 1_000);
    for (let i = 0; i < 50; i++) set.add(`k${i}`, 0);
    set.add('late', 5_000);
    expect(set.size).toBe(1);
  });
});
