// Anthropic Messages API wire format: `POST /v1/messages`, key in `x-api-key`, errors as
// `{type: 'error', error: {type, message}}` with Anthropic's error types. It claims only
// the /v1/messages paths (OpenAI has none), so it sits before the OpenAI fallback.
import type { IncomingMessage } from 'node:http';
import type { ErrorResponse, RouterFailure, WireFormat } from '../format';
import { countTokens, createMessage } from './messages';

export interface AnthropicErrorBody {
  type: 'error';
  error: { type: string; message: string };
}

/** Anthropic's error `type` for an HTTP status. */
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
    case 529:
      return 'overloaded_error';
    default:
      return status >= 500 ? 'api_error' : 'invalid_request_error';
  }
}

const MESSAGES_PATH = '/v1/messages';

export const anthropicFormat: WireFormat = {
  name: 'anthropic',

  routes: [
    { method: 'POST', path: MESSAGES_PATH, handle: createMessage },
    { method: 'POST', path: `${MESSAGES_PATH}/count_tokens`, handle: countTokens },
  ],

  ownsPath: (path: string) => path === MESSAGES_PATH || path.startsWith(`${MESSAGES_PATH}/`),

  apiKeyOf(req: IncomingMessage): string | undefined {
    const header = req.headers['x-api-key'];
    const key = Array.isArray(header) ? header[0] : header;
    return key?.trim();
  },

  errorBody(status: number, message: string): AnthropicErrorBody {
    return { type: 'error', error: { type: anthropicErrorType(status), message } };
  },

  describeFailure(failure: RouterFailure): ErrorResponse {
    switch (failure.kind) {
      case 'not_found':
        return { status: 404, message: `Not found: ${failure.method} ${failure.path}` };
      case 'invalid_json':
        return { status: 400, message: 'The request body is not valid JSON.' };
      case 'body_too_large':
        return { status: 413, message: `Request exceeds the maximum allowed number of bytes (${failure.limitBytes}).` };
      case 'missing_api_key':
        return { status: 401, message: 'x-api-key header is required' };
      case 'invalid_api_key':
        return { status: 401, message: 'invalid x-api-key' };
      case 'emulated':
        return {
          status: failure.status,
          message: failure.status === 529 ? 'Overloaded' : `Emulated error: HTTP ${failure.status} requested by x-emulator-status.`,
        };
      case 'internal':
        return { status: 500, message: 'Internal server error' };
    }
  },
};
