import { isIP } from 'node:net';
import type { IncomingHttpHeaders, IncomingMessage } from 'node:http';
import ipaddr from 'ipaddr.js';
import proxyaddr from 'proxy-addr';

/** What the client's address is read from. */
export interface ClientConnection {
  socket?: { remoteAddress?: string } | null;
  headers: IncomingHttpHeaders;
}

/**
 * The function that tells a request's client address, in one spelling (an IPv4 client on a
 * dual-stack socket, `::ffff:10.1.2.3`, as itself). With no trusted proxies it is the connection's address. Behind
 * reverse proxies listed in `trustedProxies` (comma-separated addresses and CIDR ranges, e.g.
 * `10.0.0.0/8, 127.0.0.1`), `X-Forwarded-For` is read from the right, skipping trusted hops:
 * the first address not trusted is the client (any client can write the header's left part,
 * so only what trusted proxies appended counts). proxy-addr does the reading, as for Express.
 */
export function clientAddressResolver(trustedProxies: string | undefined): (request: ClientConnection) => string | undefined {
  const isTrustedProxy = trustedRanges(trustedProxies);
  if (!isTrustedProxy) return (request) => canonical(request.socket?.remoteAddress);
  // Hops in node:net's forms only: ipaddr.js (under proxy-addr) would also read `0x7f.1` as an address.
  const trust = (address: string) => isIP(address) !== 0 && isTrustedProxy(address);
  return (request) => {
    if (!request.socket?.remoteAddress) return undefined;
    // The connection's address, then X-Forwarded-For's from the right, up to the first one not trusted.
    const hops = proxyaddr.all(withOneForwardedFor(request) as IncomingMessage, trust);
    const last = hops[hops.length - 1];
    // A hop that is no address ends what can be believed: the last trusted proxy is the client.
    return canonical(hops.length > 1 && isIP(last) === 0 ? hops[hops.length - 2] : last);
  };
}

/**
 * Whether an address is one of TRUSTED_PROXIES, or undefined when none is set; throws naming an
 * entry that is not an IP address (node:net's forms) or a CIDR range with a prefix length
 * (proxy-addr's netmasks and names such as `loopback` are not part of the setting).
 */
export function trustedRanges(trustedProxies: string | undefined): ((address: string) => boolean) | undefined {
  const entries = (trustedProxies ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (entries.length === 0) return undefined;
  for (const entry of entries) {
    const [address, prefix, ...rest] = entry.split('/');
    let valid = isIP(address) !== 0 && rest.length === 0 && (prefix === undefined || /^\d{1,3}$/.test(prefix));
    try {
      if (valid) proxyaddr.compile(entry);
    } catch {
      valid = false;
    }
    if (!valid) throw new Error(`TRUSTED_PROXIES: '${entry}' is not an IP address or a CIDR range (e.g. 10.0.0.0/8 or fd00::/8)`);
  }
  const trusted = proxyaddr.compile(entries);
  return (address) => trusted(address, 0);
}

/** forwarded (under proxy-addr) reads the header as one line, which is how Node gives it; a caller's list is joined. */
function withOneForwardedFor(request: ClientConnection): ClientConnection {
  const header = request.headers['x-forwarded-for'];
  return Array.isArray(header) ? { socket: request.socket, headers: { 'x-forwarded-for': header.join(',') } } : request;
}

/** One spelling per address, so one client has one budget: IPv6 compressed and lower case, IPv4-mapped as IPv4. */
function canonical(address: string | undefined): string | undefined {
  return address && isIP(address) !== 0 ? ipaddr.process(address).toString() : address;
}
