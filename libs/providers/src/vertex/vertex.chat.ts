import type { CallOptions, ChatAdapter, ProviderTarget, UpstreamChatCompletion, UpstreamChatRequest } from '../provider.types';
import type { ChunkStream } from '../transport/chunk-stream';
import { UpstreamUnavailableError } from '../upstream.errors';

/** Vertex AI: Gemini through generateContent, Claude through rawPredict (the Messages body), partner models through its OpenAI-compatible endpoint. */
export class VertexChatAdapter implements ChatAdapter {
  async chat(target: ProviderTarget, _request: UpstreamChatRequest, _options: CallOptions): Promise<UpstreamChatCompletion> {
    throw new UpstreamUnavailableError(target.provider, 'Vertex AI chat is not built yet');
  }

  async stream(target: ProviderTarget, _request: UpstreamChatRequest, _options: CallOptions): Promise<ChunkStream> {
    throw new UpstreamUnavailableError(target.provider, 'Vertex AI chat is not built yet');
  }
}
