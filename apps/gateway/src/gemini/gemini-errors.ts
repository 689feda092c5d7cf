import { applyDecorators, Catch, type ArgumentsHost, type ExceptionFilter } from '@nestjs/common';
import { ApiExtraModels, ApiResponse, getSchemaPath } from '@nestjs/swagger';
import { ErrorBodyDto } from '@igw/contracts';
import { errorBodyExample, sendErrorResponse, type ErrorResponses, type ServedRequest } from '@igw/platform';
import type { ServerResponse } from 'node:http';

/** The google.rpc status name Google pairs with an HTTP status, as its SDKs and the Gemini CLI read it. */
export function googleRpcStatus(status: number): string {
  switch (status) {
    case 400:
    case 413:
    case 422:
      return 'INVALID_ARGUMENT';
    case 401:
      return 'UNAUTHENTICATED';
    case 402:
    case 403:
      return 'PERMISSION_DENIED';
    case 404:
      return 'NOT_FOUND';
    case 409:
      return 'ABORTED';
    case 429:
      return 'RESOURCE_EXHAUSTED';
    case 499:
      return 'CANCELLED';
    case 501:
      return 'UNIMPLEMENTED';
    case 503:
    case 529:
      return 'UNAVAILABLE';
    case 504:
      return 'DEADLINE_EXCEEDED';
    default:
      return status >= 500 ? 'INTERNAL' : 'FAILED_PRECONDITION';
  }
}

/**
 * The spec's error body in Google's shape: `{error: {code, message, status}}`, with the spec's
 * own fields kept beside it. Its OpenAI-shaped detail (type, code, param) gives way to Google's
 * and is kept as the error's google.rpc ErrorInfo detail, as Google words a reason.
 */
export function googleErrorBody(body: ErrorBodyDto): object {
  const { error: detail, ...specFields } = body;
  const error: Record<string, unknown> = { code: body.statusCode, message: body.message, status: googleRpcStatus(body.statusCode) };
  if (detail !== undefined) {
    const metadata: Record<string, string> = { type: detail.type };
    if (detail.param) metadata.param = detail.param;
    error.details = [{ '@type': 'type.googleapis.com/google.rpc.ErrorInfo', reason: (detail.code ?? detail.type).toUpperCase(), domain: 'inference-gateway', metadata }];
  }
  return { error, ...specFields };
}

/** Every error of the Gemini routes (guards, body reading and validation included) in Google's shape. */
@Catch()
export class GeminiErrorFilter implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendErrorResponse(http.getRequest<ServedRequest>(), http.getResponse<ServerResponse>(), exception, googleErrorBody);
  }
}

/**
 * Documents the error statuses of a Gemini route as ApiErrorResponses does, each example in
 * Google's shape. Listed above RequireApiKey, its 401 and 403 replace the key's own.
 */
export function GeminiErrorResponses(errors: ErrorResponses) {
  const example = (statusCode: number, message: string) => googleErrorBody(errorBodyExample(statusCode, message));
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
