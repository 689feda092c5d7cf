// One request/response exchange as route handlers see it: the parsed body plus
// helpers to answer in JSON or as a server-sent-event stream. Every write checks
// whether the client is still there, so a disconnect mid-delay or mid-stream just
// stops the handler (no write-after-destroy errors, no crash).
//
// `@fail-after=<n>` (controls.ts) is applied here, for every format: once n content
// events have been written, the next event (or the normal end of the stream) is replaced
// by an abrupt destroy of the connection; with n = 0 the first content event is. A format
// says which events carry content through `event()`'s `content` argument; when it does
// not, an unnamed `data:` event other than `[DONE]` (OpenAI, Gemini) or an event named
// `content_block_delta` (Anthropic) counts as content.
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { RequestControls } from './controls';
import type { ErrorDetails, WireFormat } from './format';
import type { ScriptedTurn, TurnScripts } from './scripts';

const NO_CONTROLS: RequestControls = Object.freeze({});
const responseControls = new WeakMap<ServerResponse, RequestControls>();
const responseScripts = new WeakMap<ServerResponse, TurnScripts>();
const abortedResponses = new WeakSet<ServerResponse>();

/** One file of a multipart/form-data request. */
export interface UploadedFile {
  field: string;
  filename: string;
  contentType: string;
  data: Buffer;
}

export class RequestContext {
  /** Capture groups of the matched route pattern (empty for exact routes). */
  params: readonly string[] = [];
  /** The query string, its `model` without control suffixes (Deepgram names the model there). */
  query: URLSearchParams = new URLSearchParams();
  /** The body bytes as received (audio uploads, multipart forms); undefined when empty. */
  rawBody: Buffer | undefined;
  /** The file parts of a multipart/form-data body (its text fields are `body`). */
  files: readonly UploadedFile[] = [];
  private finished = false;
  private disconnected = false;
  private streaming = false;
  private eventsWritten = 0;
  private contentEventsWritten = 0;
  /** Frames of the events of this turn of the event loop not handed to the response yet (see `event()`). */
  private pending = '';

  constructor(
    readonly req: IncomingMessage,
    readonly res: ServerResponse,
    readonly format: WireFormat,
    /** Request path without the query string. */
    readonly path: string,
    readonly body: unknown,
    /** `x-emulator-chunk-delay-ms`: pause between stream events. */
    readonly chunkDelayMs: number,
    readonly requestId: string,
  ) {
    res.once('close', () => {
      if (!res.writableFinished) this.disconnected = true;
    });
    // A write racing a disconnect reports through 'error'; never let that crash the process.
    res.on('error', ignore);
  }

  /** True once the client has gone away or the response has been completed. */
  get closed(): boolean {
    return this.disconnected || this.finished || this.res.destroyed || abortedResponses.has(this.res);
  }

  /**
   * Model-name controls of this request (controls.ts), merged with the control headers.
   * Formats read the ones the router cannot apply for them (`noUsage`); `failAfter` is
   * applied by `event()`. Kept per response, so a context a format builds over the same
   * response (e.g. to delegate to another format's handler) sees them too.
   */
  get controls(): RequestControls {
    return responseControls.get(this.res) ?? NO_CONTROLS;
  }

  set controls(controls: RequestControls) {
    responseControls.set(this.res, controls);
  }

  /** The emulator's scripted turns (scripts.ts), kept per response like the controls. */
  set scripts(scripts: TurnScripts) {
    responseScripts.set(this.res, scripts);
  }

  /** The turn a test scripted for this model's next answer, taken from its queue; chat routes ask before their own rules. */
  nextScriptedTurn(model: string): ScriptedTurn | undefined {
    return responseScripts.get(this.res)?.take(model);
  }

  /** True if the emulator itself cut the connection (`abort()`), as opposed to the client leaving. */
  get abortedByEmulator(): boolean {
    return abortedResponses.has(this.res);
  }

  /**
   * Emulates a network failure: destroys the connection abruptly (no clean end), after
   * letting what was already written reach the client.
   */
  async abort(): Promise<void> {
    if (abortedResponses.has(this.res) || this.res.destroyed) return;
    this.flushEvents();
    abortedResponses.add(this.res);
    if (this.res.headersSent && this.eventsWritten === 0) this.res.flushHeaders();
    await new Promise<void>((resolve) => setImmediate(resolve));
    this.res.destroy();
  }

  /** Waits `ms` milliseconds; resolves false (early) if the client disconnects meanwhile. */
  sleep(ms: number): Promise<boolean> {
    if (this.closed) return Promise.resolve(false);
    if (ms <= 0) return Promise.resolve(true);
    return new Promise<boolean>((resolve) => {
      const onClose = (): void => {
        clearTimeout(timer);
        resolve(false);
      };
      const timer = setTimeout(() => {
        this.res.off('close', onClose);
        resolve(!this.closed);
      }, ms);
      this.res.once('close', onClose);
    });
  }

  json(status: number, body: unknown, headers?: OutgoingHttpHeaders): void {
    if (this.closed || this.res.headersSent) return;
    const payload = JSON.stringify(body);
    this.res.writeHead(status, {
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(payload),
      'x-request-id': this.requestId,
      ...headers,
    });
    this.finished = true;
    this.res.end(payload);
  }

  /** Answers with bytes of a content type (audio, images, plain text). */
  send(status: number, bytes: Buffer | string, contentType: string, headers?: OutgoingHttpHeaders): void {
    if (this.closed || this.res.headersSent) return;
    const payload = typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : bytes;
    this.res.writeHead(status, { 'content-type': contentType, 'content-length': payload.length, 'x-request-id': this.requestId, ...headers });
    this.finished = true;
    this.res.end(payload);
  }

  /** Answers with the format's error body. */
  error(status: number, message: string, details?: ErrorDetails, headers?: OutgoingHttpHeaders): void {
    this.json(status, this.format.errorBody(status, message, details), headers);
  }

  /** Sends the 200 `text/event-stream` head; follow with `event()` calls and `endStream()`. */
  startStream(): boolean {
    if (this.closed || this.res.headersSent) return false;
    this.streaming = true;
    this.res.writeHead(200, {
      'content-type': 'text/event-stream; charset=utf-8',
      'cache-control': 'no-cache',
      'x-request-id': this.requestId,
    });
    return true;
  }

  /**
   * Writes one SSE event. Events written in the same turn of the event loop (a stream without
   * a chunk delay: all of them) leave as one write at its end, or at the stream's end (as the
   * socket would have sent them anyway: Node corks a chunked response until then), which
   * saves a response write and its chunk framing per event; the bytes of the stream are the
   * same. Waits the chunk delay before every event but the first, and for the socket to
   * drain under backpressure. Resolves false if the client is gone (or `@fail-after` cut the
   * connection): stop writing. `content` says whether the event carries generated content
   * (see the file header for the default). `@fail-after` writes event by event.
   */
  async event(data: string, eventName?: string, content?: boolean): Promise<boolean> {
    if (!this.streaming || this.closed) return false;
    if (this.eventsWritten > 0 && this.chunkDelayMs > 0 && !(await this.sleep(this.chunkDelayMs))) return false;
    // A write of an earlier turn filled the socket: wait for it before writing more.
    if (this.pending === '' && this.res.writableNeedDrain && !(await this.drained())) return false;
    const frame = eventName === undefined ? `data: ${data}\n\n` : `event: ${eventName}\ndata: ${data}\n\n`;
    const failAfter = this.controls.failAfter;
    if (failAfter !== undefined) {
      this.flushEvents();
      const isContent = content ?? isContentEvent(data, eventName);
      if (this.contentEventsWritten >= failAfter && (isContent || failAfter > 0)) {
        await this.abort();
        return false;
      }
      if (isContent) this.contentEventsWritten++;
      this.eventsWritten++;
      return this.writeFlushed(frame);
    }
    this.eventsWritten++;
    if (this.pending === '') process.nextTick(this.flushEvents);
    this.pending += frame;
    if (this.pending.length < MAX_PENDING_CHARS || this.flushEvents()) return true;
    return this.drained();
  }

  endStream(): void {
    if (this.closed) return;
    const failAfter = this.controls.failAfter;
    if (failAfter !== undefined && failAfter > 0 && this.contentEventsWritten >= failAfter) {
      void this.abort();
      return;
    }
    this.finished = true;
    const rest = this.pending;
    this.pending = '';
    if (rest === '') this.res.end();
    else this.res.end(rest);
  }

  /**
   * Hands the events written so far to the response; false when its buffer is full (the next
   * event waits for it to drain). Call it before writing to `res` directly after events.
   */
  readonly flushEvents = (): boolean => {
    if (this.pending === '') return true;
    const frames = this.pending;
    this.pending = '';
    if (this.closed) return false;
    return this.res.write(frames);
  };

  /** Writes a frame and waits until it has reached the socket, so an abort() right after loses none of it. */
  private writeFlushed(frame: string): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const onClose = (): void => resolve(false);
      this.res.once('close', onClose);
      this.res.write(frame, (error) => {
        this.res.off('close', onClose);
        resolve(error === null || error === undefined ? !this.closed : false);
      });
    });
  }

  private drained(): Promise<boolean> {
    return new Promise<boolean>((resolve) => {
      const done = (): void => {
        this.res.off('drain', done);
        this.res.off('close', done);
        resolve(!this.closed);
      };
      this.res.on('drain', done);
      this.res.on('close', done);
    });
  }
}

function ignore(): void {}

/** Events of one turn held back at most (characters) before they are written anyway. */
const MAX_PENDING_CHARS = 64 * 1024;

/** Default for `event()`'s `content`: OpenAI/Gemini-style data-only events, or Anthropic's content deltas. */
function isContentEvent(data: string, eventName: string | undefined): boolean {
  if (eventName === undefined) return data !== '[DONE]';
  // Anthropic's content deltas; the Responses API's text, reasoning and argument deltas.
  return eventName === 'content_block_delta' || (eventName.startsWith('response.') && eventName.endsWith('.delta'));
}
