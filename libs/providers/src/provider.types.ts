/** Where one upstream call goes: a provider with its resolved address and key. */
export interface ProviderTarget {
  /** Provider key as written in the catalogue and accepted by `provider` pinning, e.g. `openai`. */
  provider: string;
  /** The model name at that provider. */
  model: string;
  baseUrl: string;
  apiKey?: string;
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

export interface CallOptions {
  signal?: AbortSignal;
  timeoutMs: number;
}

/** One provider kind's chat capability; each kind keeps its own wire translation. */
export interface ChatAdapter {
  chat(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<UpstreamChatCompletion>;
}
