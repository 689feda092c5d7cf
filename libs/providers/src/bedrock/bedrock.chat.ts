import { AnthropicChatAdapter } from '../anthropic/anthropic.chat';
import type { CallOptions, ChatAdapter, ProviderTarget, UpstreamChatCompletion, UpstreamChatRequest } from '../provider.types';
import { openChunkStream, type ChunkStream, type ChunkTranslator, type EmitChunk } from '../transport/chunk-stream';
import { postJson, type JsonRequest } from '../transport/http-client';
import type { SseEvent } from '../transport/sse';
import { UpstreamProtocolError } from '../upstream.errors';
import { ConverseStreamTranslator, fromConverseResponse, isConverseResponse, toConverseRequest } from './bedrock.converse';
import { bedrockWireApi } from '../wire-api';
import { bedrockModelUrl } from './bedrock.messages';

/**
 * Amazon Bedrock: Anthropic's models through InvokeModel (the Messages body, by the Anthropic
 * adapter, whose calls go through messagesCallOf), every other family through Converse.
 */
export class BedrockChatAdapter implements ChatAdapter {
  private readonly anthropic = new AnthropicChatAdapter();

  async chat(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<UpstreamChatCompletion> {
    if (bedrockWireApi(target.model) === 'anthropic-messages') return this.anthropic.chat(target, request, options);
    const answer = await postJson<unknown>(converseCall(target, request, options, false));
    if (!isConverseResponse(answer)) throw new UpstreamProtocolError(target.provider, 'the answer is not a Converse response');
    return fromConverseResponse(answer, target.model);
  }

  /**
   * A Converse stream resolves after its first chunks, as Anthropic's does: a throttling or
   * not-ready exception frame right after the 200 head rejects here, while the caller can
   * still fall back.
   */
  async stream(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<ChunkStream> {
    if (bedrockWireApi(target.model) === 'anthropic-messages') return this.anthropic.stream(target, request, options);
    const call = converseCall(target, request, options, true);
    return openChunkStream(call, new ConverseChunks(new ConverseStreamTranslator(target.provider, target.model)), { awaitFirstChunks: true });
  }
}

function converseCall(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions, stream: boolean): JsonRequest {
  return {
    provider: target.provider,
    url: bedrockModelUrl(target.baseUrl, target.model, stream ? 'converse-stream' : 'converse'),
    headers: { 'content-type': 'application/json' },
    body: toConverseRequest(request),
    extraHeaders: target.headers,
    authorize: target.authorize,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    limits: target.limits,
    ...(stream && { framing: 'aws-event-stream' as const }),
  };
}

class ConverseChunks implements ChunkTranslator {
  constructor(private readonly translator: ConverseStreamTranslator) {}

  read(event: SseEvent, emit: EmitChunk): boolean {
    return this.translator.read(event, emit);
  }

  end(): void {
    this.translator.end();
  }
}
