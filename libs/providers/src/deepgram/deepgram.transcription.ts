import type {
  CallOptions,
  ProviderTarget,
  TranscribedWord,
  TranscriptionAdapter,
  UpstreamTranscriptionRequest,
  UpstreamTranscriptionResult,
} from '../provider.types';
import { postBytes } from '../transport/http-client';
import { UpstreamProtocolError } from '../upstream.errors';

export const DEEPGRAM_DEFAULT_BASE_URL = 'https://api.deepgram.com';

/** Deepgram takes its key as `Authorization: Token <key>` (Bearer is for short-lived tokens). */
export function deepgramHeaders(target: ProviderTarget): Record<string, string> {
  return target.apiKey ? { authorization: `Token ${target.apiKey}` } : {};
}

/** Deepgram's pre-recorded answer, as far as the gateway reads it (the rest is kept in `raw`). */
export interface DeepgramListenResponse {
  metadata?: { request_id?: string; duration?: number; channels?: number; models?: string[]; [field: string]: unknown };
  results?: {
    channels?: Array<{
      detected_language?: string;
      alternatives?: Array<{
        transcript?: string;
        confidence?: number;
        words?: Array<{ word?: string; start?: number; end?: number; confidence?: number; punctuated_word?: string }>;
      }>;
    }>;
  };
}

/**
 * `POST {base}/v1/listen?model=...` query: `smart_format` for the punctuated, formatted
 * transcript people expect; nova-3 takes hints as `keyterm`, older models as `keywords`.
 */
export function deepgramListenUrl(target: ProviderTarget, request: UpstreamTranscriptionRequest): string {
  const query = new URLSearchParams({ model: request.model, smart_format: 'true' });
  if (request.language !== undefined) query.set('language', request.language);
  if (request.prompt !== undefined && request.prompt.trim() !== '') query.set(request.model.startsWith('nova-3') ? 'keyterm' : 'keywords', request.prompt.trim());
  for (const [name, value] of Object.entries(request.options ?? {})) query.set(name, String(value));
  return `${target.baseUrl}/v1/listen?${query.toString()}`;
}

export function fromDeepgramListenResponse(provider: string, request: UpstreamTranscriptionRequest, response: DeepgramListenResponse): UpstreamTranscriptionResult {
  const channel = response?.results?.channels?.[0];
  const best = channel?.alternatives?.[0];
  if (!best || typeof best.transcript !== 'string') throw new UpstreamProtocolError(provider, 'no transcript in results.channels[0].alternatives[0]');
  const reported = response.metadata?.duration;
  const result: UpstreamTranscriptionResult = { model: request.model, transcript: best.transcript, raw: { ...response } };
  if (typeof reported === 'number' && Number.isFinite(reported)) result.durationSeconds = reported;
  if (typeof best.confidence === 'number') result.confidence = best.confidence;
  const language = channel?.detected_language ?? request.language;
  if (language !== undefined) result.language = language;
  if (Array.isArray(best.words)) {
    result.words = best.words
      .filter((word) => typeof word?.word === 'string' && typeof word.start === 'number' && typeof word.end === 'number')
      .map((word): TranscribedWord => {
        const entry: TranscribedWord = { word: word.word as string, start: word.start as number, end: word.end as number };
        if (typeof word.confidence === 'number') entry.confidence = word.confidence;
        if (typeof word.punctuated_word === 'string') entry.punctuatedWord = word.punctuated_word;
        return entry;
      });
  }
  return result;
}

/** Deepgram's pre-recorded API: the audio bytes as the body of `POST {base}/v1/listen`. */
export class DeepgramTranscriptionAdapter implements TranscriptionAdapter {
  translationRefusal(model: string): string | undefined {
    return `Deepgram has no translation API (${model} transcribes only)`;
  }

  async transcribe(target: ProviderTarget, request: UpstreamTranscriptionRequest, options: CallOptions): Promise<UpstreamTranscriptionResult> {
    const response = await postBytes<DeepgramListenResponse>({
      provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits,
      url: deepgramListenUrl(target, request),
      headers: deepgramHeaders(target),
      body: request.audio,
      contentType: request.contentType,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: target.limits,
    });
    return fromDeepgramListenResponse(target.provider, request, response);
  }
}
