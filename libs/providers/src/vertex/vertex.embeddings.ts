import type { CallOptions, EmbeddingsAdapter, ProviderTarget, UpstreamEmbeddingRequest, UpstreamEmbeddingResult } from '../provider.types';
import { postJson } from '../transport/http-client';
import { RequestTranslationError, UpstreamProtocolError } from '../upstream.errors';
import { vertexModelUrl } from './vertex.urls';

/** Vertex AI's text embedding models take at most this many instances in one predict call. */
export const VERTEX_MAX_INSTANCES = 250;

/** What a document is embedded for; retrieval documents are what an OpenAI-format embeddings call is most often for. */
const TASK_TYPE = 'RETRIEVAL_DOCUMENT';

export interface VertexPredictRequest {
  instances: Array<{ content: string; task_type: string }>;
  parameters?: { outputDimensionality?: number };
}

export interface VertexPredictResponse {
  predictions?: Array<{ embeddings?: { values?: number[]; statistics?: { token_count?: number; truncated?: boolean } } }>;
}

/** The predict body for some texts: token arrays cannot be expressed (a 400 before anything is sent), and `user` has no equivalent. */
export function toVertexPredictRequest(request: UpstreamEmbeddingRequest): VertexPredictRequest {
  const instances = request.input.map((input) => {
    if (typeof input !== 'string') throw new RequestTranslationError('Expected text: Vertex AI embedding models take strings, not token arrays.', 'input');
    return { content: input, task_type: TASK_TYPE };
  });
  return { instances, ...(request.dimensions !== undefined && { parameters: { outputDimensionality: request.dimensions } }) };
}

/** One vector per instance, in order, and the token counts Vertex AI reports for each. */
export function fromVertexPredictResponse(provider: string, model: string, response: VertexPredictResponse, inputs: number): UpstreamEmbeddingResult {
  if (!response || !Array.isArray(response.predictions)) throw new UpstreamProtocolError(provider, 'no predictions in the Vertex AI answer');
  if (response.predictions.length !== inputs) throw new UpstreamProtocolError(provider, `${response.predictions.length} embeddings for ${inputs} inputs`);
  let tokens = 0;
  let counted = true;
  const embeddings = response.predictions.map((prediction) => {
    const values = prediction?.embeddings?.values;
    if (!Array.isArray(values) || values.length === 0 || !values.every((value) => typeof value === 'number' && Number.isFinite(value))) {
      throw new UpstreamProtocolError(provider, 'an embedding has no values');
    }
    const count = prediction.embeddings?.statistics?.token_count;
    if (typeof count === 'number' && Number.isInteger(count) && count >= 0) tokens += count;
    else counted = false;
    return values;
  });
  return { model, embeddings, ...(counted && { usage: { prompt_tokens: tokens, total_tokens: tokens } }) };
}

/**
 * Vertex AI text embeddings (`publishers/google/models/{model}:predict`). More inputs than one call
 * takes are sent as several calls at once and put back in order; usage is the sum of the counts.
 */
export class VertexEmbeddingsAdapter implements EmbeddingsAdapter {
  async embed(target: ProviderTarget, request: UpstreamEmbeddingRequest, options: CallOptions): Promise<UpstreamEmbeddingResult> {
    const { instances, parameters } = toVertexPredictRequest(request);
    const model = target.model.replace(/^publishers\/google\/models\//, '');
    const batches: VertexPredictRequest[] = [];
    for (let start = 0; start < instances.length; start += VERTEX_MAX_INSTANCES) batches.push({ instances: instances.slice(start, start + VERTEX_MAX_INSTANCES), ...(parameters && { parameters }) });
    const answers = await Promise.all(
      batches.map(async (batch) => {
        const response = await postJson<VertexPredictResponse>({
          provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits,
          url: vertexModelUrl(target, 'google', 'predict'),
          headers: {},
          authorize: target.authorize,
          body: batch,
          timeoutMs: options.timeoutMs,
          signal: options.signal,
          limits: target.limits,
        });
        return fromVertexPredictResponse(target.provider, model, response, batch.instances.length);
      }),
    );
    const usage = answers.every((answer) => answer.usage !== undefined)
      ? answers.reduce((sum, answer) => ({ prompt_tokens: sum.prompt_tokens + answer.usage!.prompt_tokens, total_tokens: sum.total_tokens + answer.usage!.prompt_tokens }), { prompt_tokens: 0, total_tokens: 0 })
      : undefined;
    return { model, embeddings: answers.flatMap((answer) => answer.embeddings), ...(usage && { usage }) };
  }
}
