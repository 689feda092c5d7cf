// The chat fast path: POST /v1/chat/completions served straight from Node's server, outside
// Express and Nest, with the pipeline's steps called by hand (it carries nearly all chat traffic).
// To extend the service, register guards, interceptors, pipes, filters and middleware on the
// app as usual: the gateway then refuses to start, naming each one the direct routes would skip,
// until you set DIRECT_ROUTES=false or call it in `respond` below and list it in `runs`.
import { JsonSource, validateChatBody } from '@igw/contracts';
import { ApiKeyAuthenticator, apiKeyRequirementsOf, ApiKeyGuard, claimsJsonRequest, jsonDirectRoute, type DirectRoute, type DirectRouteContext, type ServedRequest } from '@igw/platform';
import { respondToChat } from './chat-responder';
import { ChatController } from './chat.controller';
import { ChatService } from './chat.service';

const CHAT_PATHS = ['/v1/chat/completions', '/chat/completions'];

/**
 * `POST /v1/chat/completions` (and `/chat/completions`) served straight from Node's server:
 * Express routing, body-parser and Nest's per-request pipeline cost about a fifth of a chat
 * request's CPU. The steps are the pipeline's, in its order and with its pieces (see
 * jsonDirectRoute): request id, API key, JSON body, the chat body's validation (ChatBody's
 * pipe), the controller's responder, the exception filter's error body. Requests this route
 * is not sure about (another content type or encoding, no content-length, a body over the
 * limit) go to Express untouched, where `ChatController` serves them the same way. Unlike the
 * other direct routes (controllerDirectRoute), it hands the client's own text of `messages` on,
 * which the controller's parameters cannot carry.
 *
 * An enhancer added to the app is refused at start rather than run here: running Nest's
 * guards, interceptors (an Observable chain), filters and pipes by hand would rebuild the
 * pipeline this route exists to skip, and any way it differed from Nest's would go unnoticed.
 * A refusal names the enhancer and costs one setting (DIRECT_ROUTES=false) to resolve.
 */
export function chatDirectRoute({ app, bodyLimitBytes }: DirectRouteContext, turnOff: string): DirectRoute {
  const chat = app.get(ChatService);
  return jsonDirectRoute({
    name: 'The chat fast path',
    turnOff,
    paths: CHAT_PATHS,
    handler: { controller: ChatController, method: 'create' },
    // authenticateRequest is ApiKeyGuard's own check.
    runs: [ApiKeyGuard],
    bodyLimitBytes,
    apiKey: { authenticator: app.get(ApiKeyAuthenticator), requirements: apiKeyRequirementsOf(ChatController, 'create') },
    async respond(raw, request, response) {
      const body = await validateChatBody(raw.parsed, { azure: false });
      // A long conversation goes upstream as the client wrote it when nothing in it changed.
      await respondToChat(chat, body, request, response, JsonSource.ofMember(raw, 'messages'));
    },
  });
}

/** The requests the chat route serves; it has read nothing of any other. Exported for its tests. */
export function claimsChatRequest(request: Pick<ServedRequest, 'method' | 'url' | 'headers'>, bodyLimitBytes: number): boolean {
  return claimsJsonRequest(request, CHAT_PATH_SET, bodyLimitBytes);
}

const CHAT_PATH_SET: ReadonlySet<string> = new Set(CHAT_PATHS);
