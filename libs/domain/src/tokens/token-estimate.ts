import { Tiktoken } from 'js-tiktoken/lite';
import o200kBase from 'js-tiktoken/ranks/o200k_base';

let encoder: Tiktoken | undefined;

/** Tokens of a text with the o200k_base encoding (GPT-4o family); loaded on first use. */
export function countTokens(text: string): number {
  if (!text) return 0;
  encoder ??= new Tiktoken(o200kBase);
  return encoder.encode(text).length;
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
