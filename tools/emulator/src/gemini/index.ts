// Google Gemini API wire format (generativelanguage.googleapis.com, v1beta): routes
// `POST /v1beta/models/{model}:generateContent` and `:streamGenerateContent?alt=sse`,
// `:embedContent` and `:batchEmbedContents` (embed.ts),
// the key in `x-goog-api-key` (or `?key=`), errors as `{error: {code, message, status}}`
// with the google.rpc status name. Replies: see generate.ts.
import type { IncomingMessage } from 'node:http';
import type { ErrorResponse, RouterFailure, WireFormat } from '../format';
import { batchEmbedContents, embedContent } from './embed';
import { generateContent, streamGenerateContent } from './generate';

export interface GeminiErrorBody {
  error: { code: number; message: string; status: string };
}

const RPC_STATUS: Readonly<Record<number, string>> = {
  400: 'INVALID_ARGUMENT',
  401: 'UNAUTHENTICATED',
  403: 'PERMISSION_DENIED',
  404: 'NOT_FOUND',
  409: 'ABORTED',
  413: 'INVALID_ARGUMENT',
  429: 'RESOURCE_EXHAUSTED',
  499: 'CANCELLED',
  500: 'INTERNAL',
  501: 'UNIMPLEMENTED',
  503: 'UNAVAILABLE',
  504: 'DEADLINE_EXCEEDED',
};

/** The google.rpc status name Google pairs with an HTTP status. */
export function geminiRpcStatus(status: number): string {
  return RPC_STATUS[status] ?? (status >= 500 ? 'UNKNOWN' : 'FAILED_PRECONDITION');
}

export const geminiFormat: WireFormat = {
  name: 'gemini',

  routes: [
    { method: 'POST', path: /^\/v1beta\/models\/([^/:]+):generateContent$/, handle: generateContent },
    { method: 'POST', path: /^\/v1beta\/models\/([^/:]+):streamGenerateContent$/, handle: streamGenerateContent },
    { method: 'POST', path: /^\/v1beta\/models\/([^/:]+):embedContent$/, handle: embedContent },
    { method: 'POST', path: /^\/v1beta\/models\/([^/:]+):batchEmbedContents$/, handle: batchEmbedContents },
  ],

  ownsPath: (path: string) => path.startsWith('/v1beta/'),

  apiKeyOf(req: IncomingMessage): string | undefined {
    const header = req.headers['x-goog-api-key'];
    if (typeof header === 'string' && header !== '') return header.trim();
    const url = req.url ?? '';
    const query = url.indexOf('?');
    return query === -1 ? undefined : (new URLSearchParams(url.slice(query + 1)).get('key') ?? undefined);
  },

  errorBody(status: number, message: string): GeminiErrorBody {
    return { error: { code: status, message, status: geminiRpcStatus(status) } };
  },

  describeFailure(failure: RouterFailure): ErrorResponse {
    switch (failure.kind) {
      case 'not_found':
        return { status: 404, message: `The requested URL ${failure.path} was not found on this server (${failure.method}).` };
      case 'invalid_json':
        return { status: 400, message: 'Invalid JSON payload received. The request body is not valid JSON.' };
      case 'body_too_large':
        return { status: 413, message: `Request payload size exceeds the limit: ${failure.limitBytes} bytes.` };
      case 'missing_api_key':
        return { status: 401, message: 'Method doesn\'t allow unregistered callers. Please use an API key (header "x-goog-api-key").' };
      case 'invalid_api_key':
        return { status: 401, message: 'API key not valid. Please pass a valid API key.' };
      case 'emulated':
        return {
          status: failure.status,
          message: `Emulated error: HTTP ${failure.status} requested by ${failure.source === 'model' ? 'the model name (@status=)' : 'x-emulator-status'}.`,
        };
      case 'internal':
        return { status: 500, message: 'An internal error has occurred.' };
    }
  },
};
