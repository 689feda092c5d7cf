import { GatewayException } from '../errors/gateway.exception';
import { AdminTokenThrottle } from './admin-token-throttle';

describe('AdminTokenThrottle', () => {
  it('blocks an address after ten wrong tokens until its window ends, and forgets it on success', () => {
    const throttle = new AdminTokenThrottle();
    const start = 1_000_000;
    for (let attempt = 0; attempt < 10; attempt += 1) {
      expect(throttle.blockedForSeconds('10.0.0.1', start)).toBe(0);
      throttle.failed('10.0.0.1', start);
    }
    expect(throttle.blockedForSeconds('10.0.0.1', start + 1000)).toBe(899);
    expect(throttle.blockedForSeconds('10.0.0.2', start + 1000)).toBe(0);
    expect(throttle.blockedForSeconds('10.0.0.1', start + 15 * 60 * 1000)).toBe(0);
    throttle.failed('10.0.0.3', start);
    throttle.succeeded('10.0.0.3');
    expect(throttle.blockedForSeconds('10.0.0.3', start)).toBe(0);
  });

  it('remembers a bounded number of addresses', () => {
    const throttle = new AdminTokenThrottle();
    for (let index = 0; index < 10_050; index += 1) throttle.failed(`addr-${index}`, 0);
    expect((throttle as unknown as { failures: Map<string, unknown> }).failures.size).toBe(10_000);
  });

  it("counts a request's client as TRUSTED_PROXIES reads it, and never a forwarded address from an untrusted peer", () => {
    const behindProxy = new AdminTokenThrottle('127.0.0.1');
    expect(behindProxy.clientOf({ socket: { remoteAddress: '127.0.0.1' }, headers: { 'x-forwarded-for': '203.0.113.7' } })).toBe('203.0.113.7');
    expect(behindProxy.clientOf({ socket: { remoteAddress: '198.51.100.2' }, headers: { 'x-forwarded-for': '203.0.113.7' } })).toBe('198.51.100.2');
    expect(new AdminTokenThrottle(undefined).clientOf({ socket: { remoteAddress: '::ffff:10.1.2.3' }, headers: { 'x-forwarded-for': '203.0.113.7' } })).toBe('10.1.2.3');
  });

  it('refuses a blocked address with 429 and retry-after', () => {
    const throttle = new AdminTokenThrottle();
    for (let attempt = 0; attempt < 10; attempt += 1) throttle.failed('10.0.0.1', 0);
    expect(() => throttle.refuseIfBlocked('10.0.0.2', 1000)).not.toThrow();
    try {
      throttle.refuseIfBlocked('10.0.0.1', 1000);
      throw new Error('not refused');
    } catch (error) {
      expect(error).toBeInstanceOf(GatewayException);
      expect((error as GatewayException).getStatus()).toBe(429);
      expect((error as GatewayException).headers).toEqual({ 'retry-after': '899' });
    }
  });
});
