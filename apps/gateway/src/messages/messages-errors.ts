import type { ErrorBodyDto } from '@igw/contracts';
import { ApiErrorResponses, ShapedErrorFilter, type ErrorResponses } from '@igw/http';

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

/** Every error of the Messages routes in Anthropic's shape. */
export class MessagesErrorFilter extends ShapedErrorFilter {
  protected shape(body: ErrorBodyDto): object {
    return anthropicErrorBody(body);
  }
}

/** Documents the error statuses of a Messages route, each example in Anthropic's shape. Listed above RequireApiKey, its 401 and 403 replace the key's own. */
export const MessagesErrorResponses = (errors: ErrorResponses) => ApiErrorResponses(errors, anthropicErrorBody);
