import type { LookupAddress } from 'node:dns';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseAllowlist } from './address-policy';
import { fetchMedia, MediaBudgetExhaustedError, MediaFetchFailedError, MediaFetchRefusedError, MediaMemoryBudget, type MediaFetchOptions } from './media-fetch';

// Real HTTP servers on 127.0.0.1 only. The allowlist names exactly the media server's
// 127.0.0.1:<port>; every forbidden target is another loopback port or address, and a second
// server on 127.0.0.1 counts the connections that reach it (there must be none). Names that
// are not `localhost` resolve through an injected resolver, so no test touches DNS.

interface Served {
  written: number;
  closedEarly: boolean;
  closed: Promise<void>;
}

type Route = (request: IncomingMessage, response: ServerResponse, served: Served) => void;

const MAX_BYTES = 64 * 1024;
let media: Server;
let mediaPort: number;
let mediaBase: string;
let forbidden: Server;
let forbiddenPort: number;
let forbiddenConnections = 0;
const routes = new Map<string, Route>();
const served = new Map<string, Served>();
const hits = new Map<string, number>();

async function listen(server: Server): Promise<number> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return (server.address() as AddressInfo).port;
}

beforeAll(async () => {
  media = createServer((request, response) => {
    const path = request.url ?? '';
    hits.set(path, (hits.get(path) ?? 0) + 1);
    let markClosed!: () => void;
    const entry: Served = { written: 0, closedEarly: false, closed: new Promise<void>((resolve) => (markClosed = resolve)) };
    served.set(path, entry);
    response.on('close', () => {
      entry.closedEarly = !response.writableFinished;
      markClosed();
    });
    response.on('error', () => undefined);
    const route = routes.get(path);
    if (route) route(request, response, entry);
    else response.writeHead(404).end();
  });
  mediaPort = await listen(media);
  mediaBase = `http://127.0.0.1:${mediaPort}`;
  forbidden = createServer((_request, response) => response.end('internal secret'));
  forbidden.on('connection', () => forbiddenConnections++);
  forbiddenPort = await listen(forbidden);
});

afterAll(async () => {
  for (const server of [media, forbidden]) {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  }
});

afterEach(() => {
  expect(forbiddenConnections).toBe(0);
});

const AUDIO = Buffer.from('ID3\u0004fake mp3 bytes for the test');

function options(overrides: Partial<MediaFetchOptions> = {}): MediaFetchOptions {
  return { maxBytes: MAX_BYTES, timeoutMs: 10_000, allowlist: parseAllowlist(`127.0.0.1:${mediaPort}`), ...overrides };
}

function route(path: string, handler: Route): string {
  routes.set(path, handler);
  return `${mediaBase}${path}`;
}

function redirectTo(location: string, status = 302): Route {
  return (_request, response) => response.writeHead(status, { location }).end();
}

/** Writes `piece` over and over (respecting backpressure) until the client leaves. */
function writeForever(response: ServerResponse, entry: Served, piece: Buffer, paceMs = 0): void {
  const next = () => {
    while (!response.destroyed) {
      entry.written += piece.length;
      if (!response.write(piece)) return void response.once('drain', next);
      if (paceMs > 0) return void setTimeout(next, paceMs);
    }
  };
  next();
}

async function refusal(promise: Promise<unknown>): Promise<MediaFetchRefusedError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(MediaFetchRefusedError);
  return error as MediaFetchRefusedError;
}

async function failure(promise: Promise<unknown>): Promise<MediaFetchFailedError> {
  const error = await promise.then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(MediaFetchFailedError);
  return error as MediaFetchFailedError;
}

describe('fetchMedia', () => {
  it('fetches a file from an allowlisted host and port, with its content type', async () => {
    const url = route('/audio.mp3', (_request, response) => response.writeHead(200, { 'content-type': 'audio/mpeg' }).end(AUDIO));
    const fetched = await fetchMedia(url, options());
    expect(fetched).toEqual({ bytes: AUDIO, contentType: 'audio/mpeg', finalUrl: url });
  });

  it('accepts a file of exactly the size limit', async () => {
    const exact = Buffer.alloc(MAX_BYTES, 7);
    const url = route('/exact.bin', (_request, response) => response.end(exact));
    const fetched = await fetchMedia(url, options());
    expect(fetched.bytes.equals(exact)).toBe(true);
    expect(fetched.contentType).toBeUndefined();
  });

  it('sends no credentials and asks for the bytes as they are', async () => {
    let headers: IncomingMessage['headers'] = {};
    const url = route('/headers', (request, response) => {
      headers = request.headers;
      response.end(AUDIO);
    });
    await fetchMedia(url, options());
    expect(headers['accept-encoding']).toBe('identity');
    expect(headers.authorization).toBeUndefined();
    expect(headers.cookie).toBeUndefined();
  });

  it('follows redirects within allowed hosts and reports where the bytes came from', async () => {
    const target = route('/moved/final.mp3', (_request, response) => response.end(AUDIO));
    route('/hop2', redirectTo('/moved/final.mp3', 307));
    const start = route('/hop1', redirectTo(`${mediaBase}/hop2`, 301));
    const fetched = await fetchMedia(start, options());
    expect(fetched.bytes.equals(AUDIO)).toBe(true);
    expect(fetched.finalUrl).toBe(target);
  });

  it.each([
    ['another port of 127.0.0.1', () => `http://127.0.0.1:${forbiddenPort}/`, 'names a loopback address, which the gateway does not fetch'],
    ['127.0.0.2 on the allowed port', () => `http://127.0.0.2:${mediaPort}/audio.mp3`, 'names a loopback address, which the gateway does not fetch'],
    ['::1 on the allowed port', () => `http://[::1]:${mediaPort}/audio.mp3`, 'names a loopback address, which the gateway does not fetch'],
    ['the decimal form of 127.0.0.1 on another port', () => `http://2130706433:${forbiddenPort}/`, 'names a loopback address, which the gateway does not fetch'],
    ['localhost, not allowlisted', () => `http://localhost:${forbiddenPort}/`, 'has a host name that resolves to a loopback address, which the gateway does not fetch'],
    ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/', 'names a cloud metadata address, which the gateway does not fetch'],
  ])('refuses a URL naming %s, without connecting', async (_label, url, detail) => {
    const error = await refusal(fetchMedia(url(), options()));
    expect(error.reason).toBe('forbidden-address');
    expect(error.detail).toBe(detail);
    expect(error.message).toBe(detail);
  });

  it.each([
    ['another port of 127.0.0.1', () => `http://127.0.0.1:${forbiddenPort}/secret`, 'forbidden-address', 'redirects to a URL that names a loopback address, which the gateway does not fetch'],
    ['127.0.0.2', () => `http://127.0.0.2:${mediaPort}/audio.mp3`, 'forbidden-address', 'redirects to a URL that names a loopback address, which the gateway does not fetch'],
    ['an octal loopback', () => `http://0177.0.0.1:${forbiddenPort}/`, 'forbidden-address', 'redirects to a URL that names a loopback address, which the gateway does not fetch'],
    ['an IPv4-mapped loopback', () => `http://[::ffff:127.0.0.1]:${forbiddenPort}/`, 'forbidden-address', 'redirects to a URL that names a loopback address, which the gateway does not fetch'],
    ['localhost', () => `http://localhost:${forbiddenPort}/`, 'forbidden-address', 'redirects to a URL that has a host name that resolves to a loopback address, which the gateway does not fetch'],
    ['the metadata address', () => 'http://169.254.169.254/latest/meta-data/iam/', 'forbidden-address', 'redirects to a URL that names a cloud metadata address, which the gateway does not fetch'],
    ['a file URL', () => 'file:///etc/passwd', 'unsupported-scheme', 'redirects to a URL that is not an http or https URL (got file)'],
    ['a URL with credentials', () => `http://user:pw@127.0.0.1:${mediaPort}/audio.mp3`, 'credentials-in-url', 'redirects to a URL that carries a user name or password'],
  ])('refuses a redirect from the allowed server to %s, without connecting', async (label, location, reason, detail) => {
    const url = route(`/redirect-to/${label.replace(/\W+/g, '-')}`, (_request, response) => response.writeHead(302, { location: location() }).end());
    const error = await refusal(fetchMedia(url, options()));
    expect(error.reason).toBe(reason);
    expect(error.detail).toBe(detail);
  });

  it('stops after 5 redirects', async () => {
    const url = route('/loop', redirectTo('/loop'));
    const error = await refusal(fetchMedia(url, options()));
    expect(error.reason).toBe('too-many-redirects');
    expect(error.detail).toBe('redirects more than 5 times');
    expect(hits.get('/loop')).toBe(6);
  });

  it('refuses a file whose declared length is over the limit, and closes the connection before reading it', async () => {
    // A little of the body, then nothing: only the declared length can tell it is too large.
    const url = route('/declared-huge', (_request, response, entry) => {
      response.writeHead(200, { 'content-length': String(1024 * 1024 * 1024) });
      entry.written += 1024;
      response.write(Buffer.alloc(1024, 1));
    });
    const error = await refusal(fetchMedia(url, options()));
    expect(error.reason).toBe('too-large');
    expect(error.detail).toBe("points to a file larger than the gateway's limit of 64 KiB");
    const entry = served.get('/declared-huge') as Served;
    await entry.closed;
    expect(entry.closedEarly).toBe(true);
  });

  it('refuses a file of undeclared length once it passes the limit, and closes the connection', async () => {
    const url = route('/endless', (_request, response, entry) => {
      response.writeHead(200, { 'content-type': 'audio/mpeg' });
      writeForever(response, entry, Buffer.alloc(16 * 1024, 2));
    });
    const error = await refusal(fetchMedia(url, options()));
    expect(error.reason).toBe('too-large');
    const entry = served.get('/endless') as Served;
    await entry.closed;
    expect(entry.closedEarly).toBe(true);
  });

  it('gives up on a server that never answers, within the time limit', async () => {
    const url = route('/silent', () => undefined);
    const error = await failure(fetchMedia(url, options({ timeoutMs: 300 })));
    expect(error.reason).toBe('timeout');
    expect(error.detail).toBe("could not be fetched within the gateway's limit of 300 ms");
    await (served.get('/silent') as Served).closed;
  });

  it('gives up on a body that trickles in, within the same time limit', async () => {
    const url = route('/trickle', (_request, response, entry) => {
      response.writeHead(200);
      writeForever(response, entry, Buffer.from('x'), 20);
    });
    const error = await failure(fetchMedia(url, options({ timeoutMs: 300 })));
    expect(error.reason).toBe('timeout');
    const entry = served.get('/trickle') as Served;
    await entry.closed;
    expect(entry.closedEarly).toBe(true);
  });

  it.each(['file:///etc/passwd', 'ftp://127.0.0.1/a.mp3', 'gopher://127.0.0.1:70/_x', 'data:audio/mpeg;base64,SUQz'])('refuses %s', async (url) => {
    const error = await refusal(fetchMedia(url, options()));
    expect(error.reason).toBe('unsupported-scheme');
    expect(error.detail).toMatch(/^is not an http or https URL \(got (file|ftp|gopher|data)\)$/);
  });

  it('fetches from localhost when localhost is allowlisted with the port', async () => {
    const url = route('/local.mp3', (_request, response) => response.end(AUDIO));
    await expect(fetchMedia(`http://localhost:${mediaPort}/local.mp3`, options())).rejects.toThrow(MediaFetchRefusedError);
    const fetched = await fetchMedia(`http://localhost:${mediaPort}/local.mp3`, options({ allowlist: parseAllowlist(`localhost:${mediaPort}`) }));
    expect(fetched.bytes.equals(AUDIO)).toBe(true);
    expect(fetched.finalUrl).toBe(url.replace('127.0.0.1', 'localhost'));
  });

  it('refuses a name if any of its addresses is forbidden, and connects only to the addresses it checked', async () => {
    const lookups: string[] = [];
    const resolve = (addresses: LookupAddress[]) => async (hostname: string) => {
      lookups.push(hostname);
      return addresses;
    };
    const mixed = await refusal(
      fetchMedia('https://media.test/a.mp3', options({ resolve: resolve([{ address: '93.184.216.34', family: 4 }, { address: '10.0.0.7', family: 4 }]) })),
    );
    expect(mixed.detail).toBe('has a host name that resolves to a private address, which the gateway does not fetch');
    const mapped = await refusal(fetchMedia('https://media.test/a.mp3', options({ resolve: resolve([{ address: '::ffff:169.254.169.254', family: 6 }]) })));
    expect(mapped.detail).toBe('has a host name that resolves to a cloud metadata address, which the gateway does not fetch');

    // An allowlisted name that no real DNS knows: the fetch works only because the connection
    // uses the addresses the policy resolved, and nothing resolves the name a second time.
    lookups.length = 0;
    route('/pinned.mp3', (_request, response) => response.end(AUDIO));
    const fetched = await fetchMedia(`http://bucket.media.test:${mediaPort}/pinned.mp3`, {
      ...options({ allowlist: parseAllowlist(`bucket.media.test:${mediaPort}`) }),
      resolve: resolve([{ address: '127.0.0.1', family: 4 }]),
    });
    expect(fetched.bytes.equals(AUDIO)).toBe(true);
    expect(lookups).toEqual(['bucket.media.test']);
  });

  it('reports a remote that fails: an error status, a missing Location, a closed port, an unknown name', async () => {
    const notFound = await failure(fetchMedia(`${mediaBase}/nothing-here.mp3`, options()));
    expect(notFound).toMatchObject({ reason: 'http-status', status: 404, detail: 'could not be fetched: the server answered 404' });

    const nowhere = route('/redirect-nowhere', (_request, response) => response.writeHead(302).end());
    expect(await failure(fetchMedia(nowhere, options()))).toMatchObject({
      reason: 'bad-redirect',
      detail: 'could not be fetched: the server answered 302 without a Location',
    });

    const closed = createServer();
    const closedPort = await listen(closed);
    await new Promise((resolve) => closed.close(resolve));
    const refused = await failure(fetchMedia(`http://127.0.0.1:${closedPort}/a.mp3`, options({ allowlist: parseAllowlist(`127.0.0.1:${closedPort}`) })));
    expect(refused).toMatchObject({ reason: 'unreachable', detail: 'could not be fetched: the connection failed (ECONNREFUSED)' });

    const unknownName = Object.assign(new Error('getaddrinfo ENOTFOUND'), { code: 'ENOTFOUND' });
    const unresolvable = await failure(
      fetchMedia('https://missing.media.test/a.mp3', options({ resolve: () => Promise.reject(unknownName) })),
    );
    expect(unresolvable).toMatchObject({ reason: 'unresolvable', detail: 'could not be fetched: its host name does not resolve (ENOTFOUND)' });
  });

  it('stops when the caller gives up', async () => {
    const url = route('/held', () => undefined);
    const controller = new AbortController();
    const fetching = fetchMedia(url, options({ signal: controller.signal }));
    await new Promise<void>((resolve) => {
      const poll = () => (hits.get('/held') ? resolve() : setTimeout(poll, 5));
      poll();
    });
    controller.abort();
    expect(await failure(fetching)).toMatchObject({ reason: 'aborted' });
    await (served.get('/held') as Served).closed;
  });
});

describe('the media memory budget', () => {
  it('claims what a fetch reads until it is released, and gives it back once', async () => {
    const budget = new MediaMemoryBudget(MAX_BYTES);
    const file = Buffer.alloc(40 * 1024, 3);
    const url = route('/budgeted.bin', (_request, response) => response.end(file));
    const lease = budget.lease('key-a');
    const fetched = await fetchMedia(url, options({ lease }));
    expect(fetched.bytes.equals(file)).toBe(true);
    expect(budget.heldBytes).toBe(file.length);
    lease.release();
    lease.release();
    expect(budget.heldBytes).toBe(0);
  });

  it('stops a fetch whose bytes would take the process past its budget, and closes the connection', async () => {
    const budget = new MediaMemoryBudget(MAX_BYTES);
    const holding = budget.lease('key-a');
    expect(holding.claim(MAX_BYTES - 8 * 1024)).toBeUndefined();
    const url = route('/over-budget', (_request, response, entry) => {
      response.writeHead(200, { 'content-type': 'audio/mpeg' });
      writeForever(response, entry, Buffer.alloc(4 * 1024, 2));
    });
    const lease = budget.lease('key-b');
    const error = await fetchMedia(url, options({ lease })).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(MediaBudgetExhaustedError);
    expect(error).toMatchObject({ scope: 'process', detail: 'could not be fetched now: the gateway holds as much fetched media as it may at once' });
    const entry = served.get('/over-budget') as Served;
    await entry.closed;
    expect(entry.closedEarly).toBe(true);
    expect(budget.heldBytes).toBeLessThanOrEqual(MAX_BYTES);
    lease.release();
    holding.release();
    expect(budget.heldBytes).toBe(0);
    // Room again: the same fetch of a file that fits goes through.
    const small = route('/fits.bin', (_request, response) => response.end(Buffer.alloc(1024)));
    expect((await fetchMedia(small, options({ lease: budget.lease('key-a') }))).bytes.length).toBe(1024);
  });

  it('refuses claims on a released lease', () => {
    const budget = new MediaMemoryBudget(1024);
    const lease = budget.lease('key-a');
    lease.release();
    expect(lease.claim(1)).toBe('released');
    expect(budget.heldBytes).toBe(0);
  });

  it("stops a fetch past its holder's share while other holders still claim the rest", async () => {
    const budget = new MediaMemoryBudget(MAX_BYTES, MAX_BYTES / 2);
    const flooding = budget.lease('key-a');
    expect(flooding.claim(MAX_BYTES / 2 - 8 * 1024)).toBeUndefined();
    const url = route('/over-share', (_request, response, entry) => {
      response.writeHead(200, { 'content-type': 'audio/mpeg' });
      writeForever(response, entry, Buffer.alloc(4 * 1024, 2));
    });
    const sameKey = budget.lease('key-a');
    const error = await fetchMedia(url, options({ lease: sameKey })).catch((reason: unknown) => reason);
    expect(error).toBeInstanceOf(MediaBudgetExhaustedError);
    expect(error).toMatchObject({ scope: 'holder', detail: "could not be fetched now: this API key's requests hold as much fetched media as one key may at once" });
    const entry = served.get('/over-share') as Served;
    await entry.closed;
    expect(entry.closedEarly).toBe(true);
    expect(budget.heldBytesOf('key-a')).toBeLessThanOrEqual(MAX_BYTES / 2);
    sameKey.release();
    // Half the budget is still free: another key's file of a quarter of it goes through meanwhile.
    const other = budget.lease('key-b');
    const quarter = route('/other-key.bin', (_request, response) => response.end(Buffer.alloc(MAX_BYTES / 4)));
    expect((await fetchMedia(quarter, options({ lease: other }))).bytes.length).toBe(MAX_BYTES / 4);
    expect([budget.heldBytesOf('key-a'), budget.heldBytesOf('key-b')]).toEqual([MAX_BYTES / 2 - 8 * 1024, MAX_BYTES / 4]);
    other.release();
    flooding.release();
    expect([budget.heldBytes, budget.heldBytesOf('key-a'), budget.heldBytesOf('key-b')]).toEqual([0, 0, 0]);
  });

  it("refuses a claim past the holder's share before one past the process's budget", () => {
    const budget = new MediaMemoryBudget(1024, 512);
    const first = budget.lease('key-a');
    expect(first.claim(512)).toBeUndefined();
    expect(budget.lease('key-a').claim(1)).toBe('holder-share-full');
    const second = budget.lease('key-b');
    expect(second.claim(512)).toBeUndefined();
    expect(budget.lease('key-c').claim(1)).toBe('budget-full');
    first.release();
    expect(budget.lease('key-c').claim(512)).toBeUndefined();
  });
});
