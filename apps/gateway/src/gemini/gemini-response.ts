import type { ChatCompletionDto } from '@igw/contracts';
import type { ChatUsageNumbers } from '../chat/chat-stream';

// The chat pipeline's answer (OpenAI-shaped) → Google's GenerateContentResponse: each choice a
// candidate whose parts are the reasoning (as thought parts, when the request asked for them),
// the text, then one functionCall part per tool call (with the thought signature the source
// gave); the usage in Google's names, thoughts apart from the candidates' tokens.

export type GeminiPart = Record<string, unknown>;

export interface GeminiCandidate {
  content: { role: 'model'; parts: GeminiPart[] };
  finishReason?: string;
  index: number;
}

export interface GeminiUsageMetadata {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
  thoughtsTokenCount?: number;
  cachedContentTokenCount?: number;
}

export interface GeminiAnswer {
  candidates: GeminiCandidate[];
  usageMetadata?: GeminiUsageMetadata;
  modelVersion: string;
  responseId: string;
  meta?: { usage: unknown };
}

/** Google's finishReason for a chat `finish_reason` (a call is Google's STOP). */
export function finishReasonOf(finishReason: string | null | undefined): string {
  switch (finishReason) {
    case 'length':
      return 'MAX_TOKENS';
    case 'content_filter':
      return 'SAFETY';
    case 'stop':
    case 'tool_calls':
    case 'function_call':
    case null:
    case undefined:
      return 'STOP';
    default:
      return 'OTHER';
  }
}

/** Google's usage: the candidates' tokens are the visible output, thoughts apart. */
export function usageMetadataOf(usage: ChatUsageNumbers): GeminiUsageMetadata {
  const thoughts = usage.completion_tokens_details?.reasoning_tokens ?? 0;
  const cached = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const metadata: GeminiUsageMetadata = {
    promptTokenCount: usage.prompt_tokens,
    candidatesTokenCount: Math.max(0, usage.completion_tokens - thoughts),
    totalTokenCount: usage.prompt_tokens + usage.completion_tokens,
  };
  if (thoughts > 0) metadata.thoughtsTokenCount = thoughts;
  if (cached > 0) metadata.cachedContentTokenCount = cached;
  return metadata;
}

interface ChatToolCall {
  id?: string;
  function?: { name?: string; arguments?: string };
  extra_content?: { google?: { thought_signature?: string } };
}

/** A tool call's arguments as the `args` object Google's clients expect (`{}` when they are not one). */
export function argsOf(args: unknown): Record<string, unknown> {
  if (typeof args !== 'string' || args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

export function functionCallPart(call: ChatToolCall): GeminiPart {
  const part: GeminiPart = { functionCall: { name: call.function?.name ?? '', args: argsOf(call.function?.arguments) } };
  const signature = call.extra_content?.google?.thought_signature;
  if (typeof signature === 'string' && signature !== '') part.thoughtSignature = signature;
  return part;
}

/** The answer for a chat completion; `includeThoughts` shows the reasoning as thought parts. */
export function generateContentResponseOf(completion: ChatCompletionDto, includeThoughts: boolean): GeminiAnswer {
  const candidates = completion.choices.map((choice): GeminiCandidate => {
    const message = (choice.message ?? {}) as unknown as Record<string, unknown>;
    const parts: GeminiPart[] = [];
    const reasoning = message.reasoning_content ?? message.reasoning;
    if (includeThoughts && typeof reasoning === 'string' && reasoning !== '') parts.push({ text: reasoning, thought: true });
    if (typeof message.content === 'string' && message.content !== '') parts.push({ text: message.content });
    for (const call of (message.tool_calls as ChatToolCall[] | undefined) ?? []) parts.push(functionCallPart(call));
    if (parts.length === 0) parts.push({ text: '' });
    return { content: { role: 'model', parts }, finishReason: finishReasonOf(choice.finish_reason), index: choice.index };
  });
  const answer: GeminiAnswer = { candidates, modelVersion: completion.model, responseId: completion.id };
  if (completion.usage) answer.usageMetadata = usageMetadataOf(completion.usage as unknown as ChatUsageNumbers);
  if (completion.meta) answer.meta = completion.meta as unknown as GeminiAnswer['meta'];
  return answer;
}
