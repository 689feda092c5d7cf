import { clientAddressResolver, trustedRanges } from './client-address';

const request = (remoteAddress: string, forwardedFor?: string | string[]) => ({ socket: { remoteAddress }, headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor } });

describe('the client address behind trusted proxies', () => {
  it('is the connection address when no proxy is trusted, whatever X-Forwarded-For says', () => {
    const clientOf = clientAddressResolver('');
    expect(clientOf(request('10.0.0.5', '203.0.113.9'))).toBe('10.0.0.5');
    expect(clientAddressResolver(undefined)(request('::1', '203.0.113.9'))).toBe('::1');
  });

  it('counts an IPv4 address reached over IPv6 as itself, and one IPv6 address as one spelling', () => {
    expect(clientAddressResolver(undefined)(request('::ffff:127.0.0.2'))).toBe('127.0.0.2');
    expect(clientAddressResolver(undefined)({ socket: null, headers: {} })).toBeUndefined();
    expect(clientAddressResolver('10.0.0.0/8')(request('10.1.1.1', '2001:DB8:0::42'))).toBe('2001:db8::42');
    expect(clientAddressResolver('10.0.0.0/8')(request('10.1.1.1', '::ffff:203.0.113.9'))).toBe('203.0.113.9');
  });

  it('reads X-Forwarded-For from the right, skipping trusted hops only', () => {
    const clientOf = clientAddressResolver('10.0.0.0/8, 127.0.0.1');
    // The ingress (10.1.1.1) appended the client; whatever the client wrote on the left is ignored.
    expect(clientOf(request('10.1.1.1', '1.1.1.1, 203.0.113.9'))).toBe('203.0.113.9');
    // Two trusted hops (a load balancer, then the ingress).
    expect(clientOf(request('10.1.1.1', ['198.51.100.7', '10.2.2.2']))).toBe('198.51.100.7');
    // A connection from an untrusted address: its header is not believed.
    expect(clientOf(request('192.0.2.1', '203.0.113.9'))).toBe('192.0.2.1');
    // An IPv4 client on a dual-stack socket.
    expect(clientOf(request('::ffff:127.0.0.1', '203.0.113.9'))).toBe('203.0.113.9');
  });

  it('stops at the last trusted hop when the header is missing, empty or not an address', () => {
    const clientOf = clientAddressResolver('10.0.0.0/8');
    expect(clientOf(request('10.1.1.1'))).toBe('10.1.1.1');
    expect(clientOf(request('10.1.1.1', ''))).toBe('10.1.1.1');
    expect(clientOf(request('10.1.1.1', 'unknown, 10.3.3.3'))).toBe('10.3.3.3');
    // Only node:net's forms are addresses: `0x7f.1` is not read as 127.0.0.1 to be trusted.
    expect(clientAddressResolver('127.0.0.0/8')(request('127.0.0.1', '203.0.113.9, 0x7f.1'))).toBe('127.0.0.1');
    // Every hop trusted: the leftmost trusted one is as far as can be told.
    expect(clientOf(request('10.1.1.1', '10.9.9.9'))).toBe('10.9.9.9');
  });

  it('handles IPv6 ranges', () => {
    const clientOf = clientAddressResolver('fd00::/8');
    expect(clientOf(request('fd12::1', '2001:db8::42'))).toBe('2001:db8::42');
  });

  it('refuses an entry that is not an address or a range, naming it', () => {
    expect(() => trustedRanges('10.0.0.0/8, proxy.internal')).toThrow(/TRUSTED_PROXIES: 'proxy.internal' is not an IP address/);
    expect(() => trustedRanges('10.0.0.0/33')).toThrow(/'10.0.0.0\/33'/);
    expect(() => trustedRanges('10.0.0.0/8/1')).toThrow(/'10.0.0.0\/8\/1'/);
    expect(() => trustedRanges('fd00::/129')).toThrow(/'fd00::\/129'/);
    expect(() => trustedRanges('loopback')).toThrow(/'loopback'/);
    expect(() => trustedRanges('10.0.0.0/255.0.0.0')).toThrow(/'10.0.0.0\/255.0.0.0'/);
  });
});
