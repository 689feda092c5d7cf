import type { Server, ServerResponse } from 'node:http';
import { Logger, type DynamicModule, type INestApplication, type LogLevel, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { appValidationPipe } from '@igw/contracts';
import { AllExceptionsFilter, routeNotFoundMessage } from '../errors/all-exceptions.filter';
import { bodyLimitBytes, JsonBodyInterceptor } from './body-parsing';
import { installHttpDrain } from './http-drain';
import { mountedMiddleware, refuseSkippedEnhancers, type DirectRouteCoverage } from './direct-route-coverage';
import { requestIdMiddleware, type ServedRequest } from './request-context';
import { requestObserver } from '../observability/request-observer';
import { startTracing } from '../observability/tracing';
import { serviceLogger, type LogFormat } from './service-logger';
import { setUpSwagger } from './swagger';

/**
 * A route served straight from Node's server, ahead of Express and Nest's per-request
 * pipeline, for the few requests whose overhead matters (the chat hot path). It calls the
 * same pieces the pipeline would (authentication, the validation pipe, the services, the
 * error body), and leaves any request it is not sure about to Express, where the route's
 * controller serves it and documents it. The app refuses to start when it has an enhancer
 * the route would skip (direct-route-coverage.ts).
 */
export interface DirectRoute extends DirectRouteCoverage {
  /** Serves the request and returns true; or returns false, having read nothing, to leave it to Express. */
  serve(request: ServedRequest, response: ServerResponse): boolean;
}

/** What direct routes share with the app's pipeline. */
export interface DirectRouteContext {
  app: INestApplication;
  bodyLimitBytes: number;
}

export interface HttpAppOptions {
  name: string;
  host: string;
  port: number;
  /** The variable that sets `port`, named when the port cannot be had. */
  portVariable: string;
  /** false: initialise without a port of its own, to be served through another app's port (`mountOnApp`). */
  listen?: boolean;
  bodyLimit: string;
  logLevel: LogLevel;
  logFormat?: LogFormat;
  /** TRUSTED_PROXIES: the reverse proxies whose X-Forwarded-For tells the client address of the access log. */
  trustedProxies?: string;
  /** OTEL_EXPORTER_OTLP_ENDPOINT: traces are recorded and sent there; unset, none are. */
  otlpEndpoint?: string;
  /** `path`: where the Swagger UI is served (default `docs`). */
  swagger?: { title: string; description: string; path?: string };
  directRoutes?: (context: DirectRouteContext) => DirectRoute[];
  /** For a path no route serves: a sentence naming the service that does serve it, if one does. */
  notFoundHint?: (path: string) => string | undefined;
}

/**
 * Builds and starts one service's HTTP app with the cross-cutting pieces every service
 * shares: request ids, JSON parsing with a size limit, the error body, validation, Swagger.
 */
export async function startHttpApp(rootModule: Type | DynamicModule, options: HttpAppOptions): Promise<INestApplication> {
  startTracing(`igw-${options.name}`, options.otlpEndpoint);
  const app = await NestFactory.create<NestExpressApplication>(rootModule, {
    bodyParser: false,
    logger: serviceLogger(options.logLevel, options.logFormat),
  });
  app.disable('x-powered-by');
  app.set('etag', false);
  const adapterMiddleware = mountedMiddleware(app);
  const limitBytes = bodyLimitBytes(options.bodyLimit);
  // The body is read by an interceptor, after the route's guards: no body is read before its credential is checked.
  const readJson = new JsonBodyInterceptor(limitBytes);
  const exceptionFilter = new AllExceptionsFilter(routeNotFoundMessage(options.name, options.swagger && (options.swagger.path ?? 'docs'), options.notFoundHint));
  const validationPipe = appValidationPipe();
  app.use(requestIdMiddleware);
  app.useGlobalInterceptors(readJson);
  app.useGlobalFilters(exceptionFilter);
  app.useGlobalPipes(validationPipe);
  // What every direct route does in its own way (request id, JSON body, error body, validation).
  const sharedPieces = [...adapterMiddleware, requestIdMiddleware, readJson, exceptionFilter, validationPipe];
  const directRoutes = options.directRoutes?.({ app, bodyLimitBytes: limitBytes }) ?? [];
  if (options.swagger) setUpSwagger(app, options.swagger);
  try {
    // Module middleware is mounted by init: only then can the direct routes be checked, before any request.
    await app.init();
    for (const route of directRoutes) refuseSkippedEnhancers(app, { ...route, runs: [...sharedPieces, ...route.runs] });
    const observe = requestObserver(options.name, options.trustedProxies);
    serveRequests(app, observe, directRoutes);
    installHttpDrain(app, observe);
    if (options.listen === false) return app;
    await app.listen(options.port, options.host);
  } catch (error) {
    // A failed start (port in use, a bootstrap hook refusing bad data) must not leave the
    // app's database and queue connections behind.
    await app.close().catch(() => undefined);
    const code = (error as { code?: string }).code;
    if (code === 'EADDRINUSE') {
      throw new Error(
        `The ${options.name} cannot listen on ${options.host}:${options.port} because another program already uses that port: stop it, or set ${options.portVariable} to a free port.`,
        { cause: error },
      );
    }
    if (code === 'EACCES') {
      throw new Error(`The ${options.name} may not listen on ${options.host}:${options.port} (permission denied): set ${options.portVariable} to a port above 1023.`, { cause: error });
    }
    throw error;
  }
  new Logger(options.name).log(`listening on ${await app.getUrl()}`);
  return app;
}

type RequestHandler = (request: ServedRequest, response: ServerResponse) => void;

/** How each app's server hands a request on, after observing it; `mountOnApp` changes it. */
const dispatchOfServer = new WeakMap<Server, { dispatch: RequestHandler }>();

/**
 * Node's server observes each request (its context, and its metrics and access-log line when it
 * is over), then hands it to the direct routes first, then to Express.
 */
function serveRequests(app: NestExpressApplication, observe: RequestHandler, routes: DirectRoute[]): void {
  const server = app.getHttpServer() as Server;
  const express = app.getHttpAdapter().getInstance() as RequestHandler;
  if (server.listeners('request').length !== 1) throw new Error('the app expects Express to be the only request listener');
  server.removeAllListeners('request');
  const state = {
    dispatch:
      routes.length === 0
        ? express
        : (request: ServedRequest, response: ServerResponse) => {
            for (const route of routes) {
              if (route.serve(request, response)) {
                request.context!.route = route.paths[0];
                return;
              }
            }
            express(request, response);
          },
  };
  dispatchOfServer.set(server, state);
  server.on('request', (request: ServedRequest, response: ServerResponse) => {
    observe(request, response);
    state.dispatch(request, response);
  });
}

/**
 * Serves the requests whose path starts with one of `prefixes` on `host`'s port with `guest`
 * (started with `listen: false`), the rest with `host` as before: two apps of one process
 * behind one port. The host's server observes them all.
 */
export function mountOnApp(host: INestApplication, guest: INestApplication, prefixes: readonly string[]): void {
  const state = dispatchOfServer.get(host.getHttpServer() as Server);
  if (!state) throw new Error('mountOnApp needs a host started with startHttpApp');
  const guestHandler = guest.getHttpAdapter().getInstance() as RequestHandler;
  const hostDispatch = state.dispatch;
  state.dispatch = (request, response) => {
    const url = request.url ?? '/';
    if (prefixes.some((prefix) => url === prefix || url.startsWith(prefix.endsWith('/') ? prefix : `${prefix}/`) || url.startsWith(`${prefix}?`))) {
      guestHandler(request, response);
      return;
    }
    hostDispatch(request, response);
  };
}
