import type { MessagesBody, MessagesWire } from '../anthropic/messages-call';
import type { ProviderTarget } from '../provider.types';
import { vertexModelUrl } from './vertex.urls';

/** The Messages API version Vertex AI's Claude models take in the body, in place of the `anthropic-version` header. */
export const VERTEX_ANTHROPIC_VERSION = 'vertex-2023-10-16';

/** rawPredict / streamRawPredict with the Messages body (`anthropic_version: vertex-2023-10-16`, no `model`). */
export function vertexMessagesCall(target: ProviderTarget, messages: MessagesBody): MessagesWire {
  const { model: _model, ...body } = messages.body as Record<string, unknown>;
  const headers: Record<string, string> = {};
  // Vertex AI passes Anthropic's beta features on from the same header.
  if (messages.beta !== undefined) headers['anthropic-beta'] = messages.beta;
  return {
    url: vertexModelUrl(target, 'anthropic', messages.stream ? 'streamRawPredict' : 'rawPredict'),
    headers,
    body: { anthropic_version: VERTEX_ANTHROPIC_VERSION, ...body, stream: messages.stream },
  };
}
