import type { CompletionRequestDto } from '@igw/contracts';
import type { CallOptions, ProviderTarget, UpstreamChatChunk, UpstreamUsage } from '../provider.types';
import { postJson, type JsonRequest } from '../transport/http-client';
import type { SseEvent } from '../transport/sse';
import { UpstreamProtocolError } from '../upstream.errors';
import { openNativeStream, parsedEvent, type NativeAnswer, type NativeEvent, type NativeEventReader, type NativeEventStream } from './native-call';

// OpenAI's legacy text completions (`POST {base}/completions`), called natively: there is no
// translation to chat (suffix, echo and logprobs have no chat equivalent). The client's request
// goes up as it came (the model renamed); the answer or its `text_completion` chunks come back as
// they came. A stream always asks for its usage (`stream_options.include_usage`), which is what
// it is billed by; the gateway passes the usage chunk on only to a client that asked for it.

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** The validated completions body without the gateway's own `provider`, its null fields left out (they mean absent). */
export type UpstreamCompletionRequest = Omit<CompletionRequestDto, 'provider'>;

function callOf(target: ProviderTarget, body: UpstreamCompletionRequest, options: CallOptions, stream: boolean): JsonRequest {
  const sent = { ...body, model: target.model };
  if (stream) {
    sent.stream = true;
    sent.stream_options = { ...body.stream_options, include_usage: true };
  } else {
    delete sent.stream;
    delete sent.stream_options;
  }
  return {
    provider: target.provider,
    extraHeaders: target.headers,
    onRateLimits: target.onRateLimits,
    url: `${target.baseUrl}/completions`,
    headers: target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {},
    body: sent,
    timeoutMs: options.timeoutMs,
    signal: options.signal,
    limits: target.limits,
  };
}

/** The usage a completions answer or chunk reports, when it reports whole counts. */
export function completionsUsageOf(value: Record<string, unknown>): UpstreamUsage | undefined {
  const usage = isRecord(value.usage) ? value.usage : undefined;
  const count = (field: unknown) => (typeof field === 'number' && Number.isSafeInteger(field) && field >= 0 ? field : undefined);
  const prompt = count(usage?.prompt_tokens);
  const completion = count(usage?.completion_tokens);
  if (prompt === undefined || completion === undefined) return undefined;
  const read: UpstreamUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  const cached = isRecord(usage?.prompt_tokens_details) ? count(usage.prompt_tokens_details.cached_tokens) : undefined;
  if (cached !== undefined) read.prompt_tokens_details = { cached_tokens: cached };
  return read;
}

/** The answer's choices' texts, by choice index: what a count of the generated tokens reads when no usage came. */
export function completionTexts(value: Record<string, unknown>): Array<{ index: number; text: string }> {
  const choices = Array.isArray(value.choices) ? value.choices : [];
  return choices.flatMap((choice: unknown, position) => {
    if (!isRecord(choice) || typeof choice.text !== 'string') return [];
    return [{ index: typeof choice.index === 'number' ? choice.index : position, text: choice.text }];
  });
}

/** A whole answer: `POST /completions` with the client's own request. */
export async function openAiNativeCompletion(target: ProviderTarget, body: UpstreamCompletionRequest, options: CallOptions): Promise<NativeAnswer & { usageReported: boolean }> {
  const answer = await postJson<unknown>(callOf(target, body, options, false));
  if (!isRecord(answer) || !Array.isArray(answer.choices)) throw new UpstreamProtocolError(target.provider, 'the answer is not a text completion');
  const usage = completionsUsageOf(answer);
  return { body: answer, usage: usage ?? { prompt_tokens: 0, completion_tokens: 0, total_tokens: 0 }, usageReported: usage !== undefined };
}

/**
 * The stream of the client's own request; a failure before the first chunks rejects (fallback).
 * `echoed` is the text of each choice's prompt when the request asked for `echo` (choice index
 * to prompt): the echo is not generated, so a count of a stream cut short leaves it out.
 */
export function openAiNativeCompletionStream(target: ProviderTarget, body: UpstreamCompletionRequest, options: CallOptions, echoed?: (choice: number) => string | undefined): Promise<NativeEventStream> {
  return openNativeStream(callOf(target, body, options, true), new CompletionsNativeEvents(target.provider, echoed));
}

function chunkOf(content: string): UpstreamChatChunk {
  return { id: '', object: 'chat.completion.chunk', created: 0, model: '', choices: [{ index: 0, delta: { content }, finish_reason: null }] };
}

/**
 * Reads `text_completion` chunks: each passed on as it came, its choices' text a chat-shaped
 * piece for the count of a stream cut short, its usage read where it comes; `[DONE]` closes it.
 * An `error` object in the stream is a failure.
 */
export class CompletionsNativeEvents implements NativeEventReader {
  private closed = false;
  /** Choices whose echoed prompt was already seen (it leads the first text of each). */
  private readonly echoSeen = new Set<number>();

  constructor(
    private readonly provider: string,
    private readonly echoed?: (choice: number) => string | undefined,
  ) {}

  read(event: SseEvent): NativeEvent {
    if (event.data === '[DONE]') {
      this.closed = true;
      return { data: event.data, parsed: {}, chunks: [] };
    }
    const parsed = parsedEvent(event.data);
    if (parsed === undefined) throw new UpstreamProtocolError(this.provider, 'a stream chunk is not a JSON object');
    if (isRecord(parsed.error)) throw new UpstreamProtocolError(this.provider, typeof parsed.error.message === 'string' ? parsed.error.message : 'an error in the stream');
    const read: NativeEvent = { name: event.event, data: event.data, parsed, chunks: [] };
    for (const { index, text } of completionTexts(parsed)) {
      const generated = this.withoutEcho(index, text);
      if (generated !== '') read.chunks.push(chunkOf(generated));
    }
    const usage = completionsUsageOf(parsed);
    if (usage !== undefined) read.usage = usage;
    return read;
  }

  end(): void {
    if (!this.closed) throw new UpstreamProtocolError(this.provider, 'the stream ended before [DONE]');
  }

  private withoutEcho(index: number, text: string): string {
    if (this.echoed === undefined || this.echoSeen.has(index)) return text;
    this.echoSeen.add(index);
    const prompt = this.echoed(index);
    return prompt !== undefined && text.startsWith(prompt) ? text.slice(prompt.length) : text;
  }
}
