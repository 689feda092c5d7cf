import { Agent, errors as undiciErrors, request, type Dispatcher } from 'undici';
import { UpstreamHttpError, UpstreamTimeoutError, UpstreamUnavailableError } from '../upstream.errors';
import type { CancelSignal } from './cancellation';
import { parseSse, type SseEvent } from './sse';

/** One keep-alive pool for all upstream calls: connection set-up stays off the request path. */
const agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 512, pipelining: 1 });

export interface JsonRequest {
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  timeoutMs: number;
  signal?: CancelSignal;
}

type UpstreamResponse = Awaited<ReturnType<typeof request>>;

/** POSTs the JSON body; a transport failure (refused, reset, timeout) becomes an Upstream*Error. */
async function send(call: JsonRequest, accept: string): Promise<UpstreamResponse> {
  try {
    return await request(call.url, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json', accept, ...call.headers },
      body: JSON.stringify(call.body),
      headersTimeout: call.timeoutMs,
      bodyTimeout: call.timeoutMs,
      // undici takes any object with addEventListener for a signal.
      signal: call.signal as AbortSignal | undefined,
    });
  } catch (error) {
    throw translateTransportError(call, error);
  }
}

/** POSTs JSON and returns the parsed JSON answer; maps every failure to an Upstream*Error. */
export async function postJson<T>(call: JsonRequest): Promise<T> {
  const response = await exchange(call, 'application/json').catch((error: unknown) => {
    throw translateTransportError(call, error);
  });
  const text = response.text;
  if (response.statusCode >= 400) {
    throw new UpstreamHttpError(call.provider, response.statusCode, upstreamMessage(text), retryAfter(response.retryAfter));
  }
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new UpstreamHttpError(call.provider, 502, 'the upstream answered with a body that is not JSON');
  }
}

interface WholeAnswer {
  statusCode: number;
  /** The first `retry-after` header, if any. */
  retryAfter?: string;
  /** The body decoded as UTF-8 (a leading byte order mark skipped, as undici's `body.text()` does). */
  text: string;
}

/** Origin and path of each upstream URL, parsed once (there is one URL per configured provider). */
const endpoints = new Map<string, { origin: string; path: string }>();

function endpointOf(url: string): { origin: string; path: string } {
  let endpoint = endpoints.get(url);
  if (!endpoint) {
    const parsed = new URL(url);
    endpoint = { origin: parsed.origin, path: `${parsed.pathname}${parsed.search}` };
    if (endpoints.size < 1_000) endpoints.set(url, endpoint);
  }
  return endpoint;
}

/**
 * POSTs the JSON body and collects the whole answer straight from the connection: what
 * `request()` + `body.text()` give, with the same timeouts, abort and errors, but without a
 * body stream and its promise plumbing per call (a measurable share of a chat request).
 */
function exchange(call: JsonRequest, accept: string): Promise<WholeAnswer> {
  const { origin, path } = endpointOf(call.url);
  const signal = call.signal;
  return new Promise<WholeAnswer>((resolve, reject) => {
    let abortCall: ((reason: Error) => void) | undefined;
    let statusCode = 0;
    let retryAfterValue: string | undefined;
    const chunks: Buffer[] = [];
    let length = 0;
    const onAbort = () => abortCall?.(abortReason(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    const settled = () => signal?.removeEventListener('abort', onAbort);
    const handler: Dispatcher.DispatchHandler = {
      onConnect(abort) {
        abortCall = abort;
        if (signal?.aborted) abort(abortReason(signal));
      },
      onHeaders(status, rawHeaders) {
        if (status < 200) return true;
        statusCode = status;
        for (let i = 0; i < rawHeaders.length; i += 2) {
          if (retryAfterValue === undefined && rawHeaders[i].length === 11 && rawHeaders[i].toString('latin1').toLowerCase() === 'retry-after') {
            retryAfterValue = rawHeaders[i + 1].toString('latin1');
          }
        }
        return true;
      },
      onData(chunk) {
        chunks.push(chunk);
        length += chunk.length;
        return true;
      },
      onComplete() {
        settled();
        const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length);
        const start = body.length > 2 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
        resolve({ statusCode, retryAfter: retryAfterValue, text: body.toString('utf8', start) });
      },
      onError(error) {
        settled();
        reject(error);
      },
    };
    agent.dispatch(
      {
        origin,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, ...call.headers },
        body: JSON.stringify(call.body),
        headersTimeout: call.timeoutMs,
        bodyTimeout: call.timeoutMs,
      },
      handler,
    );
  });
}

function abortReason(signal: CancelSignal | undefined): Error {
  return (signal?.reason as Error | undefined) ?? new undiciErrors.RequestAbortedError();
}

/**
 * POSTs JSON and opens the answer as a server-sent event stream. Resolves once the upstream
 * answered 2xx (an error status rejects with its reason, before anything was streamed);
 * stopping the iteration early closes the upstream connection.
 */
export async function openEventStream(call: JsonRequest): Promise<AsyncIterable<SseEvent>> {
  const response = await send(call, 'text/event-stream');
  if (response.statusCode >= 400) {
    const text = await response.body.text().catch(() => '');
    throw new UpstreamHttpError(call.provider, response.statusCode, upstreamMessage(text), retryAfter(response.headers['retry-after']));
  }
  const body = response.body;
  return (async function* events() {
    try {
      yield* parseSse(body);
    } catch (error) {
      throw translateTransportError(call, error);
    } finally {
      if (!body.destroyed) body.destroy();
    }
  })();
}

function translateTransportError(call: JsonRequest, error: unknown): Error {
  if (error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError || error instanceof undiciErrors.ConnectTimeoutError) {
    return new UpstreamTimeoutError(call.provider, call.timeoutMs);
  }
  // By name: an abort can come from another realm (a DOMException), where instanceof fails.
  if ((error as { name?: unknown } | null)?.name === 'AbortError') return error as Error;
  const reason = error instanceof Error ? ((error as { code?: string }).code ?? error.message) : String(error);
  return new UpstreamUnavailableError(call.provider, reason);
}

/** Providers put the reason in `error.message` (OpenAI, Anthropic, Gemini) or `message`. */
function upstreamMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } | string; message?: string };
    if (typeof body.error === 'string') return body.error;
    if (body.error?.message) return body.error.message;
    if (body.message) return body.message;
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, 500) || 'no error message';
}

function retryAfter(header: string | string[] | undefined): number | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  if (!value) return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, Math.ceil((date - Date.now()) / 1000));
}
