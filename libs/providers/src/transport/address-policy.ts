import { isIPv4, isIPv6 } from 'node:net';

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

interface Range<T extends number | bigint> {
  base: T;
  bits: number;
  category: ForbiddenCategory;
}

function ipv4Range(cidr: string, category: ForbiddenCategory): Range<number> {
  const [base, bits] = cidr.split('/');
  return { base: parseIpv4(base) as number, bits: Number(bits), category };
}

/** First match wins, so the specific metadata addresses come before the blocks holding them. */
const FORBIDDEN_IPV4: readonly Range<number>[] = [
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

function ipv6Range(cidr: string, category: ForbiddenCategory): Range<bigint> {
  const [base, bits] = cidr.split('/');
  return { base: parseIpv6(base) as bigint, bits: Number(bits), category };
}

/** Checked after the forms that embed an IPv4 address; anything outside 2000::/3 is refused after these. */
const FORBIDDEN_IPV6: readonly Range<bigint>[] = [
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

const GLOBAL_UNICAST_IPV6 = ipv6Range('2000::/3', 'reserved');
/** Forms whose last 32 bits are an IPv4 address reached through them: judged by that address. */
const IPV4_MAPPED = ipv6Range('::ffff:0:0/96', 'reserved');
const NAT64 = ipv6Range('64:ff9b::/96', 'reserved');
/** Deprecated forms that also carry an IPv4 address: refused whatever it is, named by it when it is forbidden. */
const IPV4_COMPATIBLE = ipv6Range('::/96', 'reserved');
const IPV4_TRANSLATED = ipv6Range('::ffff:0:0:0/96', 'reserved');
/** 6to4 carries its IPv4 address in bits 16-47. */
const SIX_TO_FOUR = ipv6Range('2002::/16', 'reserved');

/**
 * Whether the gateway may connect to this address (as `dns.lookup` or a URL's host gives it:
 * dotted IPv4, or IPv6 with or without brackets and zone id). Anything that is not a plain IP
 * address is refused: the rule fails closed.
 */
export function classifyAddress(address: string): AddressVerdict {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const ipv4 = parseIpv4(bare);
  if (ipv4 !== undefined) return classifyIpv4(ipv4);
  const ipv6 = parseIpv6(bare);
  if (ipv6 !== undefined) return classifyIpv6(ipv6);
  return forbidden('not an IP address');
}

function classifyIpv4(address: number): AddressVerdict {
  const match = FORBIDDEN_IPV4.find((range) => inIpv4Range(address, range));
  return match ? forbidden(match.category) : ALLOWED;
}

function classifyIpv6(address: bigint): AddressVerdict {
  const embedded = Number(address & 0xffff_ffffn);
  if (inIpv6Range(address, IPV4_MAPPED) || inIpv6Range(address, NAT64)) return classifyIpv4(embedded);
  const fixed = FORBIDDEN_IPV6.find((range) => inIpv6Range(address, range));
  if (fixed) return forbidden(fixed.category);
  if (inIpv6Range(address, IPV4_COMPATIBLE) || inIpv6Range(address, IPV4_TRANSLATED)) {
    const verdict = classifyIpv4(embedded);
    return verdict.allowed ? forbidden('reserved') : verdict;
  }
  if (inIpv6Range(address, SIX_TO_FOUR)) return classifyIpv4(Number((address >> 80n) & 0xffff_ffffn));
  return inIpv6Range(address, GLOBAL_UNICAST_IPV6) ? ALLOWED : forbidden('reserved');
}

/** `a loopback address`, `an unspecified address`: the words a refusal uses. */
export function describeCategory(category: ForbiddenCategory): string {
  if (category === 'not an IP address') return 'something that is not an IP address';
  return `${/^[aeiou]/.test(category) ? 'an' : 'a'} ${category} address`;
}

function inIpv4Range(address: number, range: Range<number>): boolean {
  if (range.bits === 0) return true;
  const mask = range.bits === 32 ? 0xffff_ffff : ~(0xffff_ffff >>> range.bits) >>> 0;
  return ((address & mask) >>> 0) === ((range.base & mask) >>> 0);
}

function inIpv6Range(address: bigint, range: Range<bigint>): boolean {
  const shift = BigInt(128 - range.bits);
  return address >> shift === range.base >> shift;
}

/** Dotted-quad IPv4 only (the form URLs and `dns.lookup` produce), as an unsigned 32-bit number. */
export function parseIpv4(text: string): number | undefined {
  if (!isIPv4(text)) return undefined;
  return text.split('.').reduce((value, part) => value * 256 + Number(part), 0);
}

/** IPv6 (an IPv4 tail and a zone id allowed) as a 128-bit number. */
export function parseIpv6(text: string): bigint | undefined {
  const withoutZone = text.includes('%') ? text.slice(0, text.indexOf('%')) : text;
  if (!isIPv6(withoutZone)) return undefined;
  let groups = withoutZone;
  const lastColon = groups.lastIndexOf(':');
  const tail = groups.slice(lastColon + 1);
  if (tail.includes('.')) {
    const ipv4 = parseIpv4(tail);
    if (ipv4 === undefined) return undefined;
    groups = `${groups.slice(0, lastColon + 1)}${(ipv4 >>> 16).toString(16)}:${(ipv4 & 0xffff).toString(16)}`;
  }
  const [head, rest] = groups.split('::');
  const headParts = head ? head.split(':') : [];
  const restParts = rest === undefined ? [] : rest ? rest.split(':') : [];
  const missing = 8 - headParts.length - restParts.length;
  const parts = rest === undefined ? headParts : [...headParts, ...Array<string>(missing).fill('0'), ...restParts];
  if (parts.length !== 8) return undefined;
  return parts.reduce((value, part) => (value << 16n) | BigInt(parseInt(part, 16)), 0n);
}

/** One `MEDIA_FETCH_ALLOWLIST` entry: a host as URLs spell it (lower case, IPv4 dotted, IPv6 bracketed), and a port if named. */
export interface AllowlistEntry {
  host: string;
  port?: number;
}

export class AllowlistError extends Error {}

/**
 * Reads `MEDIA_FETCH_ALLOWLIST`: comma-separated `host` or `host:port` entries, a host being a
 * name, an IPv4 address or a bracketed IPv6 address. Hosts are normalised the way URLs are,
 * so `2130706433` and `127.0.0.1` are the same entry.
 */
export function parseAllowlist(text: string | undefined): AllowlistEntry[] {
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
        throw new AllowlistError(`MEDIA_FETCH_ALLOWLIST: "${entry}" is not a host or host:port (IPv6 addresses go in brackets: [::1]:8080)`);
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
  return isIPv4(host) || isIPv6(host) ? host : undefined;
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
