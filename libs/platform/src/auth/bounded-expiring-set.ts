/**
 * Remembers values for a while, and at most `maxEntries` of them: the oldest goes first. The
 * gateway's memory of unknown keys, which a client sending made-up keys must not grow without end.
 */
export class BoundedExpiringSet {
  /** Insertion order is expiry order (one lifetime for all), so the first entries are the oldest. */
  private readonly expiries = new Map<string, number>();

  constructor(
    private readonly maxEntries: number,
    private readonly lifetimeMs: number,
  ) {}

  add(value: string, now: number): void {
    // Re-adding moves the value to the end, keeping the map in expiry order.
    this.expiries.delete(value);
    this.expiries.set(value, now + this.lifetimeMs);
    this.dropExpired(now);
    while (this.expiries.size > this.maxEntries) this.expiries.delete(this.expiries.keys().next().value!);
  }

  has(value: string, now: number): boolean {
    const expiresAt = this.expiries.get(value);
    if (expiresAt === undefined) return false;
    if (expiresAt > now) return true;
    this.expiries.delete(value);
    return false;
  }

  delete(value: string): void {
    this.expiries.delete(value);
  }

  clear(): void {
    this.expiries.clear();
  }

  get size(): number {
    return this.expiries.size;
  }

  private dropExpired(now: number): void {
    for (const [value, expiresAt] of this.expiries) {
      if (expiresAt > now) return;
      this.expiries.delete(value);
    }
  }
}
