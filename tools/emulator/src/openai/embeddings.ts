// POST /v1/embeddings: deterministic unit vectors.
//
// Each input's vector is drawn from a PRNG seeded by a hash of the input text, then
// normalised to length 1 (values rounded to float32, so `encoding_format: "base64"`,
// which the official SDKs request by default, decodes to the very same numbers).
// Length: `dimensions` if given, else 3072 when the model name contains "large",
// else 1536. prompt_tokens = words in all inputs (token-array inputs: their length).
// A `@no-usage` model-name suffix (../controls.ts) omits `usage`.
import type { RequestContext } from '../context';
import { seededRandom } from '../seeded-random';
import { countWords, hashText, isRecord, optionalPositiveInt } from '../util';

const MAX_INPUTS = 2048;
const MAX_DIMENSIONS = 16384;

type EmbeddingInput = string | number[];

export function embeddingDimensions(model: string, dimensions?: number): number {
  return dimensions ?? (model.includes('large') ? 3072 : 1536);
}

/** The emulator's deterministic unit vector for a text. */
export function embeddingVector(text: string, dimensions: number): Float32Array {
  const random = seededRandom(hashText(text));
  const raw = new Float64Array(dimensions);
  let sumSquares = 0;
  for (let i = 0; i < dimensions; i++) {
    const value = random() * 2 - 1;
    raw[i] = value;
    sumSquares += value * value;
  }
  const norm = Math.sqrt(sumSquares) || 1;
  const vector = new Float32Array(dimensions);
  for (let i = 0; i < dimensions; i++) vector[i] = raw[i] / norm;
  return vector;
}

export function embeddings(ctx: RequestContext): void {
  const body = ctx.body;
  if (!isRecord(body)) {
    ctx.error(400, 'The request body must be a JSON object.');
    return;
  }
  const { model } = body;
  if (typeof model !== 'string' || model === '') {
    ctx.error(400, 'you must provide a model parameter', { param: 'model' });
    return;
  }
  const inputs = parseInputs(body.input);
  if (inputs === undefined) {
    ctx.error(400, "Invalid 'input': expected a string, an array of strings, or token arrays (at most 2048 inputs).", {
      param: 'input',
    });
    return;
  }
  const dimensions = optionalPositiveInt(body.dimensions);
  if (Number.isNaN(dimensions) || (dimensions ?? 0) > MAX_DIMENSIONS) {
    ctx.error(400, `Invalid 'dimensions': expected an integer from 1 to ${MAX_DIMENSIONS}.`, { param: 'dimensions' });
    return;
  }
  const encoding = body.encoding_format ?? 'float';
  if (encoding !== 'float' && encoding !== 'base64') {
    ctx.error(400, "Invalid 'encoding_format': expected 'float' or 'base64'.", { param: 'encoding_format' });
    return;
  }

  const length = embeddingDimensions(model, dimensions);
  let promptTokens = 0;
  const data = inputs.map((input, index) => {
    const isText = typeof input === 'string';
    promptTokens += isText ? countWords(input) : input.length;
    const vector = embeddingVector(isText ? input : `tokens:${input.join(',')}`, length);
    const embedding = encoding === 'base64' ? Buffer.from(vector.buffer).toString('base64') : Array.from(vector);
    return { object: 'embedding', index, embedding };
  });
  const usage = { prompt_tokens: promptTokens, total_tokens: promptTokens };
  ctx.json(200, { object: 'list', data, model, ...(ctx.controls.noUsage === true ? {} : { usage }) });
}

/** string | string[] | number[] (one token array) | number[][]; undefined if invalid. */
function parseInputs(input: unknown): EmbeddingInput[] | undefined {
  if (typeof input === 'string') return [input];
  if (!Array.isArray(input) || input.length === 0 || input.length > MAX_INPUTS) return undefined;
  const items = input as unknown[];
  if (items.every((item) => typeof item === 'string')) return items as string[];
  if (items.every(isTokenId)) return [items as number[]];
  if (items.every((item) => Array.isArray(item) && item.length > 0 && (item as unknown[]).every(isTokenId))) {
    return items as number[][];
  }
  return undefined;
}

function isTokenId(value: unknown): boolean {
  return typeof value === 'number' && Number.isInteger(value) && value >= 0;
}
