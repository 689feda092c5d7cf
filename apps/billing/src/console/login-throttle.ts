/** Wrong tokens one address may send in a window before login answers 429 until the window ends. */
const MAX_FAILURES = 10;
const WINDOW_MS = 15 * 60 * 1000;
/** Addresses remembered at most: a flood of addresses cannot grow the map without bound. */
const MAX_ADDRESSES = 10_000;

/** Slows guessing the admin token through the login form (the header is as guessable; this form is the one a browser offers). */
export class LoginThrottle {
  private readonly failures = new Map<string, { count: number; since: number }>();

  blockedForSeconds(address: string, now = Date.now()): number {
    const entry = this.failures.get(address);
    if (!entry) return 0;
    if (now - entry.since >= WINDOW_MS) {
      this.failures.delete(address);
      return 0;
    }
    return entry.count >= MAX_FAILURES ? Math.ceil((entry.since + WINDOW_MS - now) / 1000) : 0;
  }

  failed(address: string, now = Date.now()): void {
    const entry = this.failures.get(address);
    if (entry && now - entry.since < WINDOW_MS) {
      entry.count += 1;
      return;
    }
    if (this.failures.size >= MAX_ADDRESSES) {
      const oldest = this.failures.keys().next().value;
      if (oldest !== undefined) this.failures.delete(oldest);
    }
    this.failures.set(address, { count: 1, since: now });
  }

  succeeded(address: string): void {
    this.failures.delete(address);
  }
}
