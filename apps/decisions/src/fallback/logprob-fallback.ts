import type { ChatMessage, DecisionAnswer, DecisionQuestion, DecisionUsage } from '@igw/contracts';
import { parseImageDataUrl, stateTexts } from '@igw/contracts';
import { RequestTranslationError, timedOutAfterPromptSent, UpstreamProtocolError, type UpstreamChatCompletion, type UpstreamChatRequest } from '@igw/providers';
import { estimateChatPromptTokens } from '@igw/tokenizer';
import { CHOICE_LABELS, combineRounds, labelDistribution, NOUL_LABELS, rounds, SCORE_LABELS, type TopLogprob } from './logprob-math';

/**
 * The fallback on a chat model with log probabilities: one call per question (per round for
 * more than 20 options), all in parallel, each asking for a single label token at temperature
 * 0 with the top 20 log probabilities (see logprob-math.ts for what is done with them).
 */
export const FALLBACK_CALL = { max_tokens: 1, temperature: 0, logprobs: true, top_logprobs: 20 } as const;

type ChatPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

/** What every question's prompt starts with: the content, as text and images. */
export function contentParts(shape: 'jev' | 'luna', body: Record<string, unknown>): ChatPart[] {
  if (shape === 'jev') {
    const parts: ChatPart[] = [{ type: 'text', text: `Content:\n${stateTexts(body.state).join('\n')}` }];
    const assets = (body.assets ?? {}) as Record<string, { format: string; data_base64: string }>;
    for (const [name, asset] of Object.entries(assets)) {
      parts.push({ type: 'text', text: `Image ${name}:` }, { type: 'image_url', image_url: { url: `data:image/${asset.format};base64,${asset.data_base64}` } });
    }
    return parts;
  }
  const input = body.input;
  if (typeof input === 'string') return [{ type: 'text', text: `Content:\n${input}` }];
  const parts: ChatPart[] = [{ type: 'text', text: 'Content:' }];
  for (const message of input as Array<{ content: string | Array<Record<string, unknown>> }>) {
    if (typeof message.content === 'string') {
      parts.push({ type: 'text', text: message.content });
      continue;
    }
    for (const part of message.content) {
      if (part.type === 'input_text') parts.push({ type: 'text', text: part.text as string });
      else if (typeof part.image_url === 'string' && parseImageDataUrl(part.image_url)) parts.push({ type: 'image_url', image_url: { url: part.image_url } });
    }
  }
  return parts;
}

/** The question block: instructions, then each label with what it means, then the labels to answer with. */
export function questionPrompt(instructions: string, labelled: ReadonlyArray<{ label: string; meaning: string }>): string {
  const lines = labelled.map(({ label, meaning }) => `${label}: ${meaning}`);
  const labels = labelled.map(({ label }) => label).join(', ');
  return `Question: ${instructions}\nOptions:\n${lines.join('\n')}\nAnswer with exactly one of ${labels} and nothing else.`;
}

export interface FallbackCall {
  /** Sends one chat request (with fallback across the model's sources); says which provider answered. */
  chat(request: Omit<UpstreamChatRequest, 'model'>): Promise<{ completion: UpstreamChatCompletion; provider: string }>;
}

/** Calls of one decision in flight at once: 64 questions of 255 options would otherwise be ~900 at a time against one upstream. */
export const MAX_PARALLEL_CALLS = 16;

export class LogprobFallback {
  /** Usage of every call that answered, kept even if a later one fails (it is still owed). */
  readonly usage: DecisionUsage = { input_tokens: 0, output_tokens: 0 };
  private inFlight = 0;
  private readonly waiting: Array<() => void> = [];

  constructor(
    private readonly caller: FallbackCall,
    private readonly content: ChatPart[],
  ) {}

  answer(questions: readonly DecisionQuestion[]): Promise<DecisionAnswer[]> {
    return Promise.all(questions.map((question) => this.answerOne(question)));
  }

  private async answerOne(question: DecisionQuestion): Promise<DecisionAnswer> {
    const { name, instructions } = question;
    switch (question.type) {
      case 'noul': {
        const [yes, no] = await this.distribution(instructions, [
          { label: 'yes', meaning: question.criteria?.true ?? 'yes' },
          { label: 'no', meaning: question.criteria?.false ?? 'no' },
        ], NOUL_LABELS);
        return { name, type: 'noul', probability: yes / (yes + no) };
      }
      case 'score': {
        const labelled = question.levels.map((meaning, level) => ({ label: SCORE_LABELS[level], meaning }));
        return { name, type: 'score', probabilities: await this.distribution(instructions, labelled, SCORE_LABELS.slice(0, labelled.length)) };
      }
      case 'choice':
        return { name, type: 'choice', probabilities: await this.choice(instructions, question.options.map((option) => option.description)) };
      case 'box':
        throw new RequestTranslationError('box questions need a model with the box capability; this model answers through log probabilities', `questions.${name}.type`);
    }
  }

  private async choice(instructions: string, meanings: string[]): Promise<number[]> {
    const groups = rounds(meanings.length);
    const ask = (indices: number[]) => {
      const labelled = indices.map((option, i) => ({ label: CHOICE_LABELS[i], meaning: meanings[option] }));
      return this.distribution(instructions, labelled, CHOICE_LABELS.slice(0, labelled.length));
    };
    if (groups.length === 1) return ask(groups[0]);
    const within = await Promise.all(groups.map(ask));
    const winners = groups.map((group, g) => group[within[g].indexOf(Math.max(...within[g]))]);
    const final = await ask(winners);
    return combineRounds(within, final);
  }

  /** Runs `call` once fewer than MAX_PARALLEL_CALLS of this decision are in flight. */
  private async limited<T>(call: () => Promise<T>): Promise<T> {
    // A finished call hands its slot straight to the next waiting one.
    if (this.inFlight >= MAX_PARALLEL_CALLS) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.inFlight++;
    try {
      return await call();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.inFlight--;
    }
  }

  private async distribution(instructions: string, labelled: Array<{ label: string; meaning: string }>, labels: readonly string[]): Promise<number[]> {
    const prompt = questionPrompt(instructions, labelled);
    const messages: ChatMessage[] = [
      { role: 'system', content: 'You judge content. Answer every question with a single label from its options.' },
      { role: 'user', content: [...this.content, { type: 'text', text: prompt }] },
    ];
    const { completion, provider } = await this.limited(() => this.caller.chat({ messages, ...FALLBACK_CALL })).catch((error: unknown) => {
      if (timedOutAfterPromptSent(error)) this.usage.input_tokens += estimateChatPromptTokens({ messages });
      throw error;
    });
    const usage = completion.usage;
    this.usage.input_tokens += Number.isSafeInteger(usage?.prompt_tokens) ? usage!.prompt_tokens : estimateChatPromptTokens({ messages });
    this.usage.output_tokens += Number.isSafeInteger(usage?.completion_tokens) ? usage!.completion_tokens : 1;
    const top = topLogprobsOf(completion);
    const distribution = labelDistribution(top, labels);
    if (!distribution) throw new UpstreamProtocolError(provider, `none of the labels ${labels.join(', ')} is among the top log probabilities`);
    return distribution;
  }
}

/** The first token's top log probabilities, as OpenAI-format servers return them. */
export function topLogprobsOf(completion: UpstreamChatCompletion): TopLogprob[] {
  const logprobs = completion.choices?.[0]?.logprobs as { content?: Array<{ token?: unknown; logprob?: unknown; top_logprobs?: unknown }> } | null | undefined;
  const first = logprobs?.content?.[0];
  const top = Array.isArray(first?.top_logprobs) ? (first.top_logprobs as Array<{ token?: unknown; logprob?: unknown }>) : first ? [first] : [];
  return top.filter((item): item is TopLogprob => typeof item.token === 'string' && typeof item.logprob === 'number');
}
