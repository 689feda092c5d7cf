import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MetaDto } from '../chat/chat-completion';
import type { DecisionQuestion, DecisionShape } from './decision-questions';

/**
 * One answer as upstream adapters and the chat-logprobs fallback produce it, whatever the
 * client's shape: probabilities in the order of the question's options or levels.
 */
export type DecisionAnswer =
  | { name: string; type: 'noul'; probability: number }
  | { name: string; type: 'choice'; probabilities: number[] }
  | { name: string; type: 'score'; probabilities: number[] }
  | { name: string; type: 'box'; top: number; bottom: number; left: number; right: number; confidence: number }
  | { name: string; type: 'refusal' };

/** Decision usage: input tokens are billed, output tokens reported at no charge. */
export interface DecisionUsage {
  input_tokens: number;
  output_tokens: number;
}

/** Answers of the Jev shape, keyed by question name. */
export type JevAnswer =
  | { type: 'noul'; noul: number }
  | { type: 'choice'; choice: string; confidence: number; probabilities: Record<string, number> }
  | { type: 'score'; score: number; confidence: number; legend: Record<string, string>; probabilities: Record<string, number> }
  | { type: 'box'; top: number; bottom: number; left: number; right: number; confidence: number };

/** Answers of the Luna shape, in question order. */
export type LunaAnswer =
  | { type: 'predicate'; name: string; probability: number }
  | { type: 'choice'; name: string; choice: string; confidence: number; probabilities: Array<{ value: string; probability: number }> }
  | { type: 'score'; name: string; score: number; confidence: number; probabilities: Array<{ label: string; probability: number }> }
  | { type: 'refusal'; name: string };

/** The request the gateway puts on the decisions queue, once validated, authenticated and admitted. */
export interface DecideJob {
  requestId: string;
  /** The concrete model id that answers (a floating id already resolved). */
  model: string;
  shape: DecisionShape;
  /** `decisions-api`: each source's decisions endpoint; `chat-logprobs`: the fallback on a chat model's log probabilities. */
  via: 'decisions-api' | 'chat-logprobs';
  sources: Array<{ provider: string; model: string }>;
  /** The client's validated body in its shape, without `model` and `provider`. */
  request: Record<string, unknown>;
  questions: DecisionQuestion[];
  /** The gateway tokenizer's count of the content, billed when an upstream reports no usage. */
  estimatedInputTokens: number;
  /** Bounds every upstream call: the reply must reach the gateway before its own timeout. */
  upstreamTimeoutMs: number;
}

/**
 * Why a decision failed, as plain data across the queue; the gateway turns it into the same
 * client error a chat call's upstream failure gets.
 */
export type DecideFailure =
  | { kind: 'http'; provider: string; status: number; upstreamMessage: string; retryAfterSeconds?: number }
  | { kind: 'timeout'; provider: string; timeoutMs: number }
  | { kind: 'unavailable' | 'protocol'; provider: string; message: string }
  | { kind: 'translation'; message: string; param?: string }
  | { kind: 'unconfigured'; message: string }
  | { kind: 'internal'; message: string };

export type DecideReply =
  | { ok: true; answers: DecisionAnswer[]; usage: DecisionUsage }
  /** `inputTokensBilled`: what upstreams processed although the decision failed (0 when nothing is owed). */
  | { ok: false; failure: DecideFailure; inputTokensBilled: number };

export function probabilityOfLargest(probabilities: readonly number[]): { index: number; probability: number } {
  let index = 0;
  probabilities.forEach((probability, i) => {
    if (probability > probabilities[index]) index = i;
  });
  return { index, probability: probabilities[index] };
}

/** Σ i·pᵢ with levels numbered from 0, lowest first. */
export function expectedLevel(probabilities: readonly number[]): number {
  return probabilities.reduce((sum, probability, level) => sum + level * probability, 0);
}

/** The Jev answers object: every question key, choice and score with their most probable option and expected level. */
export function toJevAnswers(questions: readonly DecisionQuestion[], answers: readonly DecisionAnswer[]): Record<string, JevAnswer> {
  const byName = new Map(answers.map((answer) => [answer.name, answer]));
  const result: Record<string, JevAnswer> = {};
  for (const question of questions) {
    const answer = byName.get(question.name);
    if (answer?.type === 'noul') result[question.name] = { type: 'noul', noul: answer.probability };
    else if (answer?.type === 'choice' && question.type === 'choice') {
      const best = probabilityOfLargest(answer.probabilities);
      result[question.name] = {
        type: 'choice',
        choice: question.options[best.index].key,
        confidence: best.probability,
        probabilities: Object.fromEntries(question.options.map((option, i) => [option.key, answer.probabilities[i]])),
      };
    } else if (answer?.type === 'score' && question.type === 'score') {
      result[question.name] = {
        type: 'score',
        score: expectedLevel(answer.probabilities),
        confidence: probabilityOfLargest(answer.probabilities).probability,
        legend: Object.fromEntries(question.levels.map((level, i) => [String(i), level])),
        probabilities: Object.fromEntries(answer.probabilities.map((probability, i) => [String(i), probability])),
      };
    } else if (answer?.type === 'box') {
      const { top, bottom, left, right, confidence } = answer;
      result[question.name] = { type: 'box', top, bottom, left, right, confidence };
    }
  }
  return result;
}

/** The Luna answers array, in question order; a question the model declined is a `refusal`. */
export function toLunaAnswers(questions: readonly DecisionQuestion[], answers: readonly DecisionAnswer[]): LunaAnswer[] {
  const byName = new Map(answers.map((answer) => [answer.name, answer]));
  return questions.map((question): LunaAnswer => {
    const answer = byName.get(question.name);
    const name = question.name;
    if (answer?.type === 'noul') return { type: 'predicate', name, probability: answer.probability };
    if (answer?.type === 'choice' && question.type === 'choice') {
      const best = probabilityOfLargest(answer.probabilities);
      return {
        type: 'choice',
        name,
        choice: question.options[best.index].key,
        confidence: best.probability,
        probabilities: question.options.map((option, i) => ({ value: option.key, probability: answer.probabilities[i] })),
      };
    }
    if (answer?.type === 'score' && question.type === 'score') {
      return {
        type: 'score',
        name,
        score: expectedLevel(answer.probabilities),
        confidence: probabilityOfLargest(answer.probabilities).probability,
        probabilities: answer.probabilities.map((probability, i) => ({ label: question.labels?.[i] ?? String(i), probability })),
      };
    }
    return { type: 'refusal', name };
  });
}

export class DecisionUsageDto {
  @ApiProperty({ description: 'Tokens of the content, instructions and criteria read (billed)' }) input_tokens!: number;
  @ApiProperty({ description: 'Tokens generated; reported, never charged (0 for models that produce none)' }) output_tokens!: number;
}

/** The spec's Decision result, plus `meta.usage` as every billable response carries. */
export class DecisionResultDto {
  @ApiProperty({ description: 'The concrete model version that answered (a floating id names its current pinned release)', example: 'typesafe/jev-1.14' })
  model!: string;

  @ApiProperty({
    description:
      'Jev shape: an object keyed by every question key. Luna shape (openai/gpt-6-luna): an array of named answers in question order. Probabilities of one question sum to 1.',
    oneOf: [
      {
        type: 'object',
        title: 'Jev answers',
        additionalProperties: { type: 'object' },
        example: {
          is_spam: { type: 'noul', noul: 0.07 },
          topic: { type: 'choice', choice: 'billing', confidence: 0.81, probabilities: { billing: 0.81, shipping: 0.14, other: 0.05 } },
          urgency: { type: 'score', score: 1.3, confidence: 0.62, legend: { '0': 'can wait', '1': 'this week', '2': 'today' }, probabilities: { '0': 0.08, '1': 0.54, '2': 0.38 } },
        },
      },
      {
        type: 'array',
        title: 'Luna answers',
        items: { type: 'object' },
        example: [
          { type: 'predicate', name: 'is_spam', probability: 0.07 },
          { type: 'choice', name: 'topic', choice: 'billing', confidence: 0.81, probabilities: [{ value: 'billing', probability: 0.81 }, { value: 'other', probability: 0.19 }] },
          { type: 'refusal', name: 'diagnosis' },
        ],
      },
    ],
  })
  answers!: Record<string, JevAnswer> | LunaAnswer[];

  @ApiProperty({ type: DecisionUsageDto }) usage!: DecisionUsage;

  @ApiPropertyOptional({ type: MetaDto, nullable: true, description: 'credits_used and usd_spent: exactly what the ledger records (input tokens only)' })
  meta?: MetaDto | null;
}
