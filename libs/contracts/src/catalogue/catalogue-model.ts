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

/** Charge `price` USD for every `per` units of `unit`. */
export interface PriceUnit {
  unit: string;
  price: number;
  per: number;
}

export interface ModelPricing {
  kind: 'fixed';
  currency: 'USD';
  units: PriceUnit[];
  dimensions?: string[];
  variants?: Array<{ dimensions: Record<string, string>; units: PriceUnit[] }>;
}

/** One upstream that can serve the model: provider key (e.g. `openai`) and its model name there. */
export interface UpstreamSource {
  provider: string;
  model: string;
}

export interface ModelRouting {
  sources: UpstreamSource[];
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
}

export interface CatalogueSnapshot {
  revision: number;
  models: CatalogueModel[];
}
