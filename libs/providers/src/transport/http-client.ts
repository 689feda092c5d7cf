import { randomBytes } from 'node:crypto';
import { Readable } from 'node:stream';
import { encodeJson, type JsonSource } from '@igw/json';
import { Agent, errors as undiciErrors, type Dispatcher } from 'undici';
import { UpstreamHttpError, UpstreamLimitExceededError, UpstreamProtocolError, UpstreamTimeoutError, UpstreamUnavailableError } from '../upstream.errors';
import type { UpstreamRateLimits } from '../provider.types';
import type { CancelSignal } from './cancellation';
import { AwsEventStreamParser } from './aws-event-stream';
import { SseEventTooLargeError, SseParser, type SseEvent } from './sse';
import { DEFAULT_UPSTREAM_LIMITS, describeBytes, describeDuration, type UpstreamLimits } from './upstream-limits';

/** One keep-alive pool for all upstream calls: connection set-up stays off the request path. */
const agent = new Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000, connections: 512, pipelining: 1 });

export interface JsonRequest {
  provider: string;
  url: string;
  headers: Record<string, string>;
  body: unknown;
  /**
   * The client's own JSON text of members of `body` (a chat's `messages`), sent in place of
   * those members serialized again while they still say what it says (see encodeJson).
   */
  bodySources?: Readonly<Record<string, JsonSource>>;
  timeoutMs: number;
  signal?: CancelSignal;
  /** How much of the answer to read; the defaults when absent. */
  limits?: UpstreamLimits;
  /** The connection's extra headers (under the adapter's own: its auth headers win). */
  extraHeaders?: Readonly<Record<string, string>>;
  /** Hears the answer's `x-ratelimit-*` headers, when it has any. */
  onRateLimits?: (left: UpstreamRateLimits) => void;
  /**
   * Authorizes the call once its body is encoded (SigV4 signs the bytes; a cloud token is fetched
   * or taken from its cache): gives the headers to send in place of `headers` and `extraHeaders`.
   */
  authorize?: RequestAuthorizer;
  /** The body already encoded (what `authorize` saw), sent as is in place of `body`. */
  encodedBody?: string | Buffer;
  /**
   * How a streamed answer (openEventBatches) is framed: server-sent events (the default), or
   * AWS's binary event stream (Bedrock), whose frames are read into the same events.
   */
  framing?: 'sse' | 'aws-event-stream';
}

/** A call as it will go out, for a RequestAuthorizer to sign. */
export interface OutgoingRequest {
  method: 'POST';
  url: string;
  /** Every header the gateway sets, lower-cased, the content type included. */
  headers: Record<string, string>;
  body: string | Buffer;
}

/**
 * What an authorized call sends: every header, its authorization added, and the address when the
 * credentials complete it (a Vertex AI project known only to the credential).
 */
export interface AuthorizedRequest {
  headers: Record<string, string>;
  url?: string;
}

/**
 * Authorizes an outgoing call. Rejects with an Upstream*Error when no credentials can be had (the
 * connection's problem, not the client's).
 */
export type RequestAuthorizer = (request: OutgoingRequest) => Promise<AuthorizedRequest>;

/** The call with its body encoded and its headers authorized; a call without `authorize` is returned as it is. */
async function authorized<C extends JsonRequest>(call: C, accept: string): Promise<C> {
  if (call.authorize === undefined) return call;
  const body = call.encodedBody ?? encodeJson(call.body, call.bodySources);
  const headers = lowerCased({ 'content-type': 'application/json', accept, ...call.extraHeaders, ...call.headers });
  const signed = await withinAuthorizeTime(call.authorize({ method: 'POST', url: call.url, headers, body }), call);
  return { ...call, authorize: undefined, extraHeaders: undefined, headers: signed.headers, url: signed.url ?? call.url, encodedBody: body };
}

/** The longest a call waits for its credentials (an STS or a metadata server answers in well under a second). */
const AUTHORIZE_TIMEOUT_MS = 30_000;

/**
 * The authorization, or a failure once the call's time (at most AUTHORIZE_TIMEOUT_MS) is up or its
 * client left: credentials that never come (an STS that hangs) fail the attempt, which falls
 * back, rather than holding the request for its whole life.
 */
function withinAuthorizeTime<T>(pending: Promise<T>, call: JsonRequest): Promise<T> {
  const signal = call.signal;
  if (signal?.aborted) return Promise.reject(abortReason(signal));
  return new Promise<T>((resolve, reject) => {
    const waitMs = Math.min(call.timeoutMs, AUTHORIZE_TIMEOUT_MS);
    const settle = () => {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    };
    const onAbort = () => {
      settle();
      reject(abortReason(signal));
    };
    const timer = setTimeout(() => {
      settle();
      reject(new UpstreamUnavailableError(call.provider, `the connection's credentials did not come within ${waitMs} ms`));
    }, waitMs);
    signal?.addEventListener('abort', onAbort, { once: true });
    pending.then(
      (value) => {
        settle();
        resolve(value);
      },
      (error: unknown) => {
        settle();
        reject(error);
      },
    );
  });
}

function lowerCased(headers: Record<string, string>): Record<string, string> {
  const lowered: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) lowered[name.toLowerCase()] = value;
  return lowered;
}

function encodedBodyOf(call: JsonRequest): string | Buffer {
  return call.encodedBody ?? encodeJson(call.body, call.bodySources);
}

/** A POST whose body is raw bytes (audio for Deepgram's `/v1/listen`), sent with its content type. */
export interface BytesRequest extends Omit<JsonRequest, 'body' | 'bodySources'> {
  body: Buffer;
  contentType: string;
}

/** One file part of a multipart/form-data body. */
export interface MultipartFile {
  /** The form field name, e.g. `file`. */
  field: string;
  filename: string;
  contentType: string;
  data: Buffer;
}

/** A multipart/form-data POST (OpenAI transcriptions, Stability images). Array fields repeat the name. */
export interface MultipartRequest extends Omit<JsonRequest, 'body' | 'bodySources'> {
  fields: Record<string, string | readonly string[] | undefined>;
  files: readonly MultipartFile[];
}

/** A whole binary answer: the bytes and what the upstream says they are. */
export interface BytesAnswer {
  body: Buffer;
  /** The `content-type` header, lower-cased, without parameters; '' when absent. */
  contentType: string;
}

/** What `exchange` POSTs: the encoded body (whole, or a stream of parts with their length) and its type. */
interface WireCall extends Omit<JsonRequest, 'body' | 'bodySources'> {
  body: string | Buffer | Readable;
  contentType: string;
  /** A stream's length: undici would otherwise send it chunked, which not every upstream takes. */
  contentLength?: number;
}

/** POSTs JSON and returns the parsed JSON answer; maps every failure to an Upstream*Error. */
export async function postJson<T>(request: JsonRequest): Promise<T> {
  const call = await authorized(request, 'application/json');
  return parseJsonAnswer<T>(call, await exchangeOrThrow({ ...call, body: encodedBodyOf(call), contentType: 'application/json' }, 'application/json'));
}

/** POSTs raw bytes (with their content type) and returns the parsed JSON answer; failures as postJson's. */
export async function postBytes<T>(call: BytesRequest): Promise<T> {
  return parseJsonAnswer<T>(call, await exchangeOrThrow(call, 'application/json'));
}

/** POSTs a multipart/form-data body and returns the parsed JSON answer; failures as postJson's. */
export async function postMultipart<T>(call: MultipartRequest): Promise<T> {
  const { parts, contentType } = encodeMultipart(call.fields, call.files);
  const body = { body: Readable.from(parts), contentLength: byteLength(parts), contentType };
  return parseJsonAnswer<T>(call, await exchangeOrThrow({ ...call, ...body }, 'application/json'));
}

/**
 * POSTs JSON and returns the answer's bytes (text-to-speech audio), within `maxResponseBytes`.
 * `accept` says what the caller takes (default any); failures as postJson's.
 */
export async function postJsonForBytes(request: JsonRequest, accept = '*/*'): Promise<BytesAnswer> {
  const call = await authorized(request, accept);
  const answer = await exchangeOrThrow({ ...call, body: encodedBodyOf(call), contentType: 'application/json' }, accept);
  return { body: answer.body, contentType: answer.contentType };
}

/** The whole answer, or an Upstream*Error: transport failures translated, an error status with its reason. */
async function exchangeOrThrow(call: WireCall, accept: string): Promise<WholeAnswer> {
  const response = await exchange(call, accept).catch((error: unknown) => {
    throw translateTransportError(call, error);
  });
  if (response.statusCode >= 400) {
    throw new UpstreamHttpError(call.provider, response.statusCode, upstreamMessage(textOf(response.body)), retryAfter(response.retryAfter));
  }
  return response;
}

function parseJsonAnswer<T>(call: { provider: string }, response: WholeAnswer): T {
  try {
    return JSON.parse(textOf(response.body)) as T;
  } catch {
    throw new UpstreamHttpError(call.provider, 502, 'the upstream answered with a body that is not JSON');
  }
}

/** The body decoded as UTF-8, a leading byte order mark skipped (as undici's `body.text()` does). */
function textOf(body: Buffer): string {
  const start = body.length > 2 && body[0] === 0xef && body[1] === 0xbb && body[2] === 0xbf ? 3 : 0;
  return body.toString('utf8', start);
}

/** A multipart/form-data body as the parts it is sent in: the files' own buffers among them. */
export interface MultipartBody {
  parts: readonly Buffer[];
  contentType: string;
}

/**
 * A multipart/form-data body. The boundary is random, so it cannot occur in a file by accident;
 * names and filenames have their quotes and line breaks escaped as browsers do. A file's bytes
 * are one of the parts, not copied: an upload of 25 MiB of audio holds 25 MiB, not twice that.
 * Written here rather than with undici's FormData because that takes a file only as a Blob, and
 * `new Blob([buffer])` copies the bytes (Node has no Blob over a Buffer in memory, only `fs.openAsBlob` over a file).
 */
export function encodeMultipart(fields: MultipartRequest['fields'], files: readonly MultipartFile[]): MultipartBody {
  const boundary = `----igw${randomBytes(12).toString('hex')}`;
  const parts: Buffer[] = [];
  const quoted = (value: string) => value.replace(/\r/g, '%0D').replace(/\n/g, '%0A').replace(/"/g, '%22');
  for (const [name, value] of Object.entries(fields)) {
    if (value === undefined) continue;
    for (const item of typeof value === 'string' ? [value] : value) {
      parts.push(Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="${quoted(name)}"\r\n\r\n${item}\r\n`, 'utf8'));
    }
  }
  for (const file of files) {
    parts.push(
      Buffer.from(
        `--${boundary}\r\ncontent-disposition: form-data; name="${quoted(file.field)}"; filename="${quoted(file.filename)}"\r\ncontent-type: ${file.contentType}\r\n\r\n`,
        'utf8',
      ),
      file.data,
      Buffer.from('\r\n', 'ascii'),
    );
  }
  parts.push(Buffer.from(`--${boundary}--\r\n`, 'ascii'));
  return { parts, contentType: `multipart/form-data; boundary=${boundary}` };
}

interface WholeAnswer {
  statusCode: number;
  /** The first `retry-after` header, if any. */
  retryAfter?: string;
  /** The `content-type` header, lower-cased, without parameters; '' when absent. */
  contentType: string;
  body: Buffer;
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
 * A 2xx body past `maxResponseBytes` closes the connection at once and rejects with
 * UpstreamLimitExceededError; an error body is read up to `maxErrorBytes` and the rest dropped.
 */
function exchange(call: WireCall, accept: string): Promise<WholeAnswer> {
  const { origin, path } = endpointOf(call.url);
  const signal = call.signal;
  const limits = call.limits ?? DEFAULT_UPSTREAM_LIMITS;
  return new Promise<WholeAnswer>((resolve, reject) => {
    let abortCall: ((reason: Error) => void) | undefined;
    let statusCode = 0;
    let retryAfterValue: string | undefined;
    let contentType = '';
    const chunks: Buffer[] = [];
    let length = 0;
    let maxBytes = limits.maxResponseBytes;
    /** Set when the gateway itself cut the body short: onError then settles with this outcome. */
    let cutShort: (() => void) | undefined;
    const onAbort = () => abortCall?.(abortReason(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    const settled = () => signal?.removeEventListener('abort', onAbort);
    const answer = (): WholeAnswer => {
      const body = chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, length);
      return { statusCode, retryAfter: retryAfterValue, contentType, body };
    };
    const stopReading = (outcome: () => void) => {
      cutShort = outcome;
      abortCall?.(new undiciErrors.RequestAbortedError());
    };
    const tooLarge = () => {
      chunks.length = 0;
      reject(new UpstreamLimitExceededError(call.provider, `answer from ${call.provider} exceeded the gateway's limit of ${describeBytes(limits.maxResponseBytes)}`, true));
    };
    const handler: Dispatcher.DispatchHandler = {
      onConnect(abort) {
        abortCall = abort;
        if (signal?.aborted) abort(abortReason(signal));
      },
      onHeaders(status, rawHeaders) {
        if (status < 200) return true;
        statusCode = status;
        if (call.onRateLimits) reportRateLimits(rawHeaders, call.onRateLimits);
        if (status >= 400) maxBytes = limits.maxErrorBytes;
        let declaredLength: number | undefined;
        for (let i = 0; i < rawHeaders.length; i += 2) {
          const name = rawHeaders[i];
          if (retryAfterValue === undefined && name.length === 11 && name.toString('latin1').toLowerCase() === 'retry-after') {
            retryAfterValue = rawHeaders[i + 1].toString('latin1');
          } else if (name.length === 14 && name.toString('latin1').toLowerCase() === 'content-length') {
            declaredLength = Number(rawHeaders[i + 1].toString('latin1'));
          } else if (name.length === 12 && name.toString('latin1').toLowerCase() === 'content-type') {
            contentType = rawHeaders[i + 1].toString('latin1').split(';')[0].trim().toLowerCase();
          }
        }
        // Announced too large: no need to wait for the bytes to refuse them.
        if (status < 400 && declaredLength !== undefined && declaredLength > maxBytes) stopReading(tooLarge);
        return true;
      },
      onData(chunk) {
        if (cutShort) return false;
        if (length + chunk.length > maxBytes) {
          if (statusCode >= 400) {
            // The reason is at the start of an error body: keep that much, drop the rest.
            const room = maxBytes - length;
            if (room > 0) {
              chunks.push(chunk.subarray(0, room));
              length += room;
            }
            stopReading(() => resolve(answer()));
          } else stopReading(tooLarge);
          return false;
        }
        chunks.push(chunk);
        length += chunk.length;
        return true;
      },
      onComplete() {
        settled();
        if (cutShort) return cutShort();
        resolve(answer());
      },
      onError(error) {
        settled();
        if (cutShort) return cutShort();
        reject(error);
      },
    };
    agent.dispatch(
      {
        origin,
        path,
        method: 'POST',
        headers: { 'content-type': call.contentType, accept, ...call.extraHeaders, ...call.headers, ...(call.contentLength !== undefined && { 'content-length': String(call.contentLength) }) },
        body: call.body,
        headersTimeout: call.timeoutMs,
        bodyTimeout: call.timeoutMs,
      },
      handler,
    );
  });
}

function byteLength(parts: readonly Buffer[]): number {
  let length = 0;
  for (const part of parts) length += part.length;
  return length;
}

function abortReason(signal: CancelSignal | undefined): Error {
  return (signal?.reason as Error | undefined) ?? new undiciErrors.RequestAbortedError();
}

/**
 * POSTs JSON and opens the answer as a server-sent event stream, read as batches: all the
 * events that one read of the connection completed, parsed synchronously straight from the
 * connection (no body stream), so a stream costs one promise per network read rather than
 * several per event. Resolves once the upstream answered 2xx (an error status rejects with
 * its reason, before anything was streamed); stopping the iteration early ends the upstream
 * call. One event past `maxEventBytes`, or the stream still running `maxStreamMs` after the
 * request was sent, closes the connection and ends the iteration with
 * UpstreamLimitExceededError; events read before a failure are handed out before it.
 */
export function openEventBatches(call: JsonRequest): Promise<AsyncIterable<SseEvent[]>> {
  const awsFramed = call.framing === 'aws-event-stream';
  const accept = awsFramed ? AWS_EVENT_STREAM_TYPE : 'text/event-stream';
  if (call.authorize !== undefined) return authorized(call, accept).then(openEventBatches);
  const limits = call.limits ?? DEFAULT_UPSTREAM_LIMITS;
  const deadline = Date.now() + limits.maxStreamMs;
  const { origin, path } = endpointOf(call.url);
  const signal = call.signal;
  const parser = awsFramed ? new AwsEventStreamParser(call.provider, { maxEventBytes: limits.maxEventBytes }) : new SseParser({ maxEventChars: limits.maxEventBytes });
  return new Promise<AsyncIterable<SseEvent[]>>((resolveOpen, rejectOpen) => {
    let abortCall: ((reason: Error) => void) | undefined;
    let resumeReading: (() => void) | undefined;
    let statusCode = 0;
    let retryAfterValue: string | undefined;
    const errorBody: Buffer[] = [];
    let errorBytes = 0;
    let timer: NodeJS.Timeout | undefined;
    /** Events read and not yet taken, with their characters (a slow reader pauses the connection). */
    let queue: SseEvent[] = [];
    let queuedChars = 0;
    let paused = false;
    /** The answer arrived whole. */
    let ended = false;
    let failure: unknown;
    /** The reader stopped: what still arrives is dropped. */
    let stopped = false;
    let waiter: { resolve: (result: IteratorResult<SseEvent[]>) => void; reject: (error: unknown) => void } | undefined;

    const onAbort = () => abortCall?.(abortReason(signal));
    signal?.addEventListener('abort', onAbort, { once: true });
    const over = () => {
      signal?.removeEventListener('abort', onAbort);
      clearTimeout(timer);
    };
    const cut = (reason: Error) => {
      failure ??= reason;
      abortCall?.(reason);
    };
    const translated = (error: unknown): Error =>
      error instanceof SseEventTooLargeError
        ? new UpstreamLimitExceededError(call.provider, `stream from ${call.provider} sent an event past the gateway's limit of ${describeBytes(limits.maxEventBytes)}`, true)
        : // An AWS event stream reports failures in its frames: those are the upstream's own words.
          error instanceof UpstreamHttpError || error instanceof UpstreamProtocolError
          ? error
          : translateTransportError(call, error);
    const next = (): Promise<IteratorResult<SseEvent[]>> => {
      if (queue.length > 0) {
        const batch = queue;
        queue = [];
        queuedChars = 0;
        if (paused) {
          paused = false;
          resumeReading?.();
        }
        return Promise.resolve({ value: batch, done: false });
      }
      if (failure !== undefined && !stopped) {
        stop();
        return Promise.reject(translated(failure));
      }
      if (ended || stopped) return Promise.resolve({ value: undefined, done: true });
      return new Promise((resolve, reject) => (waiter = { resolve, reject }));
    };
    const wake = () => {
      if (!waiter || (queue.length === 0 && failure === undefined && !ended)) return;
      const { resolve, reject } = waiter;
      waiter = undefined;
      next().then(resolve, reject);
    };
    /**
     * The reader is done. Usually the end of the answer is already in (a reader stops at
     * `[DONE]`) and the connection serves the next call; an answer still arriving is cut,
     * which closes its connection.
     */
    const stop = () => {
      if (stopped) return;
      stopped = true;
      queue = [];
      if (!ended && failure === undefined) cut(STOPPED_READING);
    };
    const iterator: AsyncIterator<SseEvent[]> = {
      next,
      return: () => {
        stop();
        return Promise.resolve({ value: undefined, done: true });
      },
    };

    const handler: Dispatcher.DispatchHandler = {
      onConnect(abort) {
        abortCall = abort;
        if (signal?.aborted) abort(abortReason(signal));
      },
      onHeaders(status, rawHeaders, resume) {
        if (status < 200) return true;
        statusCode = status;
        if (call.onRateLimits) reportRateLimits(rawHeaders, call.onRateLimits);
        resumeReading = resume;
        if (status >= 400) {
          for (let i = 0; i < rawHeaders.length; i += 2) {
            const name = rawHeaders[i];
            if (name.length === 11 && name.toString('latin1').toLowerCase() === 'retry-after') {
              retryAfterValue = rawHeaders[i + 1].toString('latin1');
              break;
            }
          }
          return true;
        }
        // The error is made only when the time is up: an error's stack trace costs more than a stream's parsing.
        timer = setTimeout(() => {
          cut(new UpstreamLimitExceededError(call.provider, `stream from ${call.provider} ran past the gateway's limit of ${describeDuration(limits.maxStreamMs)}`, true));
          wake();
        }, Math.max(0, deadline - Date.now()));
        // An open stream must not be what keeps a stopping process alive.
        timer.unref();
        resolveOpen({ [Symbol.asyncIterator]: () => iterator });
        return true;
      },
      onData(chunk) {
        if (statusCode >= 400) {
          // The reason is at the start of an error body: keep that much, drop the rest.
          const room = limits.maxErrorBytes - errorBytes;
          errorBody.push(chunk.length > room ? chunk.subarray(0, room) : chunk);
          errorBytes += Math.min(room, chunk.length);
          if (errorBytes < limits.maxErrorBytes) return true;
          abortCall?.(new undiciErrors.RequestAbortedError());
          return false;
        }
        if (stopped || failure !== undefined) return true;
        let events: SseEvent[];
        try {
          events = parser.push(chunk);
        } catch (error) {
          cut(error as Error);
          wake();
          return false;
        }
        if (events.length === 0) return true;
        if (queue.length === 0) queue = events;
        else for (const event of events) queue.push(event);
        for (const event of events) queuedChars += event.data.length;
        wake();
        if (queuedChars > QUEUED_CHARS_LIMIT) paused = true;
        return !paused;
      },
      onComplete() {
        over();
        if (statusCode >= 400) {
          rejectOpen(new UpstreamHttpError(call.provider, statusCode, upstreamMessage(textOf(Buffer.concat(errorBody, errorBytes))), retryAfter(retryAfterValue)));
          return;
        }
        ended = true;
        if (!stopped && failure === undefined) {
          try {
            const rest = parser.end();
            if (rest.length > 0) queue = queue.length === 0 ? rest : [...queue, ...rest];
          } catch (error) {
            failure = error;
          }
        }
        wake();
      },
      onError(error) {
        over();
        if (statusCode < 200) return rejectOpen(translateTransportError(call, error));
        if (statusCode >= 400) {
          // A reason cut short still tells what arrived of it.
          return rejectOpen(new UpstreamHttpError(call.provider, statusCode, upstreamMessage(textOf(Buffer.concat(errorBody, errorBytes))), retryAfter(retryAfterValue)));
        }
        failure ??= error;
        wake();
      },
    };
    agent.dispatch(
      {
        origin,
        path,
        method: 'POST',
        headers: { 'content-type': 'application/json', accept, ...call.extraHeaders, ...call.headers },
        body: encodedBodyOf(call),
        headersTimeout: call.timeoutMs,
        bodyTimeout: call.timeoutMs,
      },
      handler,
    );
  });
}

const AWS_EVENT_STREAM_TYPE = 'application/vnd.amazon.eventstream';

/** Events read ahead of a slow reader at most (characters of data) before the connection is paused. */
const QUEUED_CHARS_LIMIT = 1024 * 1024;

/** Ends a stream's reading early without a stack trace per stream: the error is never shown, only the connection closed. */
const STOPPED_READING = new Error('the gateway stopped reading the stream');

function translateTransportError(call: { provider: string; timeoutMs: number }, error: unknown): Error {
  if (error instanceof UpstreamLimitExceededError) return error;
  if (error instanceof undiciErrors.HeadersTimeoutError || error instanceof undiciErrors.BodyTimeoutError) return new UpstreamTimeoutError(call.provider, call.timeoutMs, true);
  if (error instanceof undiciErrors.ConnectTimeoutError) return new UpstreamTimeoutError(call.provider, call.timeoutMs, false);
  // By name: an abort can come from another realm (a DOMException), where instanceof fails.
  if ((error as { name?: unknown } | null)?.name === 'AbortError') return error as Error;
  const reason = error instanceof Error ? ((error as { code?: string }).code ?? error.message) : String(error);
  return new UpstreamUnavailableError(call.provider, reason);
}

/**
 * Providers put the reason in `error.message` (OpenAI, Anthropic, Gemini), `message`,
 * `err_msg` (Deepgram) or an `errors` list (Stability).
 */
function upstreamMessage(text: string): string {
  try {
    const body = JSON.parse(text) as { error?: { message?: string } | string; message?: string; Message?: string; err_msg?: string; errors?: unknown };
    if (typeof body.error === 'string') return body.error;
    if (body.error?.message) return body.error.message;
    if (body.message) return body.message;
    if (typeof body.Message === 'string' && body.Message) return body.Message;
    if (typeof body.err_msg === 'string' && body.err_msg) return body.err_msg;
    if (Array.isArray(body.errors) && body.errors.length > 0) return body.errors.map(String).join('; ');
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


const RATE_LIMIT_PREFIX = 'x-ratelimit-';

/**
 * OpenAI's and Azure OpenAI's account of what is left of the quota: `x-ratelimit-remaining-requests`,
 * `-tokens`, and when each is full again (`x-ratelimit-reset-requests: 1s`, `6m0s`, `20ms`).
 */
function reportRateLimits(rawHeaders: Buffer[], listener: (left: UpstreamRateLimits) => void): void {
  let left: UpstreamRateLimits | undefined;
  for (let i = 0; i < rawHeaders.length; i += 2) {
    const name = rawHeaders[i];
    if (name.length < 22 || name.toString('latin1', 0, 12).toLowerCase() !== RATE_LIMIT_PREFIX) continue;
    const value = rawHeaders[i + 1].toString('latin1').trim();
    switch (name.toString('latin1').toLowerCase()) {
      case 'x-ratelimit-remaining-requests':
        (left ??= {}).requestsLeft = countOf(value);
        break;
      case 'x-ratelimit-remaining-tokens':
        (left ??= {}).tokensLeft = countOf(value);
        break;
      case 'x-ratelimit-reset-requests':
        (left ??= {}).requestsResetMs = durationMsOf(value);
        break;
      case 'x-ratelimit-reset-tokens':
        (left ??= {}).tokensResetMs = durationMsOf(value);
        break;
    }
  }
  if (left) listener(left);
}

function countOf(value: string): number | undefined {
  const count = Number(value);
  return Number.isFinite(count) && count >= 0 ? count : undefined;
}

const DURATION_PART = /(\d+(?:\.\d+)?)(ms|h|m|s)/g;

/** `1s`, `6m0s`, `1h2m3.5s`, `250ms`, or a bare number of seconds. */
export function durationMsOf(value: string): number | undefined {
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  let total = 0;
  let matched = '';
  for (const [part, amount, unit] of value.matchAll(DURATION_PART)) {
    matched += part;
    total += Number(amount) * (unit === 'ms' ? 1 : unit === 's' ? 1000 : unit === 'm' ? 60_000 : 3_600_000);
  }
  return matched === value && matched !== '' ? Math.ceil(total) : undefined;
}

