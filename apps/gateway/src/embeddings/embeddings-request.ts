import { HttpStatus } from '@nestjs/common';
import { ErrorMessages, type CatalogueModel, type EmbeddingInput } from '@igw/contracts';
import { countTokens } from '@igw/domain';
import { GatewayException } from '@igw/platform';
import { embeddingsAdapterFor, findProvider } from '@igw/providers';

const EMBEDDINGS_ENDPOINT_KIND = 'embeddings';
/** Catalogue tag giving an embedding model's default vector length, e.g. `dimensions:1536`. */
const DIMENSIONS_TAG = /^dimensions:(\d+)$/;

export function assertEmbeddingModel(model: CatalogueModel): void {
  if (model.type.split('/').pop() !== EMBEDDINGS_ENDPOINT_KIND) {
    throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} model: '${model.id}' is a ${model.type} model, not an embeddings model.`);
  }
}

/** The model's default (and largest) vector length, from its `dimensions:<n>` tag; undefined when the catalogue gives none. */
export function defaultDimensions(model: CatalogueModel): number | undefined {
  for (const tag of model.tags) {
    const found = DIMENSIONS_TAG.exec(tag);
    if (found) return Number(found[1]);
  }
  return undefined;
}

/** `dimensions` may shorten the vectors, never lengthen them. */
export function assertDimensions(model: CatalogueModel, dimensions: number | undefined): void {
  const limit = defaultDimensions(model);
  if (dimensions === undefined || limit === undefined || dimensions <= limit) return;
  throw new GatewayException(
    HttpStatus.BAD_REQUEST,
    `${ErrorMessages.bodyValidationPrefix} dimensions: Expected an integer from 1 to ${limit} for ${model.id} (its vector length). Received ${dimensions}`,
  );
}

/** The inputs as a list: texts, or token arrays (`[1, 2]` is one token array, not two inputs). */
export function inputList(input: EmbeddingInput): string[] | number[][] {
  if (typeof input === 'string') return [input];
  if (input.length > 0 && typeof input[0] === 'number') return [input as number[]];
  return input as string[] | number[][];
}

/** Tokens of one input: the gateway tokenizer for text, the length of a token array. */
export function inputTokens(input: string | number[]): number {
  return typeof input === 'string' ? countTokens(input) : input.length;
}

/**
 * Refuses, before any upstream call, an input longer than the model's context. A text is only
 * tokenized when it has more UTF-8 bytes than the context has tokens (a token is at least a byte).
 */
export function assertWithinContext(model: CatalogueModel, inputs: ReadonlyArray<string | number[]>): void {
  const contextLength = model.info.contextLength;
  if (!contextLength) return;
  inputs.forEach((input, index) => {
    const size = typeof input === 'string' ? Buffer.byteLength(input) : input.length;
    if (size <= contextLength) return;
    const tokens = inputTokens(input);
    if (tokens <= contextLength) return;
    const field = typeof input === 'string' && inputs.length === 1 ? 'input' : `input[${index}]`;
    throw new GatewayException(
      HttpStatus.BAD_REQUEST,
      `${ErrorMessages.bodyValidationPrefix} ${field}: Expected at most ${contextLength} tokens per input (the context of ${model.id}). Received about ${tokens} tokens`,
    );
  });
}

type Sources = CatalogueModel['routing']['sources'];

/**
 * Keeps the sources whose provider has an embeddings API (Anthropic has none). Unknown
 * providers stay, so the route planner can name them. A pinned source without one is the
 * client's choice (400); a model left with no usable source is a catalogue problem (503).
 */
export function embeddingSources(model: CatalogueModel, selected: Sources, pinned: boolean): Sources {
  const refused = (source: Sources[number]) => {
    const definition = findProvider(source.provider);
    return definition !== undefined && embeddingsAdapterFor(definition.kind) === undefined;
  };
  const usable = selected.filter((source) => !refused(source));
  if (usable.length > 0) return usable;
  const names = [...new Set(selected.map((source) => source.provider))].join(', ');
  if (pinned) {
    throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} provider: ${names} offers no embeddings API; pick another source of ${model.id}.`);
  }
  throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, `Service Unavailable: no source of model '${model.id}' offers embeddings (${names} has no embeddings API).`);
}
