import type { DecisionAnswer, DecisionQuestion, DecisionShape, DecisionUsage } from '@igw/contracts';
import type { CallOptions, ProviderTarget } from '../provider.types';
import { postJson } from '../transport/http-client';
import { UpstreamProtocolError } from '../upstream.errors';

/**
 * Upstream decision APIs. Two wire formats:
 *
 * - System One (TypeSafe, and llama.cpp / vLLM servers that expose it): `POST {base}/systemone`
 *   with the Jev body as the client sent it (`model` replaced by the source's), answered with
 *   `{model, answers: {<question>: <Jev answer>}, usage: {input_tokens, output_tokens}}`.
 *   OpenRouter serves the same format at `POST {base}/decisions`.
 * - OpenAI decisions (the Luna shape): `POST {base}/decisions` with `{model, input, questions}`,
 *   answered with `{id, object: 'decision', model, answers: [<named answer>...], usage:
 *   {input_tokens, output_tokens}}`.
 *
 * Both answers are read into {@link DecisionAnswer}s: every question must be answered, each
 * probability must lie in [0, 1], and a question's probabilities are renormalised to sum to 1
 * (an answer whose probabilities sum to 0 is refused).
 */
export interface UpstreamDecisionRequest {
  /** The client's validated body in the source's shape, without `model`. */
  body: Record<string, unknown>;
  questions: readonly DecisionQuestion[];
}

export interface UpstreamDecisionResult {
  answers: DecisionAnswer[];
  /** Absent when the upstream reports none: the caller counts. */
  usage?: DecisionUsage;
}

export interface DecisionsAdapter {
  readonly shape: DecisionShape;
  decide(target: ProviderTarget, request: UpstreamDecisionRequest, options: CallOptions): Promise<UpstreamDecisionResult>;
}

const bearer = (target: ProviderTarget): Record<string, string> => (target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {});

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function probabilityOf(provider: string, value: unknown, what: string): number {
  if (typeof value !== 'number' || !Number.isFinite(value) || value < 0 || value > 1) throw new UpstreamProtocolError(provider, `${what} is not a probability`);
  return value;
}

/** Renormalised to sum to 1, as upstreams round their probabilities. */
function distribution(provider: string, values: number[], what: string): number[] {
  const total = values.reduce((sum, value) => sum + value, 0);
  if (!(total > 0)) throw new UpstreamProtocolError(provider, `the probabilities of ${what} sum to 0`);
  return values.map((value) => value / total);
}

function usageOf(usage: unknown): DecisionUsage | undefined {
  if (!isRecord(usage)) return undefined;
  const input = usage.input_tokens;
  const output = usage.output_tokens ?? 0;
  if (!Number.isSafeInteger(input) || (input as number) < 0 || !Number.isSafeInteger(output) || (output as number) < 0) return undefined;
  return { input_tokens: input as number, output_tokens: output as number };
}

/** A Jev answer object read against its question. */
export function fromJevAnswer(provider: string, question: DecisionQuestion, answer: unknown): DecisionAnswer {
  const name = question.name;
  if (!isRecord(answer) || answer.type !== question.type) throw new UpstreamProtocolError(provider, `no ${question.type} answer to question '${name}'`);
  switch (question.type) {
    case 'noul':
      return { name, type: 'noul', probability: probabilityOf(provider, answer.noul, `answer '${name}'`) };
    case 'choice': {
      const probabilities = isRecord(answer.probabilities) ? answer.probabilities : {};
      const values = question.options.map((option) => probabilityOf(provider, probabilities[option.key] ?? 0, `option '${option.key}' of '${name}'`));
      return { name, type: 'choice', probabilities: distribution(provider, values, `'${name}'`) };
    }
    case 'score': {
      const probabilities = isRecord(answer.probabilities) ? answer.probabilities : {};
      const values = question.levels.map((_, level) => probabilityOf(provider, probabilities[String(level)] ?? 0, `level ${level} of '${name}'`));
      return { name, type: 'score', probabilities: distribution(provider, values, `'${name}'`) };
    }
    case 'box': {
      const [top, bottom, left, right, confidence] = (['top', 'bottom', 'left', 'right', 'confidence'] as const).map((edge) =>
        probabilityOf(provider, answer[edge], `${edge} of '${name}'`),
      );
      if (top > bottom || left > right) throw new UpstreamProtocolError(provider, `the box of '${name}' has its edges crossed`);
      return { name, type: 'box', top, bottom, left, right, confidence };
    }
  }
}

/** A Luna named answer read against its question; `refusal` is kept as the model's answer. */
export function fromLunaAnswer(provider: string, question: DecisionQuestion, answer: unknown): DecisionAnswer {
  const name = question.name;
  if (isRecord(answer) && answer.type === 'refusal') return { name, type: 'refusal' };
  const expected = question.type === 'noul' ? 'predicate' : question.type;
  if (!isRecord(answer) || answer.type !== expected) throw new UpstreamProtocolError(provider, `no ${expected} answer to question '${name}'`);
  if (question.type === 'noul') return { name, type: 'noul', probability: probabilityOf(provider, answer.probability, `answer '${name}'`) };
  const listed = Array.isArray(answer.probabilities) ? (answer.probabilities as unknown[]).filter(isRecord) : [];
  if (question.type === 'choice') {
    const byValue = new Map(listed.map((item) => [item.value, item.probability]));
    const values = question.options.map((option) => probabilityOf(provider, byValue.get(option.key) ?? 0, `choice '${option.key}' of '${name}'`));
    return { name, type: 'choice', probabilities: distribution(provider, values, `'${name}'`) };
  }
  if (question.type === 'score') {
    const byLabel = new Map(listed.map((item) => [item.label, item.probability]));
    const labels = question.labels ?? question.levels;
    const values = labels.map((label) => probabilityOf(provider, byLabel.get(label) ?? 0, `level '${label}' of '${name}'`));
    return { name, type: 'score', probabilities: distribution(provider, values, `'${name}'`) };
  }
  throw new UpstreamProtocolError(provider, `question '${name}' has no Luna form`);
}

/** System One: the Jev shape. */
export class SystemOneDecisionsAdapter implements DecisionsAdapter {
  readonly shape = 'jev' as const;

  constructor(private readonly path = '/systemone') {}

  async decide(target: ProviderTarget, request: UpstreamDecisionRequest, options: CallOptions): Promise<UpstreamDecisionResult> {
    const response = await postJson<Record<string, unknown>>({
      provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits,
      url: `${target.baseUrl}${this.path}`,
      headers: bearer(target),
      body: { ...request.body, model: target.model },
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: target.limits,
    });
    if (!isRecord(response) || !isRecord(response.answers)) throw new UpstreamProtocolError(target.provider, 'no answers in the decision');
    const answers = response.answers;
    return {
      answers: request.questions.map((question) => fromJevAnswer(target.provider, question, answers[question.name])),
      usage: usageOf(response.usage),
    };
  }
}

/** OpenAI's decisions endpoint: the Luna shape. */
export class OpenAiDecisionsAdapter implements DecisionsAdapter {
  readonly shape = 'luna' as const;

  async decide(target: ProviderTarget, request: UpstreamDecisionRequest, options: CallOptions): Promise<UpstreamDecisionResult> {
    const response = await postJson<Record<string, unknown>>({
      provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits,
      url: `${target.baseUrl}/decisions`,
      headers: bearer(target),
      body: { ...request.body, model: target.model },
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: target.limits,
    });
    if (!isRecord(response) || !Array.isArray(response.answers)) throw new UpstreamProtocolError(target.provider, 'no answers in the decision');
    const byName = new Map((response.answers as unknown[]).filter(isRecord).map((answer) => [answer.name, answer]));
    return {
      answers: request.questions.map((question) => fromLunaAnswer(target.provider, question, byName.get(question.name))),
      usage: usageOf(response.usage),
    };
  }
}

const SYSTEM_ONE = new SystemOneDecisionsAdapter();
const OPENROUTER_DECISIONS = new SystemOneDecisionsAdapter('/decisions');
const OPENAI_DECISIONS = new OpenAiDecisionsAdapter();

/** The decisions API of a provider for a request shape; undefined when it has none (the source is skipped). */
export function decisionsAdapterFor(provider: string, shape: DecisionShape): DecisionsAdapter | undefined {
  const name = provider.toLowerCase();
  if (shape === 'luna') return name === 'openai' ? OPENAI_DECISIONS : undefined;
  if (name === 'openrouter') return OPENROUTER_DECISIONS;
  return name === 'typesafe' || name === 'vllm' || name === 'ollama' ? SYSTEM_ONE : undefined;
}
