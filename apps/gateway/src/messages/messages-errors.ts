import { applyDecorators, Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ErrorBodyDto } from '@igw/contracts';
import { errorBodyExample, sendErrorResponse, type ErrorResponses, type ServedRequest } from '@igw/platform';
import type { ServerResponse } from 'node:http';

/** Anthropic's error type for an HTTP status, as its SDKs and Claude Code read it. */
export function anthropicErrorType(status: number): string {
  switch (status) {
    case 400:
      return 'invalid_request_error';
    case 401:
      return 'authentication_error';
    case 403:
      return 'permission_error';
    case 404:
      return 'not_found_error';
    case 413:
      return 'request_too_large';
    case 429:
      return 'rate_limit_error';
    case 503:
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

/**
 * The spec's error body in Anthropic's shape: `{type: 'error', error: {type, message}}`, with
 * the spec's own fields kept beside them (and Anthropic's `request_id`).
 */
export function anthropicErrorBody(body: ErrorBodyDto): object {
  const { error: _openAiDetail, ...specFields } = body;
  return { type: 'error', error: { type: anthropicErrorType(body.statusCode), message: body.message }, request_id: body.requestId, ...specFields };
}

/** Every error of the Messages routes (guards, body reading and validation included) in Anthropic's shape. */
@Catch()
export class MessagesErrorFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendErrorResponse(http.getRequest<ServedRequest>(), http.getResponse<ServerResponse>(), exception, anthropicErrorBody);
  }
}

/**
 * Documents the error statuses of a Messages route as ApiErrorResponses does, each example in
 * the shape this route sends. Listed above RequireApiKey, its 401 and 403 replace the key's own.
 */
export function MessagesErrorResponses(errors: ErrorResponses) {
  const example = (statusCode: number, message: string) => anthropicErrorBody(errorBodyExample(statusCode, message));
  return applyDecorators(
    ApiExtraModels(ErrorBodyDto),
    ...Object.entries(errors).map(([status, { description, messages }]) => {
      const statusCode = Number(status);
      const schema = { $ref: getSchemaPath(ErrorBodyDto) };
      if (typeof messages === 'string') return ApiResponse({ status: statusCode, description, schema, example: example(statusCode, messages) });
      const examples = Object.fromEntries(Object.entries(messages).map(([name, message]) => [name, { summary: message, value: example(statusCode, message) }]));
      return ApiResponse({ status: statusCode, description, schema, examples });
    }),
  );
}
