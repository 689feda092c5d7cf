import type { Server, ServerResponse } from 'node:http';
import { HttpStatus, Logger, type INestApplication } from '@nestjs/common';
import { buildErrorBody } from './errors/error-body';
import { sendJson } from './json-response';
import { startRequestContext, type ServedRequest } from './request-context';
import { IdleSignal } from '@igw/config';

export const SHUTTING_DOWN_MESSAGE = 'The service is shutting down: send the request again.';
export const NOT_READY_SHUTTING_DOWN = 'Not ready: shutting down';

/** Work that outlives its HTTP request (an upstream call read on after its client left), waited for and cut off like the requests. */
export interface InFlightWork {
  /** Resolves true once nothing is running, false if `deadline` (epoch ms) comes first. */
  settled(deadline: number): Promise<boolean>;
  /** Ends what is still running now, as when its client leaves (it is billed by the abandoned-request rule). */
  cutOff(): void;
  /** How much is running. */
  running(): number;
}

/**
 * The requests one HTTP server is serving, and its drain at shutdown. While draining, the
 * server still listens: Kubernetes removes a terminating pod from its Service's endpoints
 * while the pod is told to stop, so requests keep arriving for a moment. Each of them is
 * answered 503 with the error body and `connection: close` (clients retry it, and their retry
 * goes to another replica), `/readyz` answers 503 so probes see the pod not ready at once, and
 * `/healthz` still answers 200 so the pod is not restarted mid-drain. Requests already running,
 * streams included, go on to their end.
 */
export class HttpDrain {
  private readonly inFlight = new Set<ServerResponse>();
  private readonly idle = new IdleSignal();
  private draining = false;

  /**
   * `observe`: what the server runs first for each request (the request observer, which counts
   * it and logs it when it is over), run for the requests the drain refuses too.
   */
  constructor(
    private readonly server: Server,
    private readonly observe: (request: ServedRequest, response: ServerResponse) => void = startRequestContext,
  ) {}

  /** Puts the drain ahead of the server's request listeners (direct routes and Express). */
  install(): void {
    const listeners = this.server.listeners('request') as Array<(request: ServedRequest, response: ServerResponse) => void>;
    this.server.removeAllListeners('request');
    this.server.on('request', (request: ServedRequest, response: ServerResponse) => {
      if (this.draining && this.refuse(request, response)) return;
      this.inFlight.add(response);
      response.once('close', () => this.finished(response));
      for (const listener of listeners) listener(request, response);
    });
  }

  get isDraining(): boolean {
    return this.draining;
  }

  running(): number {
    return this.inFlight.size;
  }

  /** Stops taking new requests; those running go on. Keep-alive connections close as their requests end. */
  begin(): void {
    if (this.draining) return;
    this.draining = true;
    // An answer not started yet tells its client to reconnect (and so land on another replica).
    for (const response of this.inFlight) if (!response.headersSent) response.shouldKeepAlive = false;
    this.server.closeIdleConnections();
  }

  /** Resolves true once no request is running, false if `deadline` (epoch ms) comes first. */
  settled(deadline: number): Promise<boolean> {
    return this.idle.settled(this.inFlight.size === 0, deadline);
  }

  /** Closes the connections of the requests still running: to their handlers, their clients left. */
  cutOff(): void {
    for (const response of this.inFlight) response.socket?.destroy();
  }

  private finished(response: ServerResponse): void {
    this.inFlight.delete(response);
    // The connection is idle once Node is done with the response: closed then, not kept alive.
    if (this.draining) setImmediate(() => this.server.closeIdleConnections());
    if (this.inFlight.size === 0) this.idle.idle();
  }

  /** Answers a request that arrived during the drain; false for liveness, which is served as usual. */
  private refuse(request: ServedRequest, response: ServerResponse): boolean {
    const path = (request.url ?? '/').split('?', 1)[0];
    response.shouldKeepAlive = false;
    if (path === '/healthz') return false;
    this.observe(request, response);
    response.setHeader('connection', 'close');
    const message = path === '/readyz' ? NOT_READY_SHUTTING_DOWN : SHUTTING_DOWN_MESSAGE;
    // The body is not read: the connection closes after the answer.
    if (request.context) request.context.error = message;
    sendJson(response, HttpStatus.SERVICE_UNAVAILABLE, buildErrorBody(request, HttpStatus.SERVICE_UNAVAILABLE, message));
    return true;
  }
}

const drains = new WeakMap<Server, HttpDrain>();

/** Tracks an app's requests for its drain at shutdown (startHttpApp does it for every service). */
export function installHttpDrain(app: INestApplication, observe?: (request: ServedRequest, response: ServerResponse) => void): HttpDrain {
  const server = app.getHttpServer() as Server;
  const drain = new HttpDrain(server, observe);
  drain.install();
  drains.set(server, drain);
  return drain;
}

/** How long work cut off at the drain deadline gets to settle its usage before the app closes. */
const CUT_OFF_SETTLE_MS = 3_000;

/**
 * Stops a service gracefully: stops taking requests (see HttpDrain), lets running requests,
 * streams and `work` finish for up to `drainMs`, cuts off what is still running then (billed as
 * abandoned), and closes the app, whose shutdown hooks flush usage events and let queue workers
 * finish their current jobs.
 */
export async function drainAndClose(app: INestApplication, options: { drainMs: number; work?: InFlightWork; logger?: Logger }): Promise<void> {
  const logger = options.logger ?? new Logger('shutdown');
  const drain = drains.get(app.getHttpServer() as Server);
  const deadline = Date.now() + options.drainMs;
  drain?.begin();
  const running = (drain?.running() ?? 0) + (options.work?.running() ?? 0);
  if (running > 0) logger.log(`draining: waiting up to ${options.drainMs} ms for ${running} running request(s)`);
  const idle = (await (drain?.settled(deadline) ?? true)) && (await (options.work?.settled(deadline) ?? true));
  if (!idle) {
    logger.warn(
      `${drain?.running() ?? 0} request(s) and ${options.work?.running() ?? 0} upstream call(s) still running after ${options.drainMs} ms (SHUTDOWN_DRAIN_MS): cut off, billed as abandoned`,
    );
    drain?.cutOff();
    // The handlers hear of their clients leaving (the connections' close events) before their upstream calls end.
    await new Promise((resolve) => setTimeout(resolve, 20));
    options.work?.cutOff();
    const settleBy = Date.now() + CUT_OFF_SETTLE_MS;
    await options.work?.settled(settleBy);
    await drain?.settled(settleBy);
  }
  await app.close();
}
