import { HttpStatus } from '@nestjs/common';
import { ErrorMessages, MAX_COMPLETION_CHOICES, type CatalogueModel, type CompletionPrompt, type CompletionRequestDto } from '@igw/contracts';
import { sourceServesCompletions } from '@igw/domain';
import { GatewayException } from '@igw/http';
import type { ServiceSettings } from '@igw/config';
import { sourceDefinition } from '@igw/providers';
import { checkTokenBudgets, whenCounted, type BudgetVerdict } from '@igw/tokenizer';
import { planTargets, selectSources, type UpstreamTarget } from '../paid-requests/upstream-route';

/** Provider kinds that speak OpenAI's legacy completions wire format. */
const KINDS_WITH_COMPLETIONS = new Set(['openai']);

function refuse(field: string, message: string): never {
  throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${field}: ${message}`);
}

/** The prompts one by one: texts, or token arrays (`[1, 2]` is one token array, not two prompts). */
export function promptList(prompt: CompletionPrompt): Array<string | number[]> {
  if (typeof prompt === 'string') return [prompt];
  if (prompt.length > 0 && typeof prompt[0] === 'number') return [prompt as number[]];
  return prompt as string[] | number[][];
}

/** The completions one request generates: per prompt, best_of of them (all billed), else n. */
export function generatedChoices(body: CompletionRequestDto, prompts: number): number {
  return prompts * Math.max(body.n ?? 1, body.best_of ?? 1);
}

/** Refuses what the request asks beyond the model's and the gateway's bounds, before anything is held. */
export function assertCompletionBounds(model: CatalogueModel, body: CompletionRequestDto, prompts: number): void {
  const { outputMax } = model.info;
  if (body.max_tokens !== undefined && body.max_tokens !== null && outputMax && body.max_tokens > outputMax) {
    refuse('max_tokens', `Expected at most ${outputMax} for ${model.id} (its output limit). Received ${body.max_tokens}`);
  }
  const choices = generatedChoices(body, prompts);
  if (choices > MAX_COMPLETION_CHOICES) {
    const field = (body.best_of ?? 1) > (body.n ?? 1) ? 'best_of' : 'n';
    refuse(field, `Expected at most ${MAX_COMPLETION_CHOICES} completions in all (prompts × the larger of n and best_of). Received ${prompts} × ${Math.max(body.n ?? 1, body.best_of ?? 1)} = ${choices}`);
  }
  if (body.stream_options !== undefined && body.stream_options !== null && body.stream !== true) {
    refuse('stream_options', `Expected stream: true alongside stream_options. Received ${body.stream === undefined || body.stream === null ? 'no stream' : `stream: ${String(body.stream)}`}`);
  }
}

/**
 * The model's targets for legacy completions: the sources that serve it (every source of a
 * `completions` model, a chat model's `native: [completions]` ones) whose provider speaks
 * OpenAI's format. `provider` picks among them as elsewhere; a pinned source that does not serve
 * it is the client's choice (400), a model left with none a catalogue problem (503).
 */
export function completionTargets(model: CatalogueModel, provider: string | undefined, settings: ServiceSettings): readonly UpstreamTarget[] {
  const selected = selectSources(model, provider);
  const usable = selected.filter((source) => {
    const kind = sourceDefinition(source.provider)?.kind;
    return sourceServesCompletions(model, source) && (kind === undefined || KINDS_WITH_COMPLETIONS.has(kind));
  });
  if (usable.length > 0) return planTargets(model, usable, settings);
  const names = [...new Set(selected.map((source) => source.provider))].join(', ');
  if (provider !== undefined && provider.toLowerCase() !== 'auto') refuse('provider', `${names} serves no legacy completions for ${model.id}; pick another source of it, or leave provider out.`);
  throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, `Service Unavailable: no source of model '${model.id}' that serves legacy completions speaks OpenAI's format.`);
}

/**
 * Refuses, before any upstream call, a prompt that with its suffix and the tokens asked for
 * cannot fit the model's context. Nothing is counted while the body's bytes would fit; texts are
 * counted only where bounds on their bytes cannot decide (in the token counting workers when long).
 */
export function assertPromptsFitContext(model: CatalogueModel, body: CompletionRequestDto, prompts: ReadonlyArray<string | number[]>, bodyBytes: number): void | Promise<void> {
  const { contextLength } = model.info;
  const asked = body.max_tokens ?? 0;
  if (!contextLength || bodyBytes + asked <= contextLength) return;
  const budget = contextLength - asked;
  const suffix = typeof body.suffix === 'string' ? [body.suffix] : [];
  const field = (index: number) => (prompts.length === 1 && typeof body.prompt === 'string' ? 'prompt' : `prompt[${index}]`);
  const tooLong = (index: number, tokens: number, exact: boolean): never =>
    refuse(field(index), `the prompt is ${exact ? 'about' : 'at least'} ${tokens} tokens${suffix.length > 0 ? ' with its suffix' : ''}${asked ? ` plus the ${asked} tokens asked for` : ''}, more than the ${contextLength}-token context of ${model.id}.`);
  const textual: number[] = [];
  prompts.forEach((prompt, index) => {
    if (typeof prompt !== 'string') {
      if (prompt.length > budget) tooLong(index, prompt.length, true);
    } else textual.push(index);
  });
  if (textual.length === 0) return;
  const verdicts = checkTokenBudgets(textual.map((index) => ({ texts: [prompts[index] as string, ...suffix], budget })));
  return whenCounted(verdicts, (counted: BudgetVerdict[]) => {
    const first = counted.findIndex((verdict) => !verdict.fits);
    if (first >= 0) tooLong(textual[first], counted[first].tokens, counted[first].exact);
  });
}
