import type { CallOptions, ChatAdapter, ProviderTarget, UpstreamChatCompletion, UpstreamChatRequest } from '../provider.types';
import { openChunkStream, type ChunkStream, type ChunkTranslator, type EmitChunk } from '../transport/chunk-stream';
import { postJson } from '../transport/http-client';
import type { SseEvent } from '../transport/sse';
import { UpstreamProtocolError } from '../upstream.errors';
import {
  AnthropicStreamTranslator,
  fromAnthropicResponse,
  isAnthropicMessage,
  isReasoningExcluded,
  parseStreamEvent,
  structuredAnswerTool,
  toAnthropicRequest,
} from './anthropic.translate';
import { ANTHROPIC_VERSION } from './anthropic.types';
import { messagesCallOf } from './messages-call';

/**
 * `POST {baseUrl}/v1/messages`. The base URL is the API root (`https://api.anthropic.com`);
 * one that already ends in `/v1` is accepted too.
 */
export function anthropicMessagesUrl(baseUrl: string): string {
  const base = baseUrl.replace(/\/+$/, '');
  return base.endsWith('/v1') ? `${base}/messages` : `${base}/v1/messages`;
}

export function anthropicHeaders(target: ProviderTarget): Record<string, string> {
  const headers: Record<string, string> = { 'anthropic-version': ANTHROPIC_VERSION, 'content-type': 'application/json' };
  if (target.apiKey) headers['x-api-key'] = target.apiKey;
  return headers;
}

/** Whether the source takes Anthropic's structured outputs (`output_config.format`): its catalogue `native` says so. */
export function takesStructuredOutputs(target: Pick<ProviderTarget, 'native'>): boolean {
  return target.native?.includes('structured_outputs') === true;
}

/**
 * Anthropic's Messages API behind the gateway's OpenAI shape (translation rules in
 * anthropic.translate.ts). A request that cannot be expressed for Anthropic throws
 * AnthropicTranslationError before anything is sent.
 */
export class AnthropicChatAdapter implements ChatAdapter {
  async chat(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<UpstreamChatCompletion> {
    const structuredOutputs = takesStructuredOutputs(target);
    const body = toAnthropicRequest(request, { stream: false, structuredOutputs });
    const answer = await postJson<unknown>(messagesCallOf(target, { body, stream: false }, options));
    if (!isAnthropicMessage(answer)) throw new UpstreamProtocolError(target.provider, 'the answer is not an Anthropic message');
    return fromAnthropicResponse(answer, { excludeReasoning: isReasoningExcluded(request), answerTool: structuredAnswerTool(request, structuredOutputs) });
  }

  /**
   * Resolves after the first chunks of the stream: Anthropic reports overload and other failures
   * as an `error` event right after a 200 head, and such a stream rejects here like an error
   * status does, so the caller can still fall back. The body is read to its end even after
   * message_stop, so the connection can be reused.
   */
  async stream(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<ChunkStream> {
    const structuredOutputs = takesStructuredOutputs(target);
    const call = messagesCallOf(target, { body: toAnthropicRequest(request, { stream: true, structuredOutputs }), stream: true }, options);
    const translator = new AnthropicStreamTranslator(target.provider, { excludeReasoning: isReasoningExcluded(request), answerTool: structuredAnswerTool(request, structuredOutputs) });
    return openChunkStream(call, new AnthropicChunks(target.provider, translator), { awaitFirstChunks: true });
  }
}

/** Anthropic's events, translated one by one; a stream that ends before message_stop throws. */
class AnthropicChunks implements ChunkTranslator {
  constructor(
    private readonly provider: string,
    private readonly translator: AnthropicStreamTranslator,
  ) {}

  read(event: SseEvent, emit: EmitChunk): void {
    for (const chunk of this.translator.push(parseStreamEvent(this.provider, event))) emit(chunk);
  }

  end(): void {
    this.translator.end();
  }
}
