// One request/response exchange as route handlers see it: the parsed body plus
// helpers to answer in JSON or as a server-sent-event stream. Every write checks
// whether the client is still there, so a disconnect mid-delay or mid-stream just
// stops the handler (no write-after-destroy errors, no crash).
import type { IncomingMessage, OutgoingHttpHeaders, ServerResponse } from 'node:http';
import type { ErrorDetails, WireFormat } from './format';

export class RequestContext {
  /** Capture groups of the matched route pattern (empty for exact routes). */
  params: readonly string[] = [];
  private finished = false;
  private disconnected = false;
  private streaming = false;
  private eventsWritten = 0;

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
    return this.disconnected || this.finished || this.res.destroyed;
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
   * Writes one SSE event immediately (one socket write per event, no batching).
   * Waits the chunk delay before every event but the first, and for the socket to
   * drain under backpressure. Resolves false if the client is gone: stop writing.
   */
  async event(data: string, eventName?: string): Promise<boolean> {
    if (!this.streaming || this.closed) return false;
    if (this.eventsWritten > 0 && this.chunkDelayMs > 0 && !(await this.sleep(this.chunkDelayMs))) return false;
    this.eventsWritten++;
    const frame = eventName === undefined ? `data: ${data}\n\n` : `event: ${eventName}\ndata: ${data}\n\n`;
    if (this.res.write(frame)) return true;
    return this.drained();
  }

  endStream(): void {
    if (this.closed) return;
    this.finished = true;
    this.res.end();
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
