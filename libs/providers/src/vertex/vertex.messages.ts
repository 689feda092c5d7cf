import type { MessagesBody, MessagesWire } from '../anthropic/messages-call';
import type { ProviderTarget } from '../provider.types';

/** rawPredict / streamRawPredict with the Messages body (`anthropic_version: vertex-2023-10-16`, no `model`). */
export function vertexMessagesCall(_target: ProviderTarget, _messages: MessagesBody): MessagesWire {
  throw new Error('Vertex AI rawPredict is not built yet');
}
