import type { ServerResponse } from 'node:http';
import { authenticateRequest, type ApiKeyRequirements } from '../auth/api-key.guard';
import type { ApiKeyAuthenticator } from '../auth/api-key-authenticator';
import { sendErrorResponse } from '../errors/all-exceptions.filter';
import { readJsonBody, type JsonBody } from './body-parsing';
import type { DirectRouteCoverage } from './direct-route-coverage';
import type { DirectRoute } from './http-app';
import { startRequestContext, type ServedRequest } from './request-context';

export interface JsonDirectRouteOptions extends Omit<DirectRouteCoverage, 'method'> {
  bodyLimitBytes: number;
  /** The route's key check (its ApiKeyGuard's requirements), made from the headers before the body is read; none without a guard. */
  apiKey?: { authenticator: ApiKeyAuthenticator; requirements: ApiKeyRequirements };
  /** Validates the body as the route's pipes would and answers as its controller method does. */
  respond(body: JsonBody, request: ServedRequest, response: ServerResponse): Promise<void>;
  /** Renders any error as the route's exception filter does (default: the app's global filter, sendErrorResponse). */
  sendError?(request: ServedRequest, response: ServerResponse, error: unknown): void;
}

const JSON_UTF8 = /^application\/json\s*;\s*charset="?utf-8"?$/i;

/**
 * A `POST` route with a JSON body served straight from Node's server, with Nest's per-request
 * steps in Nest's order, each by the piece Nest would run: the request id
 * (requestIdMiddleware's startRequestContext), the key from the headers (ApiKeyGuard's
 * authenticateRequest), the body (JsonBodyInterceptor's body-parser settings, readJsonBody),
 * then `respond` (the pipe and the controller's responder), any error rendered as the
 * route's filter renders it. It claims only the requests claimsJsonRequest accepts and leaves
 * every other one, unread, to Express.
 */
export function jsonDirectRoute(options: JsonDirectRouteOptions): DirectRoute {
  const { apiKey, respond, bodyLimitBytes } = options;
  const paths = pathMatcher(options.paths);
  const sendError = options.sendError ?? sendErrorResponse;

  async function serve(request: ServedRequest, response: ServerResponse): Promise<void> {
    const context = startRequestContext(request, response);
    try {
      // The key first, from the headers: a caller without one gets its 401 before the body is read.
      if (apiKey) context.auth = await authenticateRequest(apiKey.authenticator, request, apiKey.requirements);
      await respond(await readJsonBody(request), request, response);
    } catch (error) {
      sendError(request, response, error);
    }
  }

  return {
    name: options.name,
    turnOff: options.turnOff,
    method: 'POST',
    paths: options.paths,
    handler: options.handler,
    runs: options.runs,
    serve(request, response) {
      if (!claimsJsonRequest(request, paths, bodyLimitBytes)) return false;
      void serve(request, response);
      return true;
    },
  };
}

/**
 * The paths a route's list matches: each exactly, or, for a path with Express 5's wildcards
 * (`/v1beta/models/*model\\:generateContent`, a `*name` taking one or more characters, slashes
 * included; `\\:` a literal colon), every path that pattern matches as Express would (case aside).
 */
export function pathMatcher(paths: readonly string[]): ReadonlySet<string> | ((path: string) => boolean) {
  const exact = new Set(paths.filter((path) => !path.includes('*')));
  const patterns = paths.filter((path) => path.includes('*')).map(wildcardPattern);
  if (patterns.length === 0) return exact;
  return (path) => exact.has(path) || patterns.some((pattern) => pattern.test(path));
}

function wildcardPattern(path: string): RegExp {
  if (/(^|[^\\]):[A-Za-z_]|[{}()]/.test(path)) throw new Error(`A direct route's path takes wildcards (*name) only, not parameters or optional parts: ${path}`);
  const source = path
    .split(/(\*[A-Za-z_$][\w$]*)/)
    .map((piece) => (piece.startsWith('*') ? '(.+)' : piece.replace(/\\:/g, ':').replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')))
    .join('');
  return new RegExp(`^${source}$`);
}

/**
 * The requests a JSON direct route serves: `POST` to one of `paths` exactly (any query string;
 * a trailing slash or another case is Express's to judge), a UTF-8 JSON content type, no
 * content encoding, and a content-length within the limit. Every other request (chunked,
 * compressed, another JSON type, too large) goes to Express, which answers it as before.
 */
export function claimsJsonRequest(request: Pick<ServedRequest, 'method' | 'url' | 'headers'>, paths: ReadonlySet<string> | ((path: string) => boolean), bodyLimitBytes: number): boolean {
  if (request.method !== 'POST') return false;
  const url = request.url ?? '';
  const queryAt = url.indexOf('?');
  const path = queryAt === -1 ? url : url.slice(0, queryAt);
  if (typeof paths === 'function' ? !paths(path) : !paths.has(path)) return false;
  const { headers } = request;
  const type = headers['content-type'];
  if (type !== 'application/json' && !(type && JSON_UTF8.test(type))) return false;
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  if (headers['transfer-encoding'] !== undefined || headers['content-length'] === undefined) return false;
  const length = Number(headers['content-length']);
  return Number.isSafeInteger(length) && length <= bodyLimitBytes;
}
