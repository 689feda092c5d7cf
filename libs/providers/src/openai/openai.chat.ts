import type { CallOptions, ChatAdapter, ProviderTarget, UpstreamChatChunk, UpstreamChatCompletion, UpstreamChatRequest } from '../provider.types';
import { openEventStream, postJson } from '../transport/http-client';
import type { SseEvent } from '../transport/sse';
import { UpstreamHttpError, UpstreamProtocolError } from '../upstream.errors';

/** How an OpenAI-format endpoint is addressed: the URL of chat completions and the auth headers. */
export interface OpenAiEndpoint {
  url(target: ProviderTarget): string;
  headers(target: ProviderTarget): Record<string, string>;
}

const OPENAI_ENDPOINT: OpenAiEndpoint = {
  url: (target) => `${target.baseUrl}/chat/completions`,
  headers: (target): Record<string, string> => (target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
};

/**
 * OpenAI and every server that speaks its wire format (Groq, Together, Mistral, DeepSeek,
 * xAI, OpenRouter, vLLM, Ollama, llama.cpp, Azure OpenAI): the request goes out as is.
 */
export class OpenAiChatAdapter implements ChatAdapter {
  constructor(private readonly endpoint: OpenAiEndpoint = OPENAI_ENDPOINT) {}

  async chat(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<UpstreamChatCompletion> {
    const completion = await postJson<UpstreamChatCompletion>({
      provider: target.provider,
      url: this.endpoint.url(target),
      headers: this.endpoint.headers(target),
      body: { ...request, stream: false },
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
    if (!completion || !Array.isArray(completion.choices)) {
      throw new UpstreamProtocolError(target.provider, 'no choices in the chat completion');
    }
    return completion;
  }

  async stream(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<AsyncIterable<UpstreamChatChunk>> {
    const events = await openEventStream({
      provider: target.provider,
      url: this.endpoint.url(target),
      headers: this.endpoint.headers(target),
      // Usage is always requested, so a stream is billed exactly like a non-streamed answer.
      body: { ...request, stream: true, stream_options: { include_usage: true } },
      timeoutMs: options.timeoutMs,
      signal: options.signal,
    });
    return openAiChunks(target.provider, events);
  }
}

async function* openAiChunks(provider: string, events: AsyncIterable<SseEvent>): AsyncGenerator<UpstreamChatChunk> {
  for await (const event of events) {
    if (event.data === '[DONE]') return;
    let chunk: UpstreamChatChunk & { error?: { message?: string; code?: unknown } };
    try {
      chunk = JSON.parse(event.data) as typeof chunk;
    } catch {
      throw new UpstreamProtocolError(provider, 'a stream event is not JSON');
    }
    if (chunk.error) throw new UpstreamHttpError(provider, 502, chunk.error.message ?? 'error event in the stream');
    if (!Array.isArray(chunk.choices)) throw new UpstreamProtocolError(provider, 'a stream chunk has no choices');
    yield chunk;
  }
}
