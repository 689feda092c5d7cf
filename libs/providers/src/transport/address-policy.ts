import { isIP } from 'node:net';
import ipaddr from 'ipaddr.js';

/**
 * Which addresses the gateway may fetch when a client (or an upstream) names the URL. Pure:
 * nothing here resolves a name or opens a connection, so every rule is unit-testable on
 * literal addresses. media-fetch.ts applies it to every resolved address and every redirect.
 */

/** Why an address is refused; said in the client's message, never with the resolved address itself. */
export type ForbiddenCategory =
  | 'loopback'
  | 'unspecified'
  | 'private'
  | 'shared (carrier-grade NAT)'
  | 'link-local'
  | 'cloud metadata'
  | 'unique-local'
  | 'site-local'
  | 'multicast'
  | 'broadcast'
  | 'documentation'
  | 'benchmarking'
  | 'reserved'
  | 'not an IP address';

export type AddressVerdict = { allowed: true } | { allowed: false; category: ForbiddenCategory };

const ALLOWED: AddressVerdict = { allowed: true };
const forbidden = (category: ForbiddenCategory): AddressVerdict => ({ allowed: false, category });

type ForbiddenRange<T extends ipaddr.IPv4 | ipaddr.IPv6> = { range: [T, number]; category: ForbiddenCategory };

const ipv4Range = (cidr: string, category: ForbiddenCategory): ForbiddenRange<ipaddr.IPv4> => ({ range: ipaddr.IPv4.parseCIDR(cidr), category });
const ipv6Range = (cidr: string, category: ForbiddenCategory): ForbiddenRange<ipaddr.IPv6> => ({ range: ipaddr.IPv6.parseCIDR(cidr), category });

/**
 * First match wins, so the specific metadata addresses come before the blocks holding them.
 * Our own table rather than ipaddr.js's `range()`: its names are not the categories a refusal
 * promises (it calls documentation and benchmarking blocks reserved, and knows no metadata address).
 */
const FORBIDDEN_IPV4: readonly ForbiddenRange<ipaddr.IPv4>[] = [
  ipv4Range('169.254.169.254/32', 'cloud metadata'), // AWS, GCP, Azure, Oracle, DigitalOcean...
  ipv4Range('168.63.129.16/32', 'cloud metadata'), // Azure's host platform (a public address)
  ipv4Range('100.100.100.200/32', 'cloud metadata'), // Alibaba Cloud
  ipv4Range('0.0.0.0/8', 'unspecified'),
  ipv4Range('10.0.0.0/8', 'private'),
  ipv4Range('100.64.0.0/10', 'shared (carrier-grade NAT)'),
  ipv4Range('127.0.0.0/8', 'loopback'),
  ipv4Range('169.254.0.0/16', 'link-local'),
  ipv4Range('172.16.0.0/12', 'private'),
  ipv4Range('192.0.0.0/24', 'reserved'),
  ipv4Range('192.0.2.0/24', 'documentation'),
  ipv4Range('192.88.99.0/24', 'reserved'),
  ipv4Range('192.168.0.0/16', 'private'),
  ipv4Range('198.18.0.0/15', 'benchmarking'),
  ipv4Range('198.51.100.0/24', 'documentation'),
  ipv4Range('203.0.113.0/24', 'documentation'),
  ipv4Range('224.0.0.0/4', 'multicast'),
  ipv4Range('255.255.255.255/32', 'broadcast'),
  ipv4Range('240.0.0.0/4', 'reserved'),
];

/** Checked after the forms that embed an IPv4 address; anything outside 2000::/3 is refused after these. */
const FORBIDDEN_IPV6: readonly ForbiddenRange<ipaddr.IPv6>[] = [
  ipv6Range('::/128', 'unspecified'),
  ipv6Range('::1/128', 'loopback'),
  ipv6Range('fd00:ec2::254/128', 'cloud metadata'), // AWS's IPv6 metadata endpoint
  ipv6Range('64:ff9b:1::/48', 'reserved'), // local-use NAT64
  ipv6Range('100::/64', 'reserved'), // discard-only
  ipv6Range('2001::/23', 'reserved'), // IETF protocol assignments, Teredo (which hides an IPv4 address) among them
  ipv6Range('2001:db8::/32', 'documentation'),
  ipv6Range('3fff::/20', 'documentation'),
  ipv6Range('fc00::/7', 'unique-local'),
  ipv6Range('fe80::/10', 'link-local'),
  ipv6Range('fec0::/10', 'site-local'),
  ipv6Range('ff00::/8', 'multicast'),
];

const GLOBAL_UNICAST_IPV6 = ipaddr.IPv6.parseCIDR('2000::/3');
/** NAT64: its last 32 bits are an IPv4 address reached through it, judged as that address (as IPv4-mapped ones are). */
const NAT64 = ipaddr.IPv6.parseCIDR('64:ff9b::/96');
/** Deprecated forms that also carry an IPv4 address: refused whatever it is, named by it when it is forbidden. */
const IPV4_COMPATIBLE = ipaddr.IPv6.parseCIDR('::/96');
const IPV4_TRANSLATED = ipaddr.IPv6.parseCIDR('::ffff:0:0:0/96');
/** 6to4 carries its IPv4 address in bits 16-47. */
const SIX_TO_FOUR = ipaddr.IPv6.parseCIDR('2002::/16');

/**
 * Whether the gateway may connect to this address (as `dns.lookup` or a URL's host gives it:
 * dotted IPv4, or IPv6 with or without brackets and zone id). Anything that is not a plain IP
 * address is refused: the rule fails closed.
 */
export function classifyAddress(address: string): AddressVerdict {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  // node:net decides what is an address: ipaddr.js alone would also read `2130706433` or
  // `010.0.0.1` (as 8.0.0.1, where URLs mean 10.0.0.1); URLs and dns.lookup give dotted forms,
  // and checkUrl leaves decimal, octal and hex IPv4 to WHATWG URL, so anything else fails closed.
  switch (isIP(bare)) {
    case 4:
      return classifyIpv4(ipaddr.IPv4.parse(bare));
    case 6:
      // ipaddr.js reads the deprecated IPv4-compatible `::a.b.c.d` as IPv4-mapped; `::0:a.b.c.d` is the same address, read as written.
      return classifyIpv6(ipaddr.IPv6.parse(bare.replace(/^::(?=\d+\.[\d.]+(%.*)?$)/, '::0:')));
    default:
      return forbidden('not an IP address');
  }
}

function classifyIpv4(address: ipaddr.IPv4): AddressVerdict {
  const match = FORBIDDEN_IPV4.find(({ range }) => address.match(range));
  return match ? forbidden(match.category) : ALLOWED;
}

function classifyIpv6(address: ipaddr.IPv6): AddressVerdict {
  const bytes = address.toByteArray();
  const embedded = ipaddr.fromByteArray(bytes.slice(12)) as ipaddr.IPv4;
  if (address.isIPv4MappedAddress() || address.match(NAT64)) return classifyIpv4(embedded);
  const fixed = FORBIDDEN_IPV6.find(({ range }) => address.match(range));
  if (fixed) return forbidden(fixed.category);
  if (address.match(IPV4_COMPATIBLE) || address.match(IPV4_TRANSLATED)) {
    const verdict = classifyIpv4(embedded);
    return verdict.allowed ? forbidden('reserved') : verdict;
  }
  if (address.match(SIX_TO_FOUR)) return classifyIpv4(ipaddr.fromByteArray(bytes.slice(2, 6)) as ipaddr.IPv4);
  return address.match(GLOBAL_UNICAST_IPV6) ? ALLOWED : forbidden('reserved');
}

/** `a loopback address`, `an unspecified address`: the words a refusal uses. */
export function describeCategory(category: ForbiddenCategory): string {
  if (category === 'not an IP address') return 'something that is not an IP address';
  return `${/^[aeiou]/.test(category) ? 'an' : 'a'} ${category} address`;
}

/** One `MEDIA_FETCH_ALLOWLIST` entry: a host as URLs spell it (lower case, IPv4 dotted, IPv6 bracketed), and a port if named. */
export interface AllowlistEntry {
  host: string;
  port?: number;
}

export class AllowlistError extends Error {}

/**
 * Reads an allowlist setting (`MEDIA_FETCH_ALLOWLIST`, billing's `WEBHOOK_ALLOWLIST`):
 * comma-separated `host` or `host:port` entries, a host being a name, an IPv4 address or a
 * bracketed IPv6 address. Hosts are normalised the way URLs are, so `2130706433` and
 * `127.0.0.1` are the same entry.
 */
export function parseAllowlist(text: string | undefined, setting = 'MEDIA_FETCH_ALLOWLIST'): AllowlistEntry[] {
  if (!text?.trim()) return [];
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '')
    .map((entry) => {
      const match = /^(\[[0-9a-fA-F:.]+\]|[^:[\]/@\s]+)(?::(\d{1,5}))?$/.exec(entry);
      const port = match?.[2] === undefined ? undefined : Number(match[2]);
      let host: string | undefined;
      try {
        host = match ? normaliseHost(new URL(`http://${match[1]}/`).hostname) : undefined;
      } catch {
        host = undefined;
      }
      if (!host || (port !== undefined && (port < 1 || port > 65535))) {
        throw new AllowlistError(`${setting}: "${entry}" is not a host or host:port (IPv6 addresses go in brackets: [::1]:8080)`);
      }
      return port === undefined ? { host } : { host, port };
    });
}

/** `Example.com.` and `example.com` are one host. */
function normaliseHost(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, '');
}

export function effectivePort(url: URL): number {
  if (url.port) return Number(url.port);
  return url.protocol === 'https:' ? 443 : 80;
}

export function isAllowlisted(url: URL, allowlist: readonly AllowlistEntry[]): boolean {
  const host = normaliseHost(url.hostname);
  const port = effectivePort(url);
  return allowlist.some((entry) => entry.host === host && (entry.port === undefined || entry.port === port));
}

/** Why a URL is refused before anything is resolved or fetched. */
export type UrlRefusal =
  | 'invalid-url'
  | 'unsupported-scheme'
  | 'credentials-in-url'
  | 'forbidden-address';

/** What the policy says about a URL on its face: refused, allowed outright, or allowed if its name resolves to allowed addresses. */
export type UrlVerdict =
  | { allowed: false; refusal: UrlRefusal; detail: string }
  | { allowed: true; url: URL; allowlisted: boolean; literalAddress?: string };

/**
 * Checks everything about a URL that needs no DNS: that it parses (as WHATWG URL does, which
 * turns `2130706433`, `0177.0.0.1` and `0x7f.1` into `127.0.0.1`), is http or https, carries
 * no user name or password, and, when its host is an IP address, that the address is allowed.
 * An allowlisted host (with its port, if the entry names one) passes without address checks.
 */
export function checkUrl(input: string | URL, allowlist: readonly AllowlistEntry[]): UrlVerdict {
  let url: URL;
  try {
    url = typeof input === 'string' ? new URL(input) : input;
  } catch {
    return { allowed: false, refusal: 'invalid-url', detail: 'is not a valid absolute URL' };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return { allowed: false, refusal: 'unsupported-scheme', detail: `is not an http or https URL (got ${url.protocol.slice(0, -1)})` };
  }
  if (url.username || url.password) {
    return { allowed: false, refusal: 'credentials-in-url', detail: 'carries a user name or password' };
  }
  if (isAllowlisted(url, allowlist)) return { allowed: true, url, allowlisted: true, ...(literalOf(url) && { literalAddress: literalOf(url) }) };
  const literal = literalOf(url);
  if (literal === undefined) return { allowed: true, url, allowlisted: false };
  const verdict = classifyAddress(literal);
  if (!verdict.allowed) {
    return { allowed: false, refusal: 'forbidden-address', detail: `names ${describeCategory(verdict.category)}, which the gateway does not fetch` };
  }
  return { allowed: true, url, allowlisted: false, literalAddress: literal };
}

/** The URL's host when it is an IP address (brackets removed), else undefined. */
function literalOf(url: URL): string | undefined {
  const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
  return isIP(host) === 0 ? undefined : host;
}

/**
 * Checks every address a name resolved to: one forbidden address refuses the name, since
 * which of them a connection would use is not the gateway's choice alone.
 */
export function checkResolvedAddresses(addresses: readonly string[]): { allowed: true } | { allowed: false; detail: string } {
  if (addresses.length === 0) return { allowed: false, detail: 'has a host name that resolves to no address' };
  for (const address of addresses) {
    const verdict = classifyAddress(address);
    if (!verdict.allowed) return { allowed: false, detail: `has a host name that resolves to ${describeCategory(verdict.category)}, which the gateway does not fetch` };
  }
  return { allowed: true };
}
