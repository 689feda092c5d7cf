import type { MessagesRequestDto } from '@igw/contracts';
import { messagesCallOf } from '../anthropic/messages-call';
import { AnthropicStreamTranslator, isAnthropicMessage, parseStreamEvent, toOpenAiUsage } from '../anthropic/anthropic.translate';
import type { AnthropicStreamEvent, AnthropicUsage } from '../anthropic/anthropic.types';
import type { CallOptions, ProviderTarget } from '../provider.types';
import { postJson, type JsonRequest } from '../transport/http-client';
import type { SseEvent } from '../transport/sse';
import { UpstreamProtocolError } from '../upstream.errors';
import { openNativeStream, type NativeAnswer, type NativeEvent, type NativeEventReader, type NativeEventStream } from './native-call';

// Anthropic's Messages API called natively: the client's Messages request goes up as it came
// (the gateway builds the body, see the gateway's messages-native.ts), and the answer or events
// come back as they came. The usage is Anthropic's, read as the chat adapter reads it (cache
// reads and writes, one-hour writes, web searches), so both paths price alike.

/**
 * `anthropic-beta` values passed on: those that change how the model answers the request as
 * sent, not whose resources it reaches or what it costs. Files (an upstream account's files,
 * shared by every client of the gateway), MCP connectors, code execution and the 1M context
 * (priced apart) are left out.
 */
const FORWARDED_BETA_PREFIXES = [
  'interleaved-thinking-',
  'fine-grained-tool-streaming-',
  'context-management-',
  'prompt-caching-',
  'extended-cache-ttl-',
  'token-efficient-tools-',
  'output-128k-',
  'claude-code-',
  'computer-use-',
  'effort-',
  'web-search-',
];

/** The client's `anthropic-beta` values the gateway passes on (comma-separated in, comma-separated out), or undefined for none. */
export function forwardedAnthropicBetas(header: string | string[] | undefined): string | undefined {
  const values = (Array.isArray(header) ? header.join(',') : (header ?? ''))
    .split(',')
    .map((value) => value.trim())
    .filter((value) => /^[a-z0-9-]{1,64}$/.test(value) && FORWARDED_BETA_PREFIXES.some((prefix) => value.startsWith(prefix)));
  return values.length > 0 ? [...new Set(values)].join(',') : undefined;
}

/** The validated Messages request as the gateway sends it (its tools and limits decided); model and stream are the call's. */
export type AnthropicNativeBody = Omit<MessagesRequestDto, 'model' | 'stream'>;

export interface AnthropicNativeRequest {
  body: AnthropicNativeBody;
  /** The `anthropic-beta` header to send, when any. */
  beta?: string;
}

function callOf(target: ProviderTarget, request: AnthropicNativeRequest, options: CallOptions, stream: boolean): JsonRequest {
  const body = { ...request.body, model: target.model, ...(stream ? { stream: true } : {}) };
  return messagesCallOf(target, { body, stream, ...(request.beta !== undefined && { beta: request.beta }) }, options);
}

/** `POST /v1/messages` with the client's own request: Anthropic's message as it came, and its usage. */
export async function anthropicNativeMessage(target: ProviderTarget, request: AnthropicNativeRequest, options: CallOptions): Promise<NativeAnswer> {
  const answer = await postJson<unknown>(callOf(target, request, options, false));
  if (!isAnthropicMessage(answer)) throw new UpstreamProtocolError(target.provider, 'the answer is not an Anthropic message');
  return { body: answer as unknown as Record<string, unknown>, usage: toOpenAiUsage(answer.usage) };
}

/** The stream of the client's own request, its events as they came; an `error` event before the first content rejects (fallback). */
export function anthropicNativeStream(target: ProviderTarget, request: AnthropicNativeRequest, options: CallOptions): Promise<NativeEventStream> {
  return openNativeStream(callOf(target, request, options, true), new AnthropicNativeEvents(target.provider));
}

/**
 * Reads Anthropic's events: each is passed on as it came; the chat adapter's translator makes
 * the chat-shaped pieces a stream cut short is counted from. The usage is whole at
 * message_delta (message_start's input and cache counts, message_delta's output), the event
 * the gateway adds its `meta.usage` to.
 */
export class AnthropicNativeEvents implements NativeEventReader {
  private readonly translator: AnthropicStreamTranslator;
  private usage: Partial<AnthropicUsage> = {};

  constructor(private readonly provider: string) {
    this.translator = new AnthropicStreamTranslator(provider, { excludeReasoning: false });
  }

  read(event: SseEvent): NativeEvent {
    const parsed = parseStreamEvent(this.provider, event) as AnthropicStreamEvent & Record<string, unknown>;
    const chunks = this.translator.push(parsed);
    const read: NativeEvent = { name: event.event ?? parsed.type, data: event.data, parsed, chunks: chunks.filter((chunk) => !chunk.usage) };
    if (parsed.type === 'message_start') this.usage = { ...parsed.message.usage };
    if (parsed.type === 'message_delta') {
      for (const [key, value] of Object.entries(parsed.usage ?? {})) if (value !== null && value !== undefined) Object.assign(this.usage, { [key]: value });
      read.usage = toOpenAiUsage(this.usage);
    }
    return read;
  }

  end(): void {
    this.translator.end();
  }
}
