import type { ErrorBodyDto } from '@igw/contracts';
import { ApiErrorResponses, ShapedErrorFilter, type ErrorResponses } from '@igw/http';

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

/** Every error of the Gemini routes in Google's shape. */
export class GeminiErrorFilter extends ShapedErrorFilter {
  protected shape(body: ErrorBodyDto): object {
    return googleErrorBody(body);
  }
}

/** Documents the error statuses of a Gemini route, each example in Google's shape. Listed above RequireApiKey, its 401 and 403 replace the key's own. */
export const GeminiErrorResponses = (errors: ErrorResponses) => ApiErrorResponses(errors, googleErrorBody);
