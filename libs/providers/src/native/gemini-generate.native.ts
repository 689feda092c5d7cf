import type { GeminiGenerateContentRequestDto } from '@igw/contracts';
import { geminiHeaders, geminiUrl } from '../google/gemini.chat';
import { GeminiStreamTranslator, toOpenAiUsage, translationContext } from '../google/gemini.translate';
import type { GeminiGenerateContentResponse } from '../google/gemini.types';
import type { CallOptions, ProviderTarget } from '../provider.types';
import { postJson, type JsonRequest } from '../transport/http-client';
import type { SseEvent } from '../transport/sse';
import { UpstreamHttpError, UpstreamProtocolError } from '../upstream.errors';
import { openNativeStream, parsedEvent, type NativeAnswer, type NativeEvent, type NativeEventReader, type NativeEventStream } from './native-call';

// Google's generateContent called natively: the client's GenerateContentRequest goes up as it
// came (the gateway builds the body, see the gateway's gemini-native.ts), and the answer or the
// `alt=sse` events come back as they came. The usage is read as the chat adapter reads it
// (thoughts as reasoning tokens, cached content, grounding searches), so both paths price alike.

/** The validated GenerateContentRequest as the gateway sends it (its tools and limits decided; `cachedContent` is never sent). */
export type GeminiNativeBody = Omit<GeminiGenerateContentRequestDto, 'cachedContent'>;

function callOf(target: ProviderTarget, body: GeminiNativeBody, options: CallOptions, stream: boolean): JsonRequest {
  return {
    provider: target.provider,
    extraHeaders: target.headers,
    onRateLimits: target.onRateLimits,
    url: stream ? `${geminiUrl(target, 'streamGenerateContent')}?alt=sse` : geminiUrl(target, 'generateContent'),
    headers: geminiHeaders(target),
    authorize: target.authorize,
    body,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    limits: target.limits,
  };
}

function isGenerateContentResponse(value: unknown): value is GeminiGenerateContentResponse & Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const answer = value as GeminiGenerateContentResponse;
  return Array.isArray(answer.candidates) || answer.promptFeedback?.blockReason !== undefined;
}

/** `:generateContent` with the client's own request: Google's answer as it came, and its usage. */
export async function geminiNativeGenerate(target: ProviderTarget, body: GeminiNativeBody, options: CallOptions): Promise<NativeAnswer> {
  const answer = await postJson<unknown>(callOf(target, body, options, false));
  if (!isGenerateContentResponse(answer)) throw new UpstreamProtocolError(target.provider, 'no candidates in the Gemini response');
  const { chunks: _chunks, usage } = readWhole(target.model, answer);
  return { body: answer, usage };
}

function readWhole(model: string, answer: GeminiGenerateContentResponse): { chunks: unknown[]; usage: NativeAnswer['usage'] } {
  // The translator's closing chunk carries the usage with the grounding searches counted.
  const translator = new GeminiStreamTranslator(translationContext(model));
  const chunks = translator.push(answer);
  const usage = translator.finish()[0]?.usage ?? toOpenAiUsage(answer.usageMetadata ?? {});
  return { chunks, usage };
}

/** `:streamGenerateContent?alt=sse` of the client's own request, its events as they came; an error event before the first content rejects (fallback). */
export function geminiNativeStream(target: ProviderTarget, body: GeminiNativeBody, options: CallOptions): Promise<NativeEventStream> {
  return openNativeStream(callOf(target, body, options, true), new GeminiNativeEvents(target.provider, target.model));
}

/**
 * Reads Google's events: each is passed on as it came; the chat adapter's translator makes the
 * chat-shaped pieces a stream cut short is counted from. Google repeats the running usage on
 * events; it is whole on the event that finishes the last candidate, the one that carries it.
 */
export class GeminiNativeEvents implements NativeEventReader {
  private readonly translator: GeminiStreamTranslator;

  constructor(
    private readonly provider: string,
    model: string,
  ) {
    this.translator = new GeminiStreamTranslator(translationContext(model));
  }

  read(event: SseEvent): NativeEvent {
    const parsed = parsedEvent(event.data);
    if (parsed === undefined) throw new UpstreamProtocolError(this.provider, 'a stream event is not a JSON object');
    const error = parsed.error as { code?: number; message?: string } | undefined;
    if (error !== undefined) throw new UpstreamHttpError(this.provider, 502, error.message ?? 'error event in the stream');
    const wasComplete = this.translator.complete;
    const chunks = this.translator.push(parsed as GeminiGenerateContentResponse);
    const read: NativeEvent = { data: event.data, parsed, chunks };
    if (!wasComplete && this.translator.complete) read.usage = this.translator.finish()[0]?.usage ?? toOpenAiUsage({});
    return read;
  }

  end(): void {
    // A stream cut short (no finish reason) must not pass for a complete answer.
    if (!this.translator.complete) throw new UpstreamProtocolError(this.provider, 'the stream ended before a finish reason');
  }
}
