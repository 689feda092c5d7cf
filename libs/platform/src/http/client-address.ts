import { BlockList, isIP } from 'node:net';
import type { IncomingHttpHeaders } from 'node:http';

/** What the client's address is read from. */
export interface ClientConnection {
  socket?: { remoteAddress?: string } | null;
  headers: IncomingHttpHeaders;
}

/**
 * The function that tells a request's client address. With no trusted proxies it is the
 * connection's address. Behind reverse proxies listed in `trustedProxies` (comma-separated
 * addresses and CIDR ranges, e.g. `10.0.0.0/8, 127.0.0.1`), `X-Forwarded-For` is read from
 * the right, skipping trusted hops: the first address not trusted is the client (any client
 * can write the header's left part, so only what trusted proxies appended counts).
 */
export function clientAddressResolver(trustedProxies: string | undefined): (request: ClientConnection) => string | undefined {
  const trusted = trustedRanges(trustedProxies);
  if (!trusted) return (request) => request.socket?.remoteAddress;
  const isTrusted = (address: string) => trusted.check(address, isIP(address) === 6 ? 'ipv6' : 'ipv4');
  return (request) => {
    let client = unmapped(request.socket?.remoteAddress);
    if (!client || !isTrusted(client)) return client;
    const header = request.headers['x-forwarded-for'];
    const hops = (Array.isArray(header) ? header.join(',') : (header ?? '')).split(',');
    for (let index = hops.length - 1; index >= 0; index--) {
      const hop = unmapped(hops[index].trim());
      // A hop that is no address ends what can be believed: the last trusted proxy is the client.
      if (!hop || isIP(hop) === 0) return client;
      client = hop;
      if (!isTrusted(hop)) return hop;
    }
    return client;
  };
}

/** The ranges of TRUSTED_PROXIES, or undefined when none is set; throws naming an entry that is not an address or range. */
export function trustedRanges(trustedProxies: string | undefined): BlockList | undefined {
  const entries = (trustedProxies ?? '').split(',').map((entry) => entry.trim()).filter((entry) => entry !== '');
  if (entries.length === 0) return undefined;
  const list = new BlockList();
  for (const entry of entries) {
    const [address, prefix, ...rest] = entry.split('/');
    const family = isIP(address);
    const bits = prefix === undefined ? (family === 6 ? 128 : 32) : Number(prefix);
    if (family === 0 || rest.length > 0 || !/^\d{1,3}$/.test(String(bits)) || bits > (family === 6 ? 128 : 32)) {
      throw new Error(`TRUSTED_PROXIES: '${entry}' is not an IP address or a CIDR range (e.g. 10.0.0.0/8 or fd00::/8)`);
    }
    list.addSubnet(address, bits, family === 6 ? 'ipv6' : 'ipv4');
  }
  return list;
}

/** `::ffff:10.1.2.3` (an IPv4 client on a dual-stack socket) as `10.1.2.3`. */
function unmapped(address: string | undefined): string | undefined {
  return address?.toLowerCase().startsWith('::ffff:') && isIP(address.slice(7)) === 4 ? address.slice(7) : address;
}
