import { HttpStatus } from '@nestjs/common';
import { GatewayException } from '../errors/gateway.exception';
import { clientAddressResolver, type ClientConnection } from '@igw/config';

/** Wrong tokens one address may send in a window before the admin token is refused with 429 until the window ends. */
const MAX_FAILURES = 10;
const WINDOW_MS = 15 * 60 * 1000;
/** Addresses remembered at most: a flood of addresses cannot grow the map without bound. */
const MAX_ADDRESSES = 10_000;

/**
 * Slows guessing the admin token, wherever it is presented: the admin API's
 * `Authorization: Bearer` header (AdminTokenGuard) and the console's sign-in form share one
 * count per client address (behind TRUSTED_PROXIES, the one `X-Forwarded-For` names), so
 * neither door gives a guesser more tries than the other.
 */
export class AdminTokenThrottle {
  private readonly failures = new Map<string, { count: number; since: number }>();
  private readonly clientAddressOf: (connection: ClientConnection) => string | undefined;

  constructor(trustedProxies?: string) {
    this.clientAddressOf = clientAddressResolver(trustedProxies);
  }

  /** The address whose count a request's token spends. */
  clientOf(connection: ClientConnection): string {
    return this.clientAddressOf(connection) ?? 'unknown';
  }

  /**
   * A 429 with `retry-after` while the address is blocked: checked before the token is
   * compared, so a blocked guesser learns nothing, not even from the right token.
   */
  refuseIfBlocked(address: string, now = Date.now()): void {
    const wait = this.blockedForSeconds(address, now);
    if (wait > 0) {
      throw new GatewayException(HttpStatus.TOO_MANY_REQUESTS, `Too Many Requests: too many wrong admin tokens from this address. Retry in ${wait} s.`, {
        headers: { 'retry-after': String(wait) },
      });
    }
  }

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
