import { countTokens as countO200kTokens } from 'gpt-tokenizer/encoding/o200k_base';

/**
 * Special-token names in a client's text (`<|endoftext|>`) are counted as the plain text they
 * are: an upstream never reads them as control tokens from a message either.
 */
const PLAIN_TEXT = { disallowedSpecial: new Set<string>() };

/**
 * BPE merges one pre-tokenized piece (a run of letters, of punctuation or of whitespace) in
 * time quadratic in its length: one 24,000-letter word took seconds. Runs longer than this
 * are counted in slices of this length, which keeps every count linear in the text's length;
 * text without such runs (all ordinary text) is counted exactly.
 */
const LONGEST_COUNTED_RUN = 256;
const LONG_RUN = new RegExp(`\\S{${LONGEST_COUNTED_RUN + 1},}|\\s{${LONGEST_COUNTED_RUN + 1},}`, 'g');

/** Tokens of a text with the o200k_base encoding (GPT-4o family), in time linear in its length. */
export function countTokens(text: string): number {
  if (!text) return 0;
  LONG_RUN.lastIndex = 0;
  if (!LONG_RUN.test(text)) return countO200kTokens(text, PLAIN_TEXT);
  let total = 0;
  let counted = 0;
  LONG_RUN.lastIndex = 0;
  for (let run = LONG_RUN.exec(text); run !== null; run = LONG_RUN.exec(text)) {
    if (run.index > counted) total += countO200kTokens(text.slice(counted, run.index), PLAIN_TEXT);
    const end = run.index + run[0].length;
    for (let slice = run.index; slice < end; slice += LONGEST_COUNTED_RUN) {
      total += countO200kTokens(text.slice(slice, Math.min(slice + LONGEST_COUNTED_RUN, end)), PLAIN_TEXT);
    }
    counted = end;
  }
  if (counted < text.length) total += countO200kTokens(text.slice(counted), PLAIN_TEXT);
  return total;
}

/** OpenAI's documented per-message overhead for chat prompts. */
const TOKENS_PER_MESSAGE = 3;
const TOKENS_PER_REPLY_PRIMER = 3;

export interface EstimableMessage {
  role: string;
  content?: unknown;
  name?: string;
}

/**
 * Estimates prompt tokens of chat messages when an upstream does not report usage.
 * Text parts count; anything else (images, audio) is not estimated here.
 */
export function estimatePromptTokens(messages: readonly EstimableMessage[]): number {
  let total = TOKENS_PER_REPLY_PRIMER;
  for (const message of messages) {
    total += TOKENS_PER_MESSAGE + countTokens(message.role) + countTokens(textOf(message.content));
    if (message.name) total += countTokens(message.name) + 1;
  }
  return total;
}

export function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) {
    return content
      .map((part) => (part && typeof part === 'object' && typeof (part as { text?: unknown }).text === 'string' ? (part as { text: string }).text : ''))
      .join('');
  }
  return '';
}
