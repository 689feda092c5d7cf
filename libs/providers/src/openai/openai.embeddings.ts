import type { CallOptions, EmbeddingsAdapter, ProviderTarget, UpstreamEmbeddingRequest, UpstreamEmbeddingResult } from '../provider.types';
import { postJson } from '../transport/http-client';
import { UpstreamProtocolError } from '../upstream.errors';
import type { OpenAiEndpoint } from './openai.chat';

const OPENAI_EMBEDDINGS_ENDPOINT: OpenAiEndpoint = {
  url: (target) => `${target.baseUrl}/embeddings`,
  headers: (target): Record<string, string> => (target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
};

/** OpenAI's embeddings answer, as far as the gateway reads it. */
export interface OpenAiEmbeddingResponse {
  object?: string;
  model?: string;
  data?: Array<{ object?: string; index?: number; embedding?: number[] | string }>;
  usage?: { prompt_tokens?: number; total_tokens?: number };
}

/**
 * The body sent to an OpenAI-format server. No `encoding_format`: floats are the default every
 * compatible server speaks (the gateway encodes base64 for its client itself).
 */
export function toOpenAiEmbeddingRequest(request: UpstreamEmbeddingRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { model: request.model, input: request.input };
  if (request.dimensions !== undefined) body.dimensions = request.dimensions;
  if (request.user !== undefined) body.user = request.user;
  return body;
}

/**
 * One vector per input, in input order (by `index`). Vectors sent as base64 (little-endian
 * float32, what OpenAI answers to `encoding_format: base64`) are decoded.
 */
export function fromOpenAiEmbeddingResponse(provider: string, response: OpenAiEmbeddingResponse, inputs: number): UpstreamEmbeddingResult {
  if (!response || !Array.isArray(response.data)) throw new UpstreamProtocolError(provider, 'no data in the embeddings answer');
  if (response.data.length !== inputs) throw new UpstreamProtocolError(provider, `${response.data.length} embeddings for ${inputs} inputs`);
  const embeddings: number[][] = new Array<number[]>(inputs);
  response.data.forEach((item, position) => {
    const index = Number.isInteger(item?.index) ? (item.index as number) : position;
    if (index < 0 || index >= inputs || embeddings[index]) throw new UpstreamProtocolError(provider, `embedding index ${index} is out of range or repeated`);
    embeddings[index] = vectorOf(provider, item?.embedding);
  });
  const promptTokens = response.usage?.prompt_tokens;
  return {
    model: typeof response.model === 'string' ? response.model : '',
    embeddings,
    ...(Number.isInteger(promptTokens) ? { usage: { prompt_tokens: promptTokens as number, total_tokens: response.usage?.total_tokens } } : {}),
  };
}

function vectorOf(provider: string, embedding: unknown): number[] {
  if (typeof embedding === 'string') {
    const bytes = Buffer.from(embedding, 'base64');
    if (bytes.length === 0 || bytes.length % 4 !== 0) throw new UpstreamProtocolError(provider, 'a base64 embedding is not a float32 array');
    return Array.from({ length: bytes.length / 4 }, (_, i) => bytes.readFloatLE(i * 4));
  }
  if (!Array.isArray(embedding) || embedding.length === 0 || !embedding.every((value) => typeof value === 'number' && Number.isFinite(value))) {
    throw new UpstreamProtocolError(provider, 'an embedding is not an array of numbers');
  }
  return embedding as number[];
}

/** OpenAI and every server that speaks its wire format: `POST {base}/embeddings`. */
export class OpenAiEmbeddingsAdapter implements EmbeddingsAdapter {
  constructor(private readonly endpoint: OpenAiEndpoint = OPENAI_EMBEDDINGS_ENDPOINT) {}

  async embed(target: ProviderTarget, request: UpstreamEmbeddingRequest, options: CallOptions): Promise<UpstreamEmbeddingResult> {
    const response = await postJson<OpenAiEmbeddingResponse>({
      provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits,
      url: this.endpoint.url(target),
      headers: this.endpoint.headers(target),
      body: toOpenAiEmbeddingRequest(request),
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: target.limits,
    });
    return fromOpenAiEmbeddingResponse(target.provider, response, request.input.length);
  }
}
