// POST /v1beta/models/{model}:embedContent and :batchEmbedContents.
//
// Vectors are the OpenAI route's (../openai/embeddings.ts): unit length, seeded by a hash of
// the text (the text parts of `content`, joined by a space), so the same text gets the same
// vector in every format. Length: `outputDimensionality` if given, else 3072 when the model
// name contains "large", else 1536. Like the real API, answers carry no token counts.
// A batch takes at most 100 requests; each request's `model`, when present, must name the
// model of the path (`models/{model}`; model-name controls are ignored in the comparison).
import type { RequestContext } from '../context';
import { parseModelControls } from '../controls';
import { embeddingDimensions, embeddingVector } from '../openai/embeddings';
import { isRecord, optionalPositiveInt } from '../util';

export const MAX_BATCH_REQUESTS = 100;
const MAX_DIMENSIONS = 16384;

/** One embedding in Gemini's shape, or Google's validation message. */
function embedOne(request: unknown, model: string, at: string): { values: number[] } | string {
  if (!isRecord(request)) return `Invalid value at '${at}': expected an EmbedContentRequest object.`;
  if (request.model !== undefined) {
    const named = typeof request.model === 'string' ? parseModelControls(request.model.replace(/^models\//, '')).model : undefined;
    if (named !== model) return `${at}.model: the model of each request must be the batch's model, models/${model}. Received ${JSON.stringify(request.model)}.`;
  }
  const content = request.content;
  if (!isRecord(content) || !Array.isArray(content.parts) || content.parts.length === 0) {
    return `${at}.content: a content with at least one part is required.`;
  }
  const texts: string[] = [];
  for (const part of content.parts as unknown[]) {
    if (!isRecord(part) || typeof part.text !== 'string') return `${at}.content.parts: only text parts can be embedded.`;
    texts.push(part.text);
  }
  const text = texts.join(' ');
  if (text.trim() === '') return `${at}.content: the text to embed is empty.`;
  const dimensions = optionalPositiveInt(request.outputDimensionality);
  if (Number.isNaN(dimensions) || (dimensions ?? 0) > MAX_DIMENSIONS) {
    return `${at}.outputDimensionality: expected an integer from 1 to ${MAX_DIMENSIONS}.`;
  }
  return { values: Array.from(embeddingVector(text, embeddingDimensions(model, dimensions))) };
}

function pathModel(ctx: RequestContext): string {
  const segment = ctx.params[0] ?? '';
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

export function embedContent(ctx: RequestContext): void {
  const embedding = embedOne(ctx.body, pathModel(ctx), 'request');
  if (typeof embedding === 'string') ctx.error(400, embedding);
  else ctx.json(200, { embedding });
}

export function batchEmbedContents(ctx: RequestContext): void {
  const body = ctx.body;
  const requests = isRecord(body) ? body.requests : undefined;
  if (!Array.isArray(requests) || requests.length === 0) {
    ctx.error(400, "Invalid JSON payload received. 'requests' must be a non-empty array of EmbedContentRequest.");
    return;
  }
  if (requests.length > MAX_BATCH_REQUESTS) {
    ctx.error(400, `* BatchEmbedContentsRequest.requests: at most ${MAX_BATCH_REQUESTS} requests are allowed per batch.`);
    return;
  }
  const model = pathModel(ctx);
  const embeddings: Array<{ values: number[] }> = [];
  for (let i = 0; i < requests.length; i++) {
    const embedding = embedOne(requests[i], model, `requests[${i}]`);
    if (typeof embedding === 'string') {
      ctx.error(400, embedding);
      return;
    }
    embeddings.push(embedding);
  }
  ctx.json(200, { embeddings });
}
