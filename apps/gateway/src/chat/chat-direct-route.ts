// The chat fast path: POST /v1/chat/completions served straight from Node's server, outside
// Express and Nest, with the pipeline's steps called by hand (it carries nearly all chat traffic).
// To extend the service, register guards, interceptors, pipes, filters and middleware on the
// app as usual: the gateway then refuses to start, naming each one the fast path would skip,
// until you set CHAT_FAST_PATH=false or call it in serveChat below and list it in `runs`.
import type { ServerResponse } from 'node:http';
import { JsonSource, validateChatBody } from '@igw/contracts';
import {
  ApiKeyAuthenticator,
  ApiKeyGuard,
  authenticateRequest,
  readJsonBody,
  sendErrorResponse,
  startRequestContext,
  type DirectRoute,
  type DirectRouteContext,
  type ServedRequest,
} from '@igw/platform';
import { respondToChat } from './chat-responder';
import { ChatController } from './chat.controller';
import { ChatService } from './chat.service';

const CHAT_PATHS = new Set(['/v1/chat/completions', '/chat/completions']);
const JSON_UTF8 = /^application\/json\s*;\s*charset="?utf-8"?$/i;

/**
 * `POST /v1/chat/completions` (and `/chat/completions`) served straight from Node's server:
 * Express routing, body-parser and Nest's per-request pipeline cost about a fifth of a chat
 * request's CPU. The steps are the pipeline's, in its order and with its pieces: request id,
 * API key, JSON body (body-parser's strict parse and messages), the chat body's validation,
 * the controller's responder, the exception filter's error body. Requests this route is not
 * sure about (another content type or encoding, no content-length, a body over the limit)
 * go to Express untouched, where `ChatController` serves them the same way.
 *
 * An enhancer added to the app is refused at start rather than run here: running Nest's
 * guards, interceptors (an Observable chain), filters and pipes by hand would rebuild the
 * pipeline this route exists to skip, and any way it differed from Nest's would go unnoticed.
 * A refusal names the enhancer and costs one setting (CHAT_FAST_PATH=false) to resolve.
 */
export function chatDirectRoute({ app, bodyLimitBytes }: DirectRouteContext): DirectRoute {
  const chat = app.get(ChatService);
  const authenticator = app.get(ApiKeyAuthenticator);

  async function serveChat(request: ServedRequest, response: ServerResponse): Promise<void> {
    const context = startRequestContext(request, response);
    try {
      // The key first, from the headers: a caller without one gets its 401 before the body is read.
      context.auth = await authenticateRequest(authenticator, request, { credits: true });
      const raw = await readJsonBody(request);
      const body = await validateChatBody(raw.parsed, { azure: false });
      // A long conversation goes upstream as the client wrote it when nothing in it changed.
      await respondToChat(chat, body, request, response, JsonSource.ofMember(raw, 'messages'));
    } catch (error) {
      sendErrorResponse(request, response, error);
    }
  }

  return {
    name: 'The chat fast path',
    turnOff: 'CHAT_FAST_PATH=false',
    method: 'POST',
    paths: [...CHAT_PATHS],
    handler: { controller: ChatController, method: 'create' },
    // authenticateRequest is ApiKeyGuard's own check.
    runs: [ApiKeyGuard],
    serve(request, response) {
      if (!claimsChatRequest(request, bodyLimitBytes)) return false;
      void serveChat(request, response);
      return true;
    },
  };
}

/** The requests the direct route serves; it has read nothing of any other. Exported for its tests. */
export function claimsChatRequest(request: Pick<ServedRequest, 'method' | 'url' | 'headers'>, bodyLimitBytes: number): boolean {
  if (request.method !== 'POST') return false;
  const url = request.url ?? '';
  const queryAt = url.indexOf('?');
  if (!CHAT_PATHS.has(queryAt === -1 ? url : url.slice(0, queryAt))) return false;
  const { headers } = request;
  const type = headers['content-type'];
  if (type !== 'application/json' && !(type && JSON_UTF8.test(type))) return false;
  const encoding = headers['content-encoding'];
  if (encoding !== undefined && encoding.toLowerCase() !== 'identity') return false;
  if (headers['transfer-encoding'] !== undefined || headers['content-length'] === undefined) return false;
  const length = Number(headers['content-length']);
  return Number.isSafeInteger(length) && length <= bodyLimitBytes;
}
