import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UpstreamHttpError, UpstreamTimeoutError, UpstreamUnavailableError } from '../upstream.errors';
import { Cancellation, type CancelSignal } from './cancellation';
import { eachOf } from './chunk-stream.testing';
import { durationMsOf, openEventBatches, postJson, type JsonRequest } from './http-client';

/** The events one at a time. */
const openEventStream = async (call: JsonRequest) => eachOf(await openEventBatches(call));

// postJson collects the answer with its own undici handler: the same results and errors as
// request() + body.text(), checked against a real local server.

type Route = (request: IncomingMessage, body: string, response: ServerResponse) => void;

let server: Server;
let base: string;
const routes = new Map<string, Route>();

beforeAll(async () => {
  server = createServer((request, response) => {
    let body = '';
    request.on('data', (piece: Buffer) => (body += piece.toString()));
    request.on('end', () => routes.get(request.url ?? '')?.(request, body, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const call = (path: string, extra: Partial<JsonRequest> = {}): JsonRequest => ({
  provider: 'test',
  url: `${base}${path}`,
  headers: { authorization: 'Bearer k' },
  body: { model: 'm', messages: [{ role: 'user', content: 'é' }] },
  timeoutMs: 2_000,
  ...extra,
});

/** The signals a call may be given: the standard one, and the gateway's own per-request Cancellation. */
const signals: Array<[string, () => { signal: CancelSignal; abort: () => void }]> = [
  [
    'an AbortSignal',
    () => {
      const controller = new AbortController();
      return { signal: controller.signal, abort: () => controller.abort() };
    },
  ],
  [
    'a Cancellation',
    () => {
      const cancellation = new Cancellation();
      return { signal: cancellation, abort: () => cancellation.abort() };
    },
  ],
];

describe('postJson', () => {
  it('sends the JSON body with its headers and parses the answer (a byte order mark skipped, chunks joined)', async () => {
    let seen: { headers: IncomingMessage['headers']; body: string } | undefined;
    routes.set('/ok?x=1', (request, body, response) => {
      seen = { headers: request.headers, body };
      response.writeHead(200, { 'content-type': 'application/json' });
      response.write(Buffer.from([0xef, 0xbb, 0xbf]));
      response.write('{"answer":"h');
      response.end('é"}');
    });
    expect(await postJson(call('/ok?x=1'))).toEqual({ answer: 'hé' });
    expect(JSON.parse(seen!.body)).toEqual({ model: 'm', messages: [{ role: 'user', content: 'é' }] });
    expect(seen!.headers).toMatchObject({ 'content-type': 'application/json', accept: 'application/json', authorization: 'Bearer k' });
  });

  it('turns an error status into UpstreamHttpError with the reason and retry-after', async () => {
    routes.set('/limited', (_request, _body, response) => {
      response.writeHead(429, { 'Retry-After': '3', 'content-type': 'application/json' });
      response.end('{"error":{"message":"slow down"}}');
    });
    const error = (await postJson(call('/limited')).catch((caught: unknown) => caught)) as UpstreamHttpError;
    expect(error).toBeInstanceOf(UpstreamHttpError);
    expect([error.status, error.upstreamMessage, error.retryAfterSeconds]).toEqual([429, 'slow down', 3]);
  });

  it("sends the connection's extra headers under the adapter's own, and reports the x-ratelimit-* headers of answers and refusals", async () => {
    let seen: IncomingMessage['headers'] | undefined;
    routes.set('/quota', (request, _body, response) => {
      seen = request.headers;
      response.writeHead(200, { 'content-type': 'application/json', 'x-ratelimit-remaining-requests': '41', 'x-ratelimit-reset-requests': '1m30s', 'x-ratelimit-remaining-tokens': '9000', 'x-ratelimit-reset-tokens': '250ms' });
      response.end('{}');
    });
    const reports: unknown[] = [];
    await postJson(call('/quota', { extraHeaders: { 'x-team': 'search', authorization: 'Bearer not-this-one' }, onRateLimits: (left) => reports.push(left) }));
    expect(seen).toMatchObject({ 'x-team': 'search', authorization: 'Bearer k' });
    expect(reports).toEqual([{ requestsLeft: 41, requestsResetMs: 90_000, tokensLeft: 9000, tokensResetMs: 250 }]);
    routes.set('/quota-out', (_request, _body, response) => {
      response.writeHead(429, { 'x-ratelimit-remaining-requests': '0', 'x-ratelimit-reset-requests': '2s' });
      response.end('{"error":{"message":"out"}}');
    });
    await expect(postJson(call('/quota-out', { onRateLimits: (left) => reports.push(left) }))).rejects.toBeInstanceOf(UpstreamHttpError);
    expect(reports.at(-1)).toEqual({ requestsLeft: 0, requestsResetMs: 2_000 });
    expect([durationMsOf('6m0s'), durationMsOf('1h2m3.5s'), durationMsOf('20ms'), durationMsOf('3'), durationMsOf('soon')]).toEqual([360_000, 3_723_500, 20, 3_000, undefined]);
  });

  it('reports a 2xx body that is not JSON as a 502', async () => {
    routes.set('/garbage', (_request, _body, response) => response.end('not json'));
    const error = (await postJson(call('/garbage')).catch((caught: unknown) => caught)) as UpstreamHttpError;
    expect([error.status, error.upstreamMessage]).toEqual([502, 'the upstream answered with a body that is not JSON']);
  });

  it('times out with UpstreamTimeoutError', async () => {
    routes.set('/sleepy', () => undefined);
    await expect(postJson(call('/sleepy', { timeoutMs: 200 }))).rejects.toBeInstanceOf(UpstreamTimeoutError);
  });

  it.each(signals)('rejects with the abort reason when %s fires, before or during the call', async (_name, make) => {
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    // Never answers: the call can only end by the abort.
    routes.set('/slow', () => arrived());
    const during = make();
    const pending = postJson(call('/slow', { signal: during.signal }));
    await reached;
    during.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
    const before = make();
    before.abort();
    await expect(postJson(call('/slow', { signal: before.signal }))).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('reports a refused connection as UpstreamUnavailableError', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    await expect(postJson(call('', { url: `http://127.0.0.1:${port}/v1/chat/completions` }))).rejects.toBeInstanceOf(UpstreamUnavailableError);
  });
});

describe('an authorized call', () => {
  it('sends the encoded body it authorized, with the headers and address the authorizer gave', async () => {
    let received: { url?: string; headers: IncomingMessage['headers']; body: string } | undefined;
    routes.set('/signed', (request, body, response) => {
      received = { url: request.url, headers: request.headers, body };
      response.setHeader('content-type', 'application/json');
      response.end('{"ok":true}');
    });
    let seen: { url: string; headers: Record<string, string>; body: string } | undefined;
    const answer = await postJson<{ ok: boolean }>(
      call('/unsigned', {
        extraHeaders: { 'X-Team': 'search' },
        authorize: async (request) => {
          seen = { url: request.url, headers: request.headers, body: String(request.body) };
          return { headers: { ...request.headers, authorization: 'Signed abc' }, url: request.url.replace('/unsigned', '/signed') };
        },
      }),
    );
    expect(answer).toEqual({ ok: true });
    expect(seen!.headers).toMatchObject({ 'content-type': 'application/json', accept: 'application/json', 'x-team': 'search', authorization: 'Bearer k' });
    expect(received).toMatchObject({ url: '/signed', body: seen!.body, headers: expect.objectContaining({ authorization: 'Signed abc', 'x-team': 'search' }) });
    expect(JSON.parse(received!.body)).toEqual({ model: 'm', messages: [{ role: 'user', content: 'é' }] });
  });

  it('fails the attempt when the credentials never come, within the call time, sending nothing', async () => {
    let requests = 0;
    routes.set('/never-authorized', (_request, _body, response) => {
      requests++;
      response.end('{}');
    });
    const never = () => new Promise<never>(() => undefined);
    await expect(postJson(call('/never-authorized', { timeoutMs: 100, authorize: never }))).rejects.toThrow(UpstreamUnavailableError);
    await expect(openEventBatches(call('/never-authorized', { timeoutMs: 100, authorize: never }))).rejects.toThrow("the connection's credentials did not come within 100 ms");
    expect(requests).toBe(0);
  });

  it.each(signals)('stops waiting for credentials when the client leaves (%s)', async (_name, make) => {
    const { signal, abort } = make();
    const pending = postJson(call('/never-authorized', { timeoutMs: 60_000, signal, authorize: () => new Promise<never>(() => undefined) }));
    setTimeout(abort, 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });
});

describe('openEventStream', () => {
  it.each(signals)('ends the stream with the abort reason when %s fires mid-stream, and closes the connection', async (_name, make) => {
    let upstreamClosed!: () => void;
    const closed = new Promise<void>((resolve) => (upstreamClosed = resolve));
    routes.set('/events', (request, _body, response) => {
      response.writeHead(200, { 'content-type': 'text/event-stream' });
      response.write('data: {"n":1}\n\n');
      request.socket.on('close', upstreamClosed);
    });
    const { signal, abort } = make();
    const events = await openEventStream(call('/events', { signal }));
    const iterator = events[Symbol.asyncIterator]();
    expect((await iterator.next()).value).toMatchObject({ data: '{"n":1}' });
    const next = iterator.next();
    abort();
    await expect(next).rejects.toMatchObject({ name: 'AbortError' });
    await closed;
  });
});
