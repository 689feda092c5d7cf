import { countO200kTokens, isWhitespace as isUnicodeWhitespace } from './o200k-count';

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
  if (!hasLongRun(text)) return countO200kTokens(text);
  let total = 0;
  let counted = 0;
  LONG_RUN.lastIndex = 0;
  for (let run = LONG_RUN.exec(text); run !== null; run = LONG_RUN.exec(text)) {
    if (run.index > counted) total += countO200kTokens(text.slice(counted, run.index));
    const end = run.index + run[0].length;
    for (let slice = run.index; slice < end; slice += LONGEST_COUNTED_RUN) {
      total += countO200kTokens(text.slice(slice, Math.min(slice + LONGEST_COUNTED_RUN, end)));
    }
    counted = end;
  }
  if (counted < text.length) total += countO200kTokens(text.slice(counted));
  return total;
}

/**
 * Whether the text has a run of more than {@link LONGEST_COUNTED_RUN} whitespace or
 * non-whitespace characters: LONG_RUN's question, answered by looking only around every
 * {@link LONGEST_COUNTED_RUN}th character (every such run covers one of them), so ordinary text
 * costs a few characters per look.
 */
export function hasLongRun(text: string): boolean {
  for (let probe = 0; probe < text.length; probe += LONGEST_COUNTED_RUN) {
    const whitespace = isUnicodeWhitespace(text.charCodeAt(probe));
    let start = probe;
    while (start > 0 && isUnicodeWhitespace(text.charCodeAt(start - 1)) === whitespace) start--;
    let end = probe + 1;
    while (end < text.length && isUnicodeWhitespace(text.charCodeAt(end)) === whitespace) end++;
    if (end - start > LONGEST_COUNTED_RUN) return true;
  }
  return false;
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
  const { texts, formatTokens } = promptTexts(messages);
  let total = formatTokens;
  for (const text of texts) total += countTokens(text);
  return total;
}

/**
 * What {@link estimatePromptTokens} counts, apart: the texts the tokenizer reads (roles,
 * contents, names) and the tokens the chat format adds around them.
 */
export function promptTexts(messages: readonly EstimableMessage[]): { texts: string[]; formatTokens: number } {
  const texts: string[] = [];
  let formatTokens = TOKENS_PER_REPLY_PRIMER;
  for (const message of messages) {
    formatTokens += TOKENS_PER_MESSAGE;
    texts.push(message.role, textOf(message.content));
    if (message.name) {
      texts.push(message.name);
      formatTokens += 1;
    }
  }
  return { texts, formatTokens };
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

/**
 * Tokens assumed for one non-text message part (an image or audio clip): more than any listed
 * model charges for one. The credit hold assumes it, and so does a prompt estimate, since an
 * upstream that cannot report its usage cannot say what the part cost either.
 */
export const NON_TEXT_PART_TOKENS = 3_000;

/** The parts of a chat request that an upstream reads as prompt (OpenAI's field names). */
export interface EstimableChatPrompt {
  messages: ReadonlyArray<EstimableMessage & { tool_calls?: unknown }>;
  tools?: unknown;
  tool_choice?: unknown;
  response_format?: unknown;
}

/**
 * Estimates every prompt token of a chat request when the upstream cannot report them: the
 * message text, the assistant turns' tool calls, the tool schemas and a structured-output
 * schema (as their JSON), and {@link NON_TEXT_PART_TOKENS} per image, audio or file part.
 */
export function estimateChatPromptTokens(request: EstimableChatPrompt): number {
  const { texts, fixedTokens } = chatPromptTexts(request);
  let total = fixedTokens;
  for (const text of texts) total += countTokens(text);
  return total;
}

/**
 * What {@link estimateChatPromptTokens} counts, apart (to count the texts elsewhere, e.g. in the
 * token counting workers): the texts the tokenizer reads, and the tokens it adds without
 * counting (the chat format, and the allowance per image or audio part).
 */
export function chatPromptTexts(request: EstimableChatPrompt): { texts: string[]; fixedTokens: number; formatTokens: number } {
  const { texts, formatTokens } = promptTexts(request.messages);
  for (const message of request.messages) {
    if (message.tool_calls !== undefined && message.tool_calls !== null) texts.push(jsonText(message.tool_calls));
  }
  for (const schema of [request.tools, request.tool_choice, request.response_format]) {
    if (schema !== undefined && schema !== null && typeof schema !== 'string') texts.push(jsonText(schema));
  }
  return { texts, fixedTokens: formatTokens + nonTextParts(request.messages) * NON_TEXT_PART_TOKENS, formatTokens };
}

/** Message parts that are not text (images, audio, files). */
export function nonTextParts(messages: ReadonlyArray<{ content?: unknown }>): number {
  let parts = 0;
  for (const message of messages) {
    if (!Array.isArray(message.content)) continue;
    for (const part of message.content as Array<{ type?: unknown } | null>) if (part?.type !== 'text') parts++;
  }
  return parts;
}

function jsonText(value: unknown): string {
  try {
    return JSON.stringify(value) ?? '';
  } catch {
    return '';
  }
}

/** Text kept before it is counted: enough for a whole word, small enough to bound memory. */
const PENDING_TEXT_LIMIT = 4_096;

/**
 * Counts the tokens of a text that arrives in pieces (a stream) in memory bounded however
 * long the text grows: pieces are kept until about {@link PENDING_TEXT_LIMIT} characters,
 * then counted up to their last whitespace (where BPE pieces start, so the total matches
 * counting the whole text at once, save for a word longer than the limit).
 */
export class StreamedTokenCounter {
  private counted = 0;
  private pending = '';

  add(piece: string): void {
    if (!piece) return;
    this.pending += piece;
    if (this.pending.length < PENDING_TEXT_LIMIT) return;
    let cut = this.pending.length - 1;
    while (cut > 0 && !isWhitespace(this.pending.charCodeAt(cut))) cut--;
    // Keep the whitespace with the word it starts (o200k's pieces begin with it).
    if (cut === 0) cut = this.pending.length;
    this.counted += countTokens(this.pending.slice(0, cut));
    this.pending = this.pending.slice(cut);
  }

  /** Tokens of everything added so far. */
  total(): number {
    return this.counted + countTokens(this.pending);
  }
}

function isWhitespace(code: number): boolean {
  return code === 0x20 || code === 0x0a || code === 0x09 || code === 0x0d;
}
