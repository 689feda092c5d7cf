import type { CallOptions, ChatAdapter, ProviderTarget, UpstreamChatChunk, UpstreamChatCompletion, UpstreamChatRequest } from '../provider.types';
import { eachOf, openEventBatches, postJson, translatedBatches } from '../transport/http-client';
import type { SseEvent } from '../transport/sse';
import { UpstreamProtocolError } from '../upstream.errors';
import {
  AnthropicStreamTranslator,
  fromAnthropicResponse,
  isAnthropicMessage,
  isReasoningExcluded,
  parseStreamEvent,
  toAnthropicRequest,
} from './anthropic.translate';
import { ANTHROPIC_VERSION } from './anthropic.types';

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

/**
 * Anthropic's Messages API behind the gateway's OpenAI shape (translation rules in
 * anthropic.translate.ts). A request that cannot be expressed for Anthropic throws
 * AnthropicTranslationError before anything is sent.
 */
export class AnthropicChatAdapter implements ChatAdapter {
  async chat(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<UpstreamChatCompletion> {
    const body = toAnthropicRequest(request, { stream: false });
    const answer = await postJson<unknown>({
      provider: target.provider,
      url: anthropicMessagesUrl(target.baseUrl),
      headers: anthropicHeaders(target),
      body,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: target.limits,
    });
    if (!isAnthropicMessage(answer)) throw new UpstreamProtocolError(target.provider, 'the answer is not an Anthropic message');
    return fromAnthropicResponse(answer, { excludeReasoning: isReasoningExcluded(request) });
  }

  async stream(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<AsyncIterable<UpstreamChatChunk>> {
    return eachOf(await this.streamBatches(target, request, options));
  }

  /**
   * Resolves after the first stream event: Anthropic reports overload and other failures as
   * an `error` event right after a 200 head, and such a stream rejects here like an error
   * status does, so the caller can still fall back. The events of each read are translated
   * together, into one batch.
   */
  async streamBatches(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<AsyncIterable<UpstreamChatChunk[]>> {
    const body = toAnthropicRequest(request, { stream: true });
    const batches = await openEventBatches({
      provider: target.provider,
      url: anthropicMessagesUrl(target.baseUrl),
      headers: anthropicHeaders(target),
      body,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: target.limits,
    });
    const translator = new AnthropicStreamTranslator(target.provider, { excludeReasoning: isReasoningExcluded(request) });
    const translate = (event: SseEvent) => translator.push(parseStreamEvent(target.provider, event));
    const events = batches[Symbol.asyncIterator]();
    let pending: { events?: SseEvent[]; ready?: UpstreamChatChunk[] };
    try {
      const next = await events.next();
      if (next.done) {
        translator.end();
        pending = {};
      } else pending = { ready: translate(next.value[0]), events: next.value.slice(1) };
    } catch (error) {
      await events.return?.(undefined);
      throw error;
    }
    // Read to the end of the body even after message_stop, so the connection can be reused.
    return translatedBatches(events, translate, () => {
      translator.end();
      return [];
    }, pending);
  }
}
