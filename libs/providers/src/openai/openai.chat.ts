import type { CallOptions, ChatAdapter, ProviderTarget, UpstreamChatChunk, UpstreamChatCompletion, UpstreamChatRequest } from '../provider.types';
import { openEventBatches, postJson } from '../transport/http-client';
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

/** Providers whose API searches the web through `web_search_options` and refuses fields it does not know. */
const WEB_SEARCH_OPTIONS_PROVIDERS = new Set(['openai', 'azure', 'openrouter']);
const SEARCH_CONTEXT_SIZE = { turbo: 'low', max: 'high', agent: 'high' } as const;

/**
 * The spec's `enable_search` / `search_options` in the dialect of the provider: OpenAI, Azure
 * and OpenRouter take `web_search_options` (a search strategy becomes a search context size;
 * sources always come back as `url_citation` annotations), and would refuse the spec's own
 * fields. Other OpenAI-compatible servers (Qwen's among them, where these fields come from)
 * get them as sent.
 */
export function withSearchDialect(provider: string, request: UpstreamChatRequest): UpstreamChatRequest {
  if (!WEB_SEARCH_OPTIONS_PROVIDERS.has(provider) || (request.enable_search === undefined && request.search_options === undefined)) return request;
  const { enable_search: enabled, search_options: options, ...rest } = request as UpstreamChatRequest & {
    enable_search?: boolean;
    search_options?: { search_strategy?: keyof typeof SEARCH_CONTEXT_SIZE };
  };
  if (enabled !== true || rest.web_search_options !== undefined) return rest;
  const strategy = options?.search_strategy;
  return { ...rest, web_search_options: strategy ? { search_context_size: SEARCH_CONTEXT_SIZE[strategy] } : {} };
}

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
      body: { ...withSearchDialect(target.provider, request), stream: false },
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: target.limits,
    });
    if (!completion || !Array.isArray(completion.choices)) {
      throw new UpstreamProtocolError(target.provider, 'no choices in the chat completion');
    }
    if (searches(target.provider, request) && completion.usage) completion.usage = { ...completion.usage, web_search_calls: 1 };
    return completion;
  }

  async streamBatches(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<AsyncIterable<UpstreamChatChunk[]>> {
    const events = await openEventBatches({
      provider: target.provider,
      url: this.endpoint.url(target),
      headers: this.endpoint.headers(target),
      // Usage is always requested, so a stream is billed exactly like a non-streamed answer.
      body: { ...withSearchDialect(target.provider, request), stream: true, stream_options: { include_usage: true } },
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: target.limits,
    });
    return openAiChunkBatches(target.provider, events, searches(target.provider, request));
  }
}

/**
 * OpenAI's chat completions report no search count: their search models run one web search per
 * request that has `web_search_options` (what OpenAI bills per call), so such an answer counts
 * one. Other OpenAI-compatible servers get the spec's fields as sent and are not counted.
 */
function searches(provider: string, request: UpstreamChatRequest): boolean {
  return withSearchDialect(provider, request).web_search_options !== undefined && WEB_SEARCH_OPTIONS_PROVIDERS.has(provider);
}

/**
 * The chunks of each batch of events, parsed in one synchronous pass; `[DONE]` ends the
 * stream (what follows it is not read). A malformed event or an error event stops reading
 * (closing the connection) and rejects.
 */
function openAiChunkBatches(provider: string, events: AsyncIterable<SseEvent[]>, searched: boolean): AsyncIterable<UpstreamChatChunk[]> {
  const source = events[Symbol.asyncIterator]();
  let over = false;
  const stop = (): Promise<IteratorResult<UpstreamChatChunk[]>> => {
    over = true;
    return Promise.resolve(source.return?.(undefined)).then(() => ({ value: undefined, done: true }));
  };
  const next = (): Promise<IteratorResult<UpstreamChatChunk[]>> => {
    if (over) return Promise.resolve({ value: undefined, done: true });
    return source.next().then((result) => {
      if (result.done) {
        over = true;
        return { value: undefined, done: true };
      }
      const chunks: UpstreamChatChunk[] = [];
      try {
        for (const event of result.value) {
          if (event.data === '[DONE]') {
            over = true;
            break;
          }
          chunks.push(openAiChunk(provider, event, searched));
        }
      } catch (error) {
        return stop().then(() => Promise.reject(error));
      }
      if (over) {
        void source.return?.(undefined);
        return chunks.length > 0 ? { value: chunks, done: false } : { value: undefined, done: true };
      }
      return chunks.length > 0 ? { value: chunks, done: false } : next();
    });
  };
  const iterator: AsyncIterator<UpstreamChatChunk[]> = { next, return: stop };
  return { [Symbol.asyncIterator]: () => iterator };
}

function openAiChunk(provider: string, event: SseEvent, searched: boolean): UpstreamChatChunk {
  let chunk: UpstreamChatChunk & { error?: { message?: string; code?: unknown } };
  try {
    chunk = JSON.parse(event.data) as typeof chunk;
  } catch {
    throw new UpstreamProtocolError(provider, 'a stream event is not JSON');
  }
  if (chunk.error) throw new UpstreamHttpError(provider, 502, chunk.error.message ?? 'error event in the stream');
  if (!Array.isArray(chunk.choices)) throw new UpstreamProtocolError(provider, 'a stream chunk has no choices');
  if (searched && chunk.usage) chunk.usage = { ...chunk.usage, web_search_calls: 1 };
  return chunk;
}
