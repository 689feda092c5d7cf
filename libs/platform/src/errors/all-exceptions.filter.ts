import { ArgumentsHost, Catch, HttpException, HttpStatus, Logger, NotFoundException, type ExceptionFilter } from '@nestjs/common';
import { ErrorMessages, type ErrorBodyDto } from '@igw/contracts';
import type { ServerResponse } from 'node:http';
import { sendJson } from '../http/json-response';
import type { ServedRequest } from '../http/request-context';
import { buildErrorBody } from './error-body';
import { GatewayException } from './gateway.exception';

/**
 * The last word on every error: renders the spec's error body, never a stack trace.
 * Unexpected errors are logged with their request id so support can find them.
 */
@Catch()
export class AllExceptionsFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendErrorResponse(http.getRequest<ServedRequest>(), http.getResponse<ServerResponse>(), exception);
  }
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
    const detail = exception instanceof Error ? (exception.stack ?? exception.message) : String(exception);
    logger.error(`${request.method} ${request.originalUrl ?? request.url} -> ${status} [${request.context?.requestId}]: ${detail}`);
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

function describeException(exception: unknown): { status: number; message: string } {
  if (exception instanceof NotFoundException && /^Cannot [A-Z]+ /.test(exception.message)) {
    return { status: HttpStatus.NOT_FOUND, message: ErrorMessages.notFound };
  }
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
