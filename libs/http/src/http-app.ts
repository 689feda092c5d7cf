import type { Server, ServerResponse } from 'node:http';
import { Logger, type DynamicModule, type INestApplication, type LogLevel, type Type } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { appValidationPipe } from '@igw/validation';
import { AllExceptionsFilter, routeNotFoundMessage } from './errors/all-exceptions.filter';
import { bodyLimitBytes, JsonBodyGuard } from './body-parsing';
import { discoverDirectRoutes, type NodeRoute } from './controller-direct-route';
import { installHttpDrain } from './http-drain';
import { requestIdMiddleware, type ServedRequest } from './request-context';
import { requestObserver } from './request-observer';
import { startTracing, serviceLogger, type LogFormat } from '@igw/observability';
import { setUpSwagger } from './swagger';

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
  /**
   * The setting that turns the direct routes off (e.g. `DIRECT_ROUTES=false`), named when one
   * cannot be served; unset, every route is served through Express (see DirectRoute).
   */
  directRoutes?: { turnOff: string };
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
  const limitBytes = bodyLimitBytes(options.bodyLimit);
  app.use(requestIdMiddleware);
  app.useGlobalGuards(new JsonBodyGuard(limitBytes));
  app.useGlobalFilters(new AllExceptionsFilter(routeNotFoundMessage(options.name, options.swagger && (options.swagger.path ?? 'docs'), options.notFoundHint)));
  app.useGlobalPipes(appValidationPipe());
  if (options.swagger) setUpSwagger(app, options.swagger);
  try {
    await app.init();
    const directRoutes = options.directRoutes ? discoverDirectRoutes(app, { bodyLimitBytes: limitBytes, turnOff: options.directRoutes.turnOff }) : [];
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
function serveRequests(app: NestExpressApplication, observe: RequestHandler, routes: NodeRoute[]): void {
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
