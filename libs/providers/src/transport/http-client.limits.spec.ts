import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { isRetriableUpstreamError } from '../fallback';
import { UpstreamHttpError, UpstreamLimitExceededError } from '../upstream.errors';
import { eachOf } from './chunk-stream.testing';
import { openEventBatches, postJson, type JsonRequest } from './http-client';

/** The events one at a time. */
const openEventStream = async (call: JsonRequest) => eachOf(await openEventBatches(call));
import { DEFAULT_UPSTREAM_LIMITS, type UpstreamLimits } from './upstream-limits';

// A provider that never stops answering costs the gateway at most its limits: these servers
// write until the client goes away, and each test checks the gateway went away early.

interface Served {
  /** Bytes the server managed to write before the client closed the connection. */
  written: number;
  closedEarly: boolean;
  closed: Promise<void>;
}

type Route = (response: ServerResponse, served: Served) => void;

let server: Server;
let base: string;
const routes = new Map<string, Route>();
const served = new Map<string, Served>();

beforeAll(async () => {
  server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume();
    request.on('end', () => {
      let markClosed!: () => void;
      const entry: Served = { written: 0, closedEarly: false, closed: new Promise<void>((resolve) => (markClosed = resolve)) };
      served.set(request.url ?? '', entry);
      response.on('close', () => {
        entry.closedEarly = !response.writableFinished;
        markClosed();
      });
      response.on('error', () => undefined);
      routes.get(request.url ?? '')?.(response, entry);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

/** Writes `piece` over and over (respecting backpressure) until the client leaves. */
function writeForever(response: ServerResponse, entry: Served, piece: string, paceMs = 0): void {
  const bytes = Buffer.from(piece);
  const next = () => {
    while (!response.destroyed) {
      entry.written += bytes.length;
      if (!response.write(bytes)) return void response.once('drain', next);
      if (paceMs > 0) return void setTimeout(next, paceMs);
    }
  };
  next();
}

const limits = (changes: Partial<UpstreamLimits>): UpstreamLimits => ({ ...DEFAULT_UPSTREAM_LIMITS, ...changes });

const call = (path: string, changes: Partial<UpstreamLimits> = {}): JsonRequest => ({
  provider: 'test',
  url: `${base}${path}`,
  headers: {},
  body: { model: 'm' },
  timeoutMs: 10_000,
  limits: limits(changes),
});

const KIB = 1024;

describe('postJson within limits', () => {
  it('refuses a 2xx answer past maxResponseBytes, closing the connection and marking it charged', async () => {
    routes.set('/huge', (response, entry) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write('{"padding":"');
      writeForever(response, entry, 'x'.repeat(16 * KIB));
    });
    const error = await postJson(call('/huge', { maxResponseBytes: 64 * KIB })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamLimitExceededError);
    expect((error as UpstreamLimitExceededError).upstreamCharged).toBe(true);
    expect((error as Error).message).toBe("the upstream answer from test exceeded the gateway's limit of 64 KiB");
    expect(isRetriableUpstreamError(error)).toBe(false);
    const entry = served.get('/huge')!;
    await entry.closed;
    expect(entry.closedEarly).toBe(true);
    // What the server pushed before it noticed: the limit plus what sockets buffer, far from unbounded.
    expect(entry.written).toBeLessThan(16 * 1024 * KIB);
  });

  it('refuses an answer whose content-length is already past the limit, before its body arrives', async () => {
    routes.set('/announced', (response) => {
      response.writeHead(200, { 'content-type': 'application/json', 'content-length': String(10 * 1024 * KIB) });
      response.flushHeaders();
      // The body never comes: only the head can have ended the call.
    });
    await expect(postJson(call('/announced', { maxResponseBytes: 64 * KIB }))).rejects.toThrow(UpstreamLimitExceededError);
    const entry = served.get('/announced')!;
    await entry.closed;
    expect(entry.closedEarly).toBe(true);
  });

  it('reads an answer of exactly maxResponseBytes', async () => {
    const body = JSON.stringify({ padding: 'y'.repeat(64 * KIB - 14) });
    expect(Buffer.byteLength(body)).toBe(64 * KIB);
    routes.set('/exact', (response) => {
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end(body);
    });
    await expect(postJson<{ padding: string }>(call('/exact', { maxResponseBytes: 64 * KIB }))).resolves.toEqual(JSON.parse(body));
  });

  it('reads an endless error body up to maxErrorBytes and reports its status with the start of it', async () => {
    routes.set('/endless-error', (response, entry) => {
      response.writeHead(503, { 'content-type': 'application/json' });
      response.write('{"error":{"message":"overloaded ');
      writeForever(response, entry, 'z'.repeat(4 * KIB));
    });
    const error = await postJson(call('/endless-error', { maxErrorBytes: 8 * KIB })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect((error as UpstreamHttpError).status).toBe(503);
    // Cut short, the body is no longer JSON: its first 500 characters stand for the reason.
    expect((error as UpstreamHttpError).upstreamMessage).toMatch(/^\{"error":\{"message":"overloaded z+$/);
    expect((error as UpstreamHttpError).upstreamMessage).toHaveLength(500);
    const entry = served.get('/endless-error')!;
    await entry.closed;
    expect(entry.closedEarly).toBe(true);
  });
});

describe('openEventStream within limits', () => {
  async function drain(events: AsyncIterable<{ data: string }>): Promise<{ data: string[]; error: unknown }> {
    const data: string[] = [];
    try {
      for await (const event of events) data.push(event.data);
      return { data, error: undefined };
    } catch (error) {
      return { data, error };
    }
  }

  it('rejects an endless error body after maxErrorBytes, with the status', async () => {
    routes.set('/stream-error', (response, entry) => {
      response.writeHead(429, { 'content-type': 'text/plain' });
      writeForever(response, entry, 'slow down '.repeat(400));
    });
    const error = await openEventStream(call('/stream-error', { maxErrorBytes: 4 * KIB })).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect((error as UpstreamHttpError).status).toBe(429);
    expect((error as UpstreamHttpError).upstreamMessage).toMatch(/^slow down/);
    const entry = served.get('/stream-error')!;
    await entry.closed;
    expect(entry.closedEarly).toBe(true);
  });

  it('delivers the events before a line past maxEventBytes, then ends with a limit error and closes the connection', async () => {
    routes.set('/giant-line', (response, entry) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: {"n":1}\n\ndata: "');
      writeForever(response, entry, 'w'.repeat(16 * KIB));
    });
    const events = await openEventStream(call('/giant-line', { maxEventBytes: 256 * KIB }));
    const { data, error } = await drain(events);
    expect(data).toEqual(['{"n":1}']);
    expect(error).toBeInstanceOf(UpstreamLimitExceededError);
    expect((error as Error).message).toBe("the upstream stream from test sent an event past the gateway's limit of 256 KiB");
    const entry = served.get('/giant-line')!;
    await entry.closed;
    expect(entry.closedEarly).toBe(true);
  });

  it('counts an event of many data lines as one', async () => {
    routes.set('/many-lines', (response, entry) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      writeForever(response, entry, `data: ${'v'.repeat(1000)}\n`);
    });
    const { data, error } = await drain(await openEventStream(call('/many-lines', { maxEventBytes: 64 * KIB })));
    expect(data).toEqual([]);
    expect(error).toBeInstanceOf(UpstreamLimitExceededError);
  });

  it('ends a stream still running after maxStreamMs, even while its reader is not reading', async () => {
    routes.set('/endless', (response, entry) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      writeForever(response, entry, 'data: {"word":"more"}\n\n', 20);
    });
    const events = (await openEventStream(call('/endless', { maxStreamMs: 1_000 })))[Symbol.asyncIterator]();
    expect((await events.next()).value).toEqual({ event: undefined, data: '{"word":"more"}' });
    // The reader stalls past the deadline; the connection is cut without it.
    const entry = served.get('/endless')!;
    await entry.closed;
    expect(entry.closedEarly).toBe(true);
    let error: unknown;
    try {
      for (let next = await events.next(); !next.done; next = await events.next());
    } catch (caught) {
      error = caught;
    }
    expect(error).toBeInstanceOf(UpstreamLimitExceededError);
    expect((error as Error).message).toBe("the upstream stream from test ran past the gateway's limit of 1 s");
    expect((error as UpstreamLimitExceededError).upstreamCharged).toBe(true);
  });
});
