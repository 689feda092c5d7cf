import type { ServerResponse } from 'node:http';
import { clientAddressResolver } from '@igw/config';
import { startRequestContext, type ServedRequest } from './request-context';
import { releaseJsonBody } from './body-parsing';
import { installedServiceLogger, httpRequestDuration, httpRequests, modelLabel, NO_LABEL } from '@igw/observability';

/** A request that matched no route: one label for all of them, whatever the path. */
const UNMATCHED_ROUTE = 'unmatched';
/** A client that left before its answer was finished (nginx's code for it). */
const CLIENT_CLOSED_STATUS = 499;

/** Where Swagger UIs of the process are served: their static assets match no route, and are counted under `<path>/*`. */
const swaggerUiPaths = new Set<string>();

/** Counts the requests under a Swagger UI's path (its page, script and style files) as that UI's, not as unmatched. */
export function observeSwaggerUi(path: string): void {
  swaggerUiPaths.add(`/${path.replace(/^\/+|\/+$/g, '')}`);
}

function unmatchedRoute(url: string | undefined): string {
  const path = (url ?? '/').split('?', 1)[0];
  for (const ui of swaggerUiPaths) if (path.startsWith(`${ui}/`)) return `${ui}/*`;
  return UNMATCHED_ROUTE;
}

interface ObservedResponse extends ServerResponse {
  req: ServedRequest & { route?: { path?: unknown } };
}

/**
 * What a server runs first for each request: starts its context (its id, the client's id, when
 * it arrived) and, when it is over, counts it and writes its access-log line (with the client's
 * address as TRUSTED_PROXIES resolves it). Installed ahead
 * of Express and of the direct routes, so every request is seen the same way however it is
 * served. The listener is one per server, not a closure per request.
 */
export function requestObserver(service: string, trustedProxies?: string): (request: ServedRequest, response: ServerResponse) => void {
  const clientAddressOf = clientAddressResolver(trustedProxies);
  function recordRequest(this: ObservedResponse): void {
    const request = this.req;
    releaseJsonBody(request);
    const context = request.context;
    if (!context) return;
    const route = context.route ?? (typeof request.route?.path === 'string' ? request.route.path : unmatchedRoute(request.originalUrl ?? request.url));
    const status = this.writableFinished ? this.statusCode : CLIENT_CLOSED_STATUS;
    const seconds = context.startedAt === undefined ? 0 : (performance.now() - context.startedAt) / 1000;
    const model = context.model === undefined ? NO_LABEL : modelLabel(context.model);
    httpRequests.inc(httpRequests.series(service, route, request.method ?? 'OTHER', String(status), model, context.provider ?? NO_LABEL));
    httpRequestDuration.observe(httpRequestDuration.series(service, route), seconds);
    const logger = installedServiceLogger();
    if (!logger?.accessLogged()) return;
    logger.access({
      requestId: context.requestId,
      clientRequestId: context.clientRequestId,
      service,
      method: request.method ?? '',
      route,
      status,
      durationMs: Math.round(seconds * 10_000) / 10,
      clientAddress: clientAddressOf(request),
      keyPrefix: context.auth?.keyPrefix,
      model: context.model ?? context.requestedModel,
      provider: context.provider,
      deployment: context.deployment,
      inputTokens: context.inputTokens,
      outputTokens: context.outputTokens,
      credits: context.credits,
      prompt: context.prompt,
      error: context.error,
    });
  }
  return (request, response) => {
    startRequestContext(request, response);
    // A response closes once, finished or not: \`on\` spares the wrapper \`once\` would make.
    response.on('close', recordRequest);
  };
}
