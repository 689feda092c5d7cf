import type { CallOptions, ChatAdapter, ProviderTarget, UpstreamChatCompletion, UpstreamChatRequest } from '../provider.types';
import type { ChunkStream } from '../transport/chunk-stream';
import { UpstreamUnavailableError } from '../upstream.errors';

/** Amazon Bedrock: Anthropic's models through InvokeModel (the Messages body), every other family through Converse. */
export class BedrockChatAdapter implements ChatAdapter {
  async chat(target: ProviderTarget, _request: UpstreamChatRequest, _options: CallOptions): Promise<UpstreamChatCompletion> {
    throw new UpstreamUnavailableError(target.provider, 'Bedrock chat is not built yet');
  }

  async stream(target: ProviderTarget, _request: UpstreamChatRequest, _options: CallOptions): Promise<ChunkStream> {
    throw new UpstreamUnavailableError(target.provider, 'Bedrock chat is not built yet');
  }
}
