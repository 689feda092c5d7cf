import type { CallOptions, EmbeddingsAdapter, ProviderTarget, UpstreamEmbeddingRequest, UpstreamEmbeddingResult } from '../provider.types';
import { postJson } from '../transport/http-client';
import { RequestTranslationError, UpstreamProtocolError } from '../upstream.errors';
import { geminiUrl } from './gemini.chat';

/** The Gemini API takes at most this many requests in one batchEmbedContents call. */
export const GEMINI_MAX_BATCH = 100;

export interface GeminiBatchEmbedRequest {
  requests: Array<{ model: string; content: { parts: Array<{ text: string }> }; outputDimensionality?: number }>;
}

export interface GeminiBatchEmbedResponse {
  embeddings?: Array<{ values?: number[] }>;
}

/**
 * The batchEmbedContents body for some texts. Gemini embeds text only: token arrays cannot be
 * expressed (a 400 before anything is sent), and `user` has no equivalent (dropped).
 */
export function toGeminiEmbedRequest(request: UpstreamEmbeddingRequest): GeminiBatchEmbedRequest {
  const model = `models/${request.model.replace(/^models\//, '')}`;
  return {
    requests: request.input.map((input) => {
      if (typeof input !== 'string') throw new RequestTranslationError('Expected text: Gemini embedding models take strings, not token arrays.', 'input');
      return { model, content: { parts: [{ text: input }] }, ...(request.dimensions !== undefined ? { outputDimensionality: request.dimensions } : {}) };
    }),
  };
}

/** One vector per request, in order. Gemini reports no token counts: `usage` stays empty for the caller to count. */
export function fromGeminiEmbedResponse(provider: string, model: string, response: GeminiBatchEmbedResponse, inputs: number): UpstreamEmbeddingResult {
  if (!response || !Array.isArray(response.embeddings)) throw new UpstreamProtocolError(provider, 'no embeddings in the Gemini answer');
  if (response.embeddings.length !== inputs) throw new UpstreamProtocolError(provider, `${response.embeddings.length} embeddings for ${inputs} inputs`);
  const embeddings = response.embeddings.map((embedding) => {
    const values = embedding?.values;
    if (!Array.isArray(values) || values.length === 0 || !values.every((value) => typeof value === 'number' && Number.isFinite(value))) {
      throw new UpstreamProtocolError(provider, 'an embedding has no values');
    }
    return values;
  });
  return { model, embeddings };
}

/**
 * Google Gemini API embeddings (`models/{model}:batchEmbedContents`). More inputs than one
 * batch takes are sent as several batches at once and put back in order.
 */
export class GeminiEmbeddingsAdapter implements EmbeddingsAdapter {
  async embed(target: ProviderTarget, request: UpstreamEmbeddingRequest, options: CallOptions): Promise<UpstreamEmbeddingResult> {
    const { requests } = toGeminiEmbedRequest(request);
    const batches: GeminiBatchEmbedRequest[] = [];
    for (let start = 0; start < requests.length; start += GEMINI_MAX_BATCH) batches.push({ requests: requests.slice(start, start + GEMINI_MAX_BATCH) });
    const model = target.model.replace(/^models\//, '');
    const answers = await Promise.all(
      batches.map(async (batch) => {
        const response = await postJson<GeminiBatchEmbedResponse>({
          provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits,
          url: geminiUrl(target, 'batchEmbedContents'),
          headers: target.apiKey ? { 'x-goog-api-key': target.apiKey } : {},
          body: batch,
          timeoutMs: options.timeoutMs,
          signal: options.signal,
          limits: target.limits,
        });
        return fromGeminiEmbedResponse(target.provider, model, response, batch.requests.length);
      }),
    );
    return { model, embeddings: answers.flatMap((answer) => answer.embeddings) };
  }
}
