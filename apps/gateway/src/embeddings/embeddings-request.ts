import { HttpStatus } from '@nestjs/common';
import { ErrorMessages, type CatalogueModel, type EmbeddingInput } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import { providerKind, sourceDefinition } from '@igw/providers';
import { checkTokenBudgets, whenCounted, type BudgetCheck, type BudgetVerdict } from '@igw/tokenizer';

/** Catalogue tag giving an embedding model's default vector length, e.g. `dimensions:1536`. */
const DIMENSIONS_TAG = /^dimensions:(\d+)$/;

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

/**
 * Refuses, before any upstream call, an input longer than the model's context. A text is only
 * counted when bounds on its bytes cannot decide (token-budget.ts), on the event loop when the
 * texts to count are short, else in the token counting workers: then the check returns a Promise.
 */
export function assertWithinContext(model: CatalogueModel, inputs: ReadonlyArray<string | number[]>): void | Promise<void> {
  const contextLength = model.info.contextLength;
  if (!contextLength) return;
  // An input's verdict, or its place in `checks` when its bytes alone cannot decide.
  const decided: Array<BudgetVerdict | number> = [];
  const checks: BudgetCheck[] = [];
  for (const input of inputs) {
    const bytes = typeof input === 'string' ? Buffer.byteLength(input) : 0;
    if (typeof input !== 'string') decided.push({ fits: input.length <= contextLength, tokens: input.length, exact: true });
    else if (bytes <= contextLength) decided.push({ fits: true, tokens: bytes, exact: false });
    else decided.push(checks.push({ texts: [input], budget: contextLength }) - 1);
  }
  const refuseFirstTooLong = (counted: BudgetVerdict[]) => {
    const verdicts = decided.map((verdict) => (typeof verdict === 'number' ? counted[verdict] : verdict));
    const index = verdicts.findIndex((verdict) => !verdict.fits);
    if (index >= 0) refuse(index, verdicts[index]);
  };
  const counted = checks.length > 0 ? checkTokenBudgets(checks) : [];
  return whenCounted(counted, refuseFirstTooLong);

  function refuse(index: number, verdict: BudgetVerdict): never {
    const field = typeof inputs[index] === 'string' && inputs.length === 1 ? 'input' : `input[${index}]`;
    throw new GatewayException(
      HttpStatus.BAD_REQUEST,
      `${ErrorMessages.bodyValidationPrefix} ${field}: Expected at most ${contextLength} tokens per input (the context of ${model.id}). Received ${verdict.exact ? 'about' : 'at least'} ${verdict.tokens} tokens`,
    );
  }
}

type Sources = CatalogueModel['routing']['sources'];

/**
 * Keeps the sources whose provider has an embeddings API (Anthropic has none). Unknown
 * providers stay, so the route planner can name them. A pinned source without one is the
 * client's choice (400); a model left with no usable source is a catalogue problem (503).
 */
export function embeddingSources(model: CatalogueModel, selected: Sources, pinned: boolean): Sources {
  const refused = (source: Sources[number]) => {
    const definition = sourceDefinition(source.provider);
    return definition !== undefined && providerKind(definition.kind).embeddings === undefined;
  };
  const usable = selected.filter((source) => !refused(source));
  if (usable.length > 0) return usable;
  const names = [...new Set(selected.map((source) => source.provider))].join(', ');
  if (pinned) {
    throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} provider: ${names} offers no embeddings API; pick another source of ${model.id}.`);
  }
  throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, `Service Unavailable: no source of model '${model.id}' offers embeddings (${names} has no embeddings API).`);
}
