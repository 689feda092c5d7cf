import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from 'node:dns';
import { Agent } from 'undici';
import { checkResolvedAddresses, checkUrl, type AllowlistEntry } from './address-policy';

/**
 * The address policy (address-policy.ts) for one URL someone chose that is called once, without
 * redirects (an account's webhook): checked when it is set and again before each call, since
 * what its name resolves to may change in between. The call then connects only to the addresses
 * checked (`pinnedAgent`), so a second resolution cannot move it.
 */
export type DestinationVerdict = { allowed: true; url: URL; addresses?: LookupAddress[] } | { allowed: false; detail: string };

export async function checkDestination(
  input: string,
  allowlist: readonly AllowlistEntry[],
  resolve: (hostname: string) => Promise<LookupAddress[]> = resolveAll,
): Promise<DestinationVerdict> {
  const verdict = checkUrl(input, allowlist);
  if (!verdict.allowed) return { allowed: false, detail: verdict.detail };
  if (verdict.literalAddress !== undefined) return { allowed: true, url: verdict.url };
  let addresses: LookupAddress[];
  try {
    addresses = await resolve(verdict.url.hostname);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException | undefined)?.code ?? 'error';
    return { allowed: false, detail: `has a host name that does not resolve (${code})` };
  }
  if (!verdict.allowlisted) {
    const resolved = checkResolvedAddresses(addresses.map((entry) => entry.address));
    if (!resolved.allowed) return { allowed: false, detail: resolved.detail };
  } else if (addresses.length === 0) return { allowed: false, detail: 'has a host name that resolves to no address' };
  return { allowed: true, url: verdict.url, addresses };
}

/** Every address a host name resolves to, in the resolver's order. */
export function resolveAll(hostname: string): Promise<LookupAddress[]> {
  return new Promise((resolve, reject) => {
    dnsLookup(hostname, { all: true, order: 'verbatim' }, (error, addresses) => (error ? reject(error) : resolve(addresses)));
  });
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for net.connect that answers only with the addresses the policy checked, so the
 * connection cannot reach an address that a second resolution would give.
 */
export function pinnedLookup(hostname: string, addresses: readonly LookupAddress[]) {
  return (name: string, lookupOptions: LookupOptions, callback: LookupCallback): void => {
    const family = lookupOptions.family === 4 || lookupOptions.family === 'IPv4' ? 4 : lookupOptions.family === 6 || lookupOptions.family === 'IPv6' ? 6 : 0;
    const usable = addresses.filter((entry) => family === 0 || entry.family === family);
    if (name !== hostname || usable.length === 0) {
      const error: NodeJS.ErrnoException = new Error(`${name} has no checked address`);
      error.code = 'ENOTFOUND';
      callback(error, '', 0);
      return;
    }
    if (lookupOptions.all) callback(null, [...usable]);
    else callback(null, usable[0].address, usable[0].family);
  };
}

/** An agent for one call to an allowed destination: its connections go to the checked addresses only. The caller destroys it. */
export function pinnedAgent(destination: Extract<DestinationVerdict, { allowed: true }>, connectTimeoutMs: number): Agent {
  const { url, addresses } = destination;
  return new Agent({ connect: { timeout: connectTimeoutMs, ...(addresses && { lookup: pinnedLookup(url.hostname, addresses) }) }, pipelining: 0 });
}
