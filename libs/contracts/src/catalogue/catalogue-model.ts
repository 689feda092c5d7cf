/**
 * A catalogue entry as the catalogue service stores and broadcasts it: the public
 * fields of the spec plus `routing`, which the public projection never shows.
 */
export interface ModelInfo {
  name: string;
  developer: string;
  description: string;
  releasedAt?: string;
  contextLength?: number;
  outputMax?: number;
  cutoffAt?: string;
  url?: string;
  docsUrl?: string;
  docsJson?: string;
}

export interface ModelModalities {
  input: string[];
  output: string[];
}

/**
 * Charge `price` USD for every `per` units of `unit`. A unit may be listed again with
 * `promptTokensAbove`: that price applies instead when the request's prompt (every unit named
 * `*input_tokens`) has more tokens than that, the entry with the highest threshold below the
 * prompt's size winning (e.g. Gemini 2.5 Pro's dearer prices for prompts over 200,000 tokens).
 */
export interface PriceUnit {
  unit: string;
  price: number;
  per: number;
  promptTokensAbove?: number;
}

/**
 * What a chat model's price variants vary by: the request's `service_tier` (e.g. `priority`,
 * `flex`). A request that leaves it out, or asks for a standard tier, is priced with the
 * top-level units; any other tier needs a variant that prices it.
 */
export const CHAT_PRICE_DIMENSION = 'service_tier';
export const STANDARD_SERVICE_TIERS: readonly string[] = ['auto', 'default'];

export interface ModelPricing {
  kind: 'fixed';
  currency: 'USD';
  units: PriceUnit[];
  dimensions?: string[];
  variants?: Array<{ dimensions: Record<string, string>; units: PriceUnit[] }>;
}

/** One upstream that can serve the model: provider key (e.g. `openai`) and its model name there. */
/**
 * What a source serves in its provider's own API, beyond chat: `responses`, OpenAI's Responses
 * API (OpenAI and Azure OpenAI sources), called natively for `POST /v1/responses`;
 * `web_search`, the provider's own web search, which a native call may use (OpenAI's
 * `web_search` tool, Anthropic's `web_search_20250305` server tool); `structured_outputs`,
 * Anthropic's structured outputs (`output_config.format`, on the models that take it): a
 * JSON-schema answer is asked that way, not as a forced tool call. Anthropic sources serve
 * `POST /v1/messages` natively by their kind. `completions`, on a chat model's source: it also
 * serves OpenAI's legacy text completions (`POST /v1/completions`, fill-in-the-middle with
 * `suffix`; OpenAI-format servers such as vLLM), which have no translation to chat, so only such
 * sources (and every source of a `<family>/completions` model) take `POST /v1/completions`.
 */
export const NATIVE_SOURCE_APIS = ['responses', 'web_search', 'structured_outputs', 'completions'] as const;
export type NativeSourceApi = (typeof NATIVE_SOURCE_APIS)[number];

export interface UpstreamSource {
  /** The connection's name: a built-in provider (`openai`) or one of PROVIDERS_FILE. */
  provider: string;
  model: string;
  native?: NativeSourceApi[];
  /** The name called at the connection when not `model` (an Azure deployment). */
  deployment?: string;
  /** Its share of its tier's traffic (default 1). */
  weight?: number;
  /** Sources of the lowest tier share the traffic; the next tier takes it when every one of them is out (default 0). */
  tier?: number;
}

/**
 * How a tier's traffic is shared: by weight (smooth weighted round robin), to the deployment
 * with the fewest calls in flight, to the one answering soonest (with some exploration), or
 * in the order listed.
 */
export const ROUTING_STRATEGIES = ['weighted', 'least-busy', 'lowest-latency', 'ordered'] as const;
export type RoutingStrategy = (typeof ROUTING_STRATEGIES)[number];

export interface ModelRouting {
  /**
   * Sources of one tier share its traffic by `strategy` (default `weighted`). A model none of
   * whose sources sets `weight` or `tier`, with no strategy, tries its sources in order, each
   * a tier of its own.
   */
  sources: UpstreamSource[];
  strategy?: RoutingStrategy;
  /** Message roles this model rejects, e.g. ['system']. */
  refusedRoles?: string[];
  /** The longest one stream of this model may run, in seconds (else the gateway's UPSTREAM_STREAM_MAX_MS). */
  maxStreamSeconds?: number;
  /**
   * How long one upstream call of this model may wait for its answer, or a stream for its next
   * read, in seconds (else the gateway's UPSTREAM_TIMEOUT_MS): reasoning models may think for minutes.
   */
  timeoutSeconds?: number;
}

/**
 * What the response cache may do with a model's answers. `allowed: false` keeps every answer
 * of the model out of the cache (a model whose answers must never repeat). A hit is charged at
 * `hitPriceShare` of the model's prices (0 to 1, at most 6 decimal places; default 0: free).
 */
export interface ModelResponseCache {
  allowed?: boolean;
  hitPriceShare?: number;
}

export interface CatalogueModel {
  id: string;
  aliases: string[];
  type: string;
  info: ModelInfo;
  tags: string[];
  modalities?: ModelModalities;
  capabilities?: string[];
  pricing?: ModelPricing;
  routing: ModelRouting;
  /** For a floating id (e.g. `typesafe/jev`): the pinned release it currently means. */
  resolvesTo?: string;
  /** The response cache's rules for this model (absent: allowed, hits free). */
  responseCache?: ModelResponseCache;
}

export interface CatalogueSnapshot {
  revision: number;
  models: CatalogueModel[];
}
