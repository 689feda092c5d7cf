import type { CallOptions, ChatAdapter, ProviderTarget, UpstreamChatCompletion, UpstreamChatRequest } from '../provider.types';
import { openChunkStream, type ChunkStream, type ChunkTranslator, type EmitChunk } from '../transport/chunk-stream';
import { postJson } from '../transport/http-client';
import type { SseEvent } from '../transport/sse';
import { UpstreamHttpError, UpstreamProtocolError } from '../upstream.errors';
import { fromGeminiResponse, GeminiStreamTranslator, toGeminiRequest, translationContext } from './gemini.translate';
import type { GeminiGenerateContentResponse } from './gemini.types';
import { vertexGeminiUrl } from '../vertex/vertex.gemini';

/** Where the Gemini API lives when the target names no address. */
export const GEMINI_DEFAULT_BASE_URL = 'https://generativelanguage.googleapis.com/v1beta';

/** `{baseUrl}/models/{model}:{method}`; a `models/` prefix on the model name is tolerated. */
export function geminiUrl(target: ProviderTarget, method: 'generateContent' | 'streamGenerateContent' | 'batchEmbedContents'): string {
  if (target.cloud?.kind === 'vertex') return vertexGeminiUrl(target, method);
  const base = (target.baseUrl || GEMINI_DEFAULT_BASE_URL).replace(/\/+$/, '');
  const model = target.model.replace(/^models\//, '');
  return `${base}/models/${encodeURIComponent(model)}:${method}`;
}

/** The Gemini API's key header; a Vertex AI call is authorized by its connection's token instead. */
export function geminiHeaders(target: ProviderTarget): Record<string, string> {
  return target.apiKey && target.cloud === undefined ? { 'x-goog-api-key': target.apiKey } : {};
}

/**
 * Google Gemini API (generateContent). Requests and answers are translated to and from the
 * OpenAI shape (gemini.translate.ts). Translation failures throw GeminiTranslationError
 * before anything is sent.
 */
export class GeminiChatAdapter implements ChatAdapter {
  async chat(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<UpstreamChatCompletion> {
    const body = toGeminiRequest(request);
    const response = await postJson<GeminiGenerateContentResponse>({
      provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits,
      url: geminiUrl(target, 'generateContent'),
      headers: geminiHeaders(target), authorize: target.authorize,
      body,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: target.limits,
    });
    if (!isObject(response) || (!Array.isArray(response.candidates) && response.promptFeedback?.blockReason === undefined)) {
      throw new UpstreamProtocolError(target.provider, 'no candidates in the Gemini response');
    }
    return fromGeminiResponse(response, translationContext(target.model));
  }

  async stream(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<ChunkStream> {
    const call = {
      provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits,
      url: `${geminiUrl(target, 'streamGenerateContent')}?alt=sse`,
      headers: geminiHeaders(target), authorize: target.authorize,
      body: toGeminiRequest(request),
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: target.limits,
    };
    return openChunkStream(call, new GeminiChunks(target.provider, new GeminiStreamTranslator(translationContext(target.model))));
  }
}

/** The chunks of a Gemini SSE stream; throws Upstream*Error on error events, bad JSON or a stream cut short. Exported for its tests. */
export class GeminiChunks implements ChunkTranslator {
  constructor(
    private readonly provider: string,
    private readonly translator: GeminiStreamTranslator,
  ) {}

  read(event: SseEvent, emit: EmitChunk): void {
    let payload: unknown;
    try {
      payload = JSON.parse(event.data);
    } catch {
      throw new UpstreamProtocolError(this.provider, 'a stream event is not JSON');
    }
    if (!isObject(payload)) throw new UpstreamProtocolError(this.provider, 'a stream event is not a JSON object');
    const error = (payload as { error?: { message?: string } }).error;
    if (error !== undefined) throw new UpstreamHttpError(this.provider, 502, error.message ?? 'error event in the stream');
    for (const chunk of this.translator.push(payload as GeminiGenerateContentResponse)) emit(chunk);
  }

  end(emit: EmitChunk): void {
    // A stream cut short (no finish reason) must not pass for a complete answer.
    if (!this.translator.complete) throw new UpstreamProtocolError(this.provider, 'the stream ended before a finish reason');
    for (const chunk of this.translator.finish()) emit(chunk);
  }
}

function isObject(value: unknown): value is Record<string, unknown> & GeminiGenerateContentResponse {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
