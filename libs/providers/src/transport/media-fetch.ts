import type { LookupAddress } from 'node:dns';
import type { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { checkResolvedAddresses, checkUrl, type AllowlistEntry, type UrlRefusal } from './address-policy';
import { pinnedLookup, resolveAll } from './checked-destination';
import { describeBytes, describeDuration } from './upstream-limits';

/**
 * The one place the gateway fetches an address someone else chose: a client's audio URL
 * (`POST /stt`), or an image an upstream answered with a URL instead of bytes.
 *
 * Every hop (the URL and each redirect, at most `maxRedirects`) is checked by the address
 * policy: http or https only, no user name or password, and its host name resolved with
 * `dns.lookup(all)` and refused if ANY address is forbidden (loopback, private, link-local,
 * metadata... see address-policy.ts), unless the host (and port, if the entry names one) is in
 * the allowlist. The connection then goes to exactly the checked addresses (undici's connect
 * `lookup` is pinned to them), so a name that re-resolves elsewhere between check and connect
 * (DNS rebinding) cannot move it. The body is capped at `maxBytes` (a larger declared length
 * is refused before reading; a larger body closes the connection as soon as it passes the
 * cap) and the whole fetch, all hops and the body included, at `timeoutMs`. With a `lease` of
 * the replica's MediaMemoryBudget, the body's bytes are claimed as they arrive: past the budget,
 * or past its holder's share of it, the connection is closed at once (MediaBudgetExhaustedError).
 *
 * Failures are one of two errors, both meant for the client when the client chose the URL:
 * - MediaFetchRefusedError: the gateway will not fetch it (policy, too many redirects, too large);
 * - MediaFetchFailedError: the remote did not deliver (no such host, refused, an error status, too slow).
 * For `POST /stt` both are the client's input, so both are 400s
 * (`Body validation error! url: <detail>`): a 5xx would blame the gateway for the client's
 * server and invite retries of a request that cannot succeed. When an upstream chose the URL
 * (an image answered by URL), both mean the upstream's answer was unusable: a 502.
 * The third, MediaBudgetExhaustedError, is the gateway's own state, not the URL's: for
 * `POST /stt` a 503 with `retry-after`, as the same request may succeed a moment later.
 */

export interface MediaFetchOptions {
  /** The largest body accepted (MEDIA_FETCH_MAX_BYTES). */
  maxBytes: number;
  /** The whole fetch: every hop's resolution, connection, headers, and the body (MEDIA_FETCH_TIMEOUT_MS). */
  timeoutMs: number;
  /** Hosts fetched even when they resolve to forbidden addresses (parseAllowlist(MEDIA_FETCH_ALLOWLIST)). */
  allowlist: readonly AllowlistEntry[];
  /** Redirects followed at most; 5 when absent. */
  maxRedirects?: number;
  /** Resolves a host name to all its addresses; `dns.lookup(name, {all: true})` when absent (tests give names without DNS). */
  resolve?: (hostname: string) => Promise<LookupAddress[]>;
  /** The caller giving up (the client went away): the fetch stops and rejects with MediaFetchFailedError `aborted`. */
  signal?: AbortSignal;
  /** Claims the body's bytes from the replica's budget as they arrive; the caller releases it. */
  lease?: MediaLease;
}

/** Why a lease could not claim more: the process's budget is full, its holder's share is, or the lease was released. */
export type MediaClaimRefusal = 'budget-full' | 'holder-share-full' | 'released';

/** One fetch's share of a MediaMemoryBudget: what it claimed, given back at once by `release` (idempotent). */
export interface MediaLease {
  /** Claims `bytes` more and answers undefined, or claims nothing and answers why not. */
  claim(bytes: number): MediaClaimRefusal | undefined;
  release(): void;
}

/**
 * The fetched media one process holds at once (MEDIA_IN_FLIGHT_MAX_BYTES): each fetch claims
 * its bytes as they arrive and gives them back when its request no longer holds them (a
 * speech-to-text upload is over, an image is inlined), so concurrent fetches cannot take more
 * memory than the budget, whoever sends them. The fetches of one holder (an API key) together
 * hold at most `perHolderMaxBytes`, so one key flooding the gateway with fetches cannot take
 * the room every other key's fetches need.
 */
export class MediaMemoryBudget {
  private held = 0;
  private readonly heldByHolder = new Map<string, number>();

  constructor(
    private readonly maxBytes: number,
    private readonly perHolderMaxBytes: number = maxBytes,
  ) {}

  /** Bytes claimed and not yet given back. */
  get heldBytes(): number {
    return this.held;
  }

  /** Bytes `holder`'s leases claimed and did not give back yet. */
  heldBytesOf(holder: string): number {
    return this.heldByHolder.get(holder) ?? 0;
  }

  lease(holder: string): MediaLease {
    let claimed = 0;
    let released = false;
    return {
      claim: (bytes) => {
        if (released) return 'released';
        const holderHeld = this.heldBytesOf(holder);
        // The holder's share first: a key past it is refused for its own fetches, whatever room is left.
        if (holderHeld + bytes > this.perHolderMaxBytes) return 'holder-share-full';
        if (this.held + bytes > this.maxBytes) return 'budget-full';
        this.held += bytes;
        this.heldByHolder.set(holder, holderHeld + bytes);
        claimed += bytes;
        return undefined;
      },
      release: () => {
        if (released) return;
        released = true;
        this.held -= claimed;
        const left = this.heldBytesOf(holder) - claimed;
        if (left > 0) this.heldByHolder.set(holder, left);
        else this.heldByHolder.delete(holder);
      },
    };
  }
}

export interface FetchedMedia {
  bytes: Buffer;
  /** The answer's `content-type`, as sent; absent when the server sent none. */
  contentType?: string;
  /** The URL the bytes came from, after redirects. */
  finalUrl: string;
}

export type MediaFetchRefusal = UrlRefusal | 'too-many-redirects' | 'too-large';

/** The gateway will not fetch this URL. `detail` completes `url: ...`, e.g. `names a loopback address, which the gateway does not fetch`. */
export class MediaFetchRefusedError extends Error {
  constructor(
    readonly reason: MediaFetchRefusal,
    readonly detail: string,
  ) {
    super(detail);
    this.name = 'MediaFetchRefusedError';
  }
}

const BUDGET_EXHAUSTED = {
  process: 'could not be fetched now: the gateway holds as much fetched media as it may at once',
  holder: "could not be fetched now: this API key's requests hold as much fetched media as one key may at once",
};

/**
 * The process holds as much fetched media as its budget allows (`scope: 'process'`), or the
 * requests of this fetch's holder hold their whole share of it (`'holder'`): the fetch stopped,
 * and the same request may succeed a moment later. `detail` completes `url: ...`.
 */
export class MediaBudgetExhaustedError extends Error {
  readonly detail: string;

  constructor(readonly scope: 'process' | 'holder' = 'process') {
    super(BUDGET_EXHAUSTED[scope]);
    this.detail = BUDGET_EXHAUSTED[scope];
    this.name = 'MediaBudgetExhaustedError';
  }
}

export type MediaFetchFailure = 'unresolvable' | 'unreachable' | 'http-status' | 'bad-redirect' | 'timeout' | 'aborted';

/** The remote did not deliver the file. `detail` completes `url: ...`, e.g. `could not be fetched: the server answered 404`. */
export class MediaFetchFailedError extends Error {
  constructor(
    readonly reason: MediaFetchFailure,
    readonly detail: string,
    /** The remote's status, for `http-status`. */
    readonly status?: number,
  ) {
    super(detail);
    this.name = 'MediaFetchFailedError';
  }
}

const DEFAULT_MAX_REDIRECTS = 5;
const REDIRECT_STATUSES: ReadonlySet<number> = new Set([301, 302, 303, 307, 308]);
const REQUEST_HEADERS = {
  accept: '*/*',
  // Raw bytes only: no decompression, so the size cap is the size of what is read.
  'accept-encoding': 'identity',
  'user-agent': 'inference-gateway-media-fetch',
};

/** A hop that passed the policy: its URL and the addresses its connection may use. */
interface AdmittedHop {
  url: URL;
  /** Absent for an IP-literal host, which needs no resolution. */
  addresses?: LookupAddress[];
}

/** Fetches `url` under the address policy and limits; see the module comment. */
export async function fetchMedia(url: string, options: MediaFetchOptions): Promise<FetchedMedia> {
  const maxRedirects = options.maxRedirects ?? DEFAULT_MAX_REDIRECTS;
  const deadline = new AbortController();
  const timer = setTimeout(
    () => deadline.abort(new MediaFetchFailedError('timeout', `could not be fetched within the gateway's limit of ${describeDuration(options.timeoutMs)}`)),
    options.timeoutMs,
  );
  const onCallerAbort = () => deadline.abort(new MediaFetchFailedError('aborted', 'was not fetched: the request was cancelled'));
  if (options.signal?.aborted) onCallerAbort();
  else options.signal?.addEventListener('abort', onCallerAbort, { once: true });
  try {
    let target: string | URL = url;
    for (let redirects = 0; ; redirects++) {
      const hop = await admit(target, redirects > 0, options, deadline.signal);
      const outcome = await fetchHop(hop, options, deadline.signal);
      if (outcome.kind === 'media') return outcome.media;
      if (redirects >= maxRedirects) throw new MediaFetchRefusedError('too-many-redirects', `redirects more than ${maxRedirects} times`);
      try {
        target = new URL(outcome.location, hop.url);
      } catch {
        throw new MediaFetchFailedError('bad-redirect', 'could not be fetched: the server redirects to something that is not a URL');
      }
    }
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onCallerAbort);
  }
}

/** Applies the address policy to one hop, resolving its host name when it is not an IP address. */
async function admit(target: string | URL, isRedirect: boolean, options: MediaFetchOptions, signal: AbortSignal): Promise<AdmittedHop> {
  const refuse = (reason: MediaFetchRefusal, detail: string) =>
    new MediaFetchRefusedError(reason, isRedirect ? `redirects to a URL that ${detail}` : detail);
  const verdict = checkUrl(target, options.allowlist);
  if (!verdict.allowed) throw refuse(verdict.refusal, verdict.detail);
  if (verdict.literalAddress !== undefined) return { url: verdict.url };
  const hostname = verdict.url.hostname;
  let addresses: LookupAddress[];
  try {
    addresses = await untilAborted(signal, (options.resolve ?? resolveAll)(hostname));
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    throw new MediaFetchFailedError('unresolvable', `could not be fetched: its host name does not resolve (${errorCode(error)})`);
  }
  if (addresses.length === 0) throw new MediaFetchFailedError('unresolvable', 'could not be fetched: its host name resolves to no address');
  if (!verdict.allowlisted) {
    const resolved = checkResolvedAddresses(addresses.map((entry) => entry.address));
    if (!resolved.allowed) throw refuse('forbidden-address', resolved.detail);
  }
  return { url: verdict.url, addresses };
}

type HopOutcome = { kind: 'media'; media: FetchedMedia } | { kind: 'redirect'; location: string };

/** One request over a connection of its own, pinned to the hop's checked addresses and closed when the hop ends. */
async function fetchHop(hop: AdmittedHop, options: MediaFetchOptions, signal: AbortSignal): Promise<HopOutcome> {
  const agent = new Agent({
    connect: { timeout: options.timeoutMs, ...(hop.addresses && { lookup: pinnedLookup(hop.url.hostname, hop.addresses) }) },
    pipelining: 0,
  });
  try {
    const response = await request(hop.url, {
      method: 'GET',
      dispatcher: agent,
      headers: REQUEST_HEADERS,
      signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
    });
    const { statusCode, headers, body } = response;
    if (REDIRECT_STATUSES.has(statusCode)) {
      discard(body);
      const location = firstHeader(headers.location);
      if (!location) throw new MediaFetchFailedError('bad-redirect', `could not be fetched: the server answered ${statusCode} without a Location`);
      return { kind: 'redirect', location };
    }
    if (statusCode < 200 || statusCode >= 300) {
      discard(body);
      throw new MediaFetchFailedError('http-status', `could not be fetched: the server answered ${statusCode}`, statusCode);
    }
    const tooLarge = () => new MediaFetchRefusedError('too-large', `points to a file larger than the gateway's limit of ${describeBytes(options.maxBytes)}`);
    const declared = Number(firstHeader(headers['content-length']));
    if (Number.isFinite(declared) && declared > options.maxBytes) {
      discard(body);
      throw tooLarge();
    }
    const chunks: Buffer[] = [];
    let length = 0;
    for await (const chunk of body as AsyncIterable<Buffer>) {
      length += chunk.length;
      let refusal: Error | undefined;
      if (length > options.maxBytes) refusal = tooLarge();
      else {
        const refused = options.lease?.claim(chunk.length);
        if (refused) refusal = new MediaBudgetExhaustedError(refused === 'holder-share-full' ? 'holder' : 'process');
      }
      if (refusal) {
        chunks.length = 0;
        discard(body);
        throw refusal;
      }
      chunks.push(chunk);
    }
    const contentType = firstHeader(headers['content-type']);
    return { kind: 'media', media: { bytes: Buffer.concat(chunks, length), ...(contentType !== undefined && { contentType }), finalUrl: hop.url.href } };
  } catch (error) {
    if (signal.aborted) throw signal.reason;
    if (error instanceof MediaFetchRefusedError || error instanceof MediaFetchFailedError || error instanceof MediaBudgetExhaustedError) throw error;
    const code = errorCode(error);
    if (/Timeout/i.test(code)) throw new MediaFetchFailedError('timeout', `could not be fetched within the gateway's limit of ${describeDuration(options.timeoutMs)}`);
    throw new MediaFetchFailedError('unreachable', `could not be fetched: the connection failed (${code})`);
  } finally {
    // Closes the socket whatever state the answer was left in, so a refused body stops arriving.
    await agent.destroy().catch(() => undefined);
  }
}

/** Stops reading an answer: undici then reports the cut-short body as an error, which nobody is waiting for. */
function discard(body: Readable): void {
  body.on('error', () => undefined);
  body.destroy();
}

function firstHeader(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** By shape, not instanceof: socket errors come from another realm under some runners. */
function errorCode(error: unknown): string {
  const { code, name } = (typeof error === 'object' && error !== null ? error : {}) as { code?: unknown; name?: unknown };
  if (typeof code === 'string') return code;
  return typeof name === 'string' ? name : 'unknown error';
}

/** The promise, or the signal's reason once it aborts (a DNS look-up cannot itself be cancelled). */
function untilAborted<T>(signal: AbortSignal, promise: Promise<T>): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort);
        resolve(value);
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort);
        reject(error as Error);
      },
    );
  });
}
