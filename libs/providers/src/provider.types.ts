import type { CancelSignal } from './transport/cancellation';
import type { UpstreamLimits } from './transport/upstream-limits';

/** Where one upstream call goes: a provider with its resolved address and key. */
export interface ProviderTarget {
  /** Provider key as written in the catalogue and accepted by `provider` pinning, e.g. `openai`. */
  provider: string;
  /** The model name at that provider. */
  model: string;
  baseUrl: string;
  apiKey?: string;
  /** How much of its answers the gateway reads (the transport's defaults when absent). */
  limits?: UpstreamLimits;
}

/** Usage as an upstream reports it, normalised to OpenAI's names. */
export interface UpstreamUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number | null; audio_tokens?: number | null } | null;
  completion_tokens_details?: {
    reasoning_tokens?: number | null;
    audio_tokens?: number | null;
    accepted_prediction_tokens?: number | null;
    rejected_prediction_tokens?: number | null;
  } | null;
  /**
   * The gateway's own field: web searches the upstream ran, billed per call. Anthropic reports
   * them (`server_tool_use.web_search_requests`); Gemini's are the queries of its grounding
   * metadata; an OpenAI-format answer to a request with `web_search_options` counts one.
   */
  web_search_calls?: number;
}

/** A chat completion in OpenAI's response shape, as every adapter returns it. */
export interface UpstreamChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: Record<string, unknown> & { role: 'assistant'; content: string | null };
    finish_reason: string;
    logprobs?: unknown;
  }>;
  usage?: UpstreamUsage;
  service_tier?: string | null;
  system_fingerprint?: string | null;
}

/** The OpenAI-shaped chat request the gateway sends on (model already replaced by the source's). */
export type UpstreamChatRequest = Record<string, unknown> & { model: string; messages: unknown[] };

/** A streamed piece of a chat completion, in OpenAI's `chat.completion.chunk` shape. */
export interface UpstreamChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: {
      role?: 'assistant';
      content?: string | null;
      refusal?: string | null;
      tool_calls?: Array<{
        index: number;
        id?: string;
        type?: 'function';
        function?: { name?: string; arguments?: string };
      }>;
      /**
       * Spoken answers (`modalities` with 'audio'), as OpenAI streams them: pieces carrying the
       * audio `id`, `transcript` words, base64 `data` and last `expires_at`, forwarded as they come.
       */
      audio?: { id?: string; transcript?: string; data?: string; expires_at?: number };
      /** `url_citation` annotations, in a chunk of their own late in the stream. */
      annotations?: unknown[];
      [extra: string]: unknown;
    };
    finish_reason: string | null;
    logprobs?: unknown;
  }>;
  /** Set on the last chunk: every adapter asks its upstream for usage, whatever the client asked. */
  usage?: UpstreamUsage | null;
  service_tier?: string | null;
  system_fingerprint?: string | null;
}

export interface CallOptions {
  signal?: CancelSignal;
  timeoutMs: number;
}

/** One provider kind's chat capability; each kind keeps its own wire translation. */
export interface ChatAdapter {
  chat(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<UpstreamChatCompletion>;
  /**
   * Opens a stream. The promise settles once the upstream has answered: it rejects with an
   * Upstream*Error when the upstream refused (so the caller may fall back to another source
   * before anything reached the client), and resolves with the chunks otherwise. The chunks
   * are OpenAI-shaped; the last one carries `usage`. Aborting `options.signal` ends the stream
   * and closes the upstream connection.
   */
  stream(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<AsyncIterable<UpstreamChatChunk>>;
}

/**
 * The embeddings request the gateway sends on, in OpenAI's shape (model already replaced by
 * the source's). `input` is always a list: texts, or token arrays.
 */
export interface UpstreamEmbeddingRequest {
  model: string;
  input: string[] | number[][];
  /** Shorter vectors, when the model supports it. */
  dimensions?: number;
  user?: string;
}

/** An embeddings answer as every adapter returns it: one vector per input, in input order. */
export interface UpstreamEmbeddingResult {
  model: string;
  /** `embeddings[i]` is the vector of `input[i]`. */
  embeddings: number[][];
  /** Absent when the upstream reports no token count (Gemini): the caller counts. */
  usage?: { prompt_tokens: number; total_tokens?: number };
}

/** One provider kind's embeddings capability; kinds without one (Anthropic) have no adapter. */
export interface EmbeddingsAdapter {
  embed(target: ProviderTarget, request: UpstreamEmbeddingRequest, options: CallOptions): Promise<UpstreamEmbeddingResult>;
}
