import { ArgumentsHost, Catch, HttpException, HttpStatus, Logger, NotFoundException, type ExceptionFilter } from '@nestjs/common';
import { ErrorMessages, type ErrorBodyDto } from '@igw/contracts';
import type { ServerResponse } from 'node:http';
import { sendJson } from '../json-response';
import type { ServedRequest } from '../request-context';
import { buildErrorBody } from './error-body';
import { GatewayException } from './gateway.exception';

/**
 * The last word on every error: renders the spec's error body, never a stack trace.
 * Unexpected errors are logged with their request id so support can find them.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  constructor(private readonly routeNotFound: RouteNotFoundMessage) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    const request = http.getRequest<ServedRequest>();
    // Express's "Cannot GET /x" becomes the service's own 404, naming where the path is served.
    const error = isRouteNotFound(exception) ? new GatewayException(HttpStatus.NOT_FOUND, this.routeNotFound(request)) : exception;
    sendErrorResponse(request, http.getResponse<ServerResponse>(), error);
  }
}

/** The 404 message for a path no route of the service serves (naming where the caller may have meant to go). */
export type RouteNotFoundMessage = (request: Pick<ServedRequest, 'method' | 'url'>) => string;

const SHOWN_PATH_CHARACTERS = 120;

/**
 * `Not Found: GET /x is not an endpoint of the gateway service; ...`: the method and path (without its
 * query, shortened) and where the service's endpoints are listed (`docsPath`, when it has a
 * Swagger UI), then `hint(path)` if it has one.
 */
export function routeNotFoundMessage(service: string, docsPath: string | undefined, hint: (path: string) => string | undefined = () => undefined): RouteNotFoundMessage {
  return ({ method, url }) => {
    const path = (url ?? '/').split('?', 1)[0];
    const shown = path.length > SHOWN_PATH_CHARACTERS ? `${path.slice(0, SHOWN_PATH_CHARACTERS)}...` : path;
    const extra = hint(path);
    const listed = docsPath === undefined ? '' : `; its Swagger UI at /${docsPath} lists them`;
    return `${ErrorMessages.notFound}: ${method} ${shown} is not an endpoint of the ${service} service${listed}.${extra ? ` ${extra}` : ''}`;
  };
}

function isRouteNotFound(exception: unknown): boolean {
  return exception instanceof NotFoundException && /^Cannot [A-Z]+ /.test(exception.message);
}

const logger = new Logger('Errors');

/**
 * Renders any error as the spec's error body: the global filter's way, and the direct routes'.
 * A route that speaks another API's error shape (the Messages API) reshapes the body with `shape`.
 */
export function sendErrorResponse(request: ServedRequest, response: ServerResponse, exception: unknown, shape?: (body: ErrorBodyDto) => object): void {
  const { status, message } = describeException(exception);
  if (request.context) request.context.error = message;
  if (status >= 500) {
    const line = `${request.method} ${request.originalUrl ?? request.url} -> ${status} [${request.context?.requestId}]`;
    // A 5xx the gateway means (an upstream down, a provider not configured) is one line for the
    // operator, with its cause; anything else is a fault, logged with its stack.
    if (exception instanceof GatewayException) logger.warn(`${line}: ${message}${causeOf(exception)}`);
    else logger.error(`${line}: ${exception instanceof Error ? (exception.stack ?? exception.message) : String(exception)}`);
  }
  if (response.headersSent) {
    // A stream already started: the status can't change any more, so end it.
    response.end();
    return;
  }
  if (exception instanceof GatewayException) {
    for (const [name, value] of Object.entries(exception.headers)) response.setHeader(name, value);
  }
  const body = buildErrorBody(request, status, message);
  sendJson(response, status, shape ? shape(body) : body);
}

function causeOf(exception: Error): string {
  const { cause } = exception;
  if (cause === undefined) return '';
  return ` (cause: ${cause instanceof Error ? cause.message : String(cause)})`;
}

function describeException(exception: unknown): { status: number; message: string } {
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    // Nest's own 5xx messages may carry internals; ours (GatewayException) are written for clients.
    const message = status >= 500 && !(exception instanceof GatewayException) ? ErrorMessages.internal : messageOf(exception);
    return { status, message };
  }
  return { status: HttpStatus.INTERNAL_SERVER_ERROR, message: ErrorMessages.internal };
}

function messageOf(exception: HttpException): string {
  const body = exception.getResponse();
  if (typeof body === 'string') return body;
  const message = (body as { message?: unknown }).message;
  if (Array.isArray(message)) return message.join('; ');
  if (typeof message === 'string') return message;
  return exception.message;
}

/**
 * Every error of a route (guards, body reading and validation included) as sendErrorResponse
 * renders it, in the error shape of the API the route speaks (Anthropic's, Google's): a front
 * names its shape, and documents it with ApiErrorResponses' same `shape`.
 */
@Catch()
export abstract class ShapedErrorFilter implements ExceptionFilter {
  protected abstract shape(body: ErrorBodyDto): object;

  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendErrorResponse(http.getRequest<ServedRequest>(), http.getResponse<ServerResponse>(), exception, (body) => this.shape(body));
  }
}
