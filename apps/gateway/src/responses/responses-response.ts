import { randomUUID } from 'node:crypto';
import type { ChatCompletionDto, ResponsesRequestDto } from '@igw/contracts';
import type { ChatUsageNumbers } from '../chat/chat-stream';

// The chat pipeline's answer (OpenAI chat-shaped) → a Responses API `response`: reasoning text
// becomes a `reasoning` item with its summary, the text a `message` item with `output_text`,
// each tool call a `function_call` item (a flattened namespaced function back under its
// namespace); the usage renamed, and the gateway's `meta.usage` beside it as on chat.

/** What the answer echoes of its request, and how to name flattened functions back. */
export interface ResponsesContext {
  id: string;
  createdAt: number;
  body: ResponsesRequestDto;
  namespaced: ReadonlyMap<string, { namespace: string; name: string }>;
  /** Keeps the finished response before it leaves (store: true), and returns it as it is to be sent (stored-responses.ts). */
  keep?: (response: Record<string, unknown>) => Promise<Record<string, unknown>>;
}

export function responsesContextOf(body: ResponsesRequestDto, namespaced: ReadonlyMap<string, { namespace: string; name: string }>): ResponsesContext {
  return { id: itemId('resp'), createdAt: Math.floor(Date.now() / 1000), body, namespaced };
}

/** An id of OpenAI's form for an item of the given prefix (resp, msg, fc, rs). */
export function itemId(prefix: string): string {
  return `${prefix}_${randomUUID().replace(/-/g, '')}`;
}

export interface ResponsesUsage {
  input_tokens: number;
  input_tokens_details: { cached_tokens: number };
  output_tokens: number;
  output_tokens_details: { reasoning_tokens: number };
  total_tokens: number;
}

export function responsesUsageOf(usage: ChatUsageNumbers): ResponsesUsage {
  return {
    input_tokens: usage.prompt_tokens,
    input_tokens_details: { cached_tokens: usage.prompt_tokens_details?.cached_tokens ?? 0 },
    output_tokens: usage.completion_tokens,
    output_tokens_details: { reasoning_tokens: usage.completion_tokens_details?.reasoning_tokens ?? 0 },
    total_tokens: usage.prompt_tokens + usage.completion_tokens,
  };
}

/** The response's status for a chat finish reason: cut short by the token limit or a content filter is `incomplete`. */
export function statusOf(finishReason: string | null | undefined): { status: 'completed' | 'incomplete'; incomplete_details: { reason: string } | null } {
  if (finishReason === 'length') return { status: 'incomplete', incomplete_details: { reason: 'max_output_tokens' } };
  if (finishReason === 'content_filter') return { status: 'incomplete', incomplete_details: { reason: 'content_filter' } };
  return { status: 'completed', incomplete_details: null };
}

/** A function call item's name (and namespace, for a flattened namespaced function). */
export function callNameOf(chatName: string, context: ResponsesContext): { name: string; namespace?: string } {
  return context.namespaced.get(chatName) ?? { name: chatName };
}

/**
 * The response object without its output and usage: what `response.created` carries and what
 * the finished response adds its output, status and usage to. It echoes the request's settings.
 */
export function responseShell(context: ResponsesContext, modelId: string): Record<string, unknown> {
  const body = context.body;
  const format = body.text?.format ?? { type: 'text' };
  return {
    id: context.id,
    object: 'response',
    created_at: context.createdAt,
    status: 'in_progress',
    error: null,
    incomplete_details: null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: modelId,
    output: [],
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: body.previous_response_id ?? null,
    reasoning: { effort: body.reasoning?.effort ?? null, summary: body.reasoning?.summary ?? null },
    // Kept unless the request said false (OpenAI's default); an answer billing could not keep says false (stored-responses.ts).
    store: body.store !== false,
    temperature: body.temperature ?? null,
    text: { format },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? null,
    truncation: 'disabled',
    usage: null,
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}

interface ChatToolCall {
  id?: string;
  function?: { name?: string; arguments?: string };
}

export function messageItem(text: string, id = itemId('msg')): Record<string, unknown> {
  return { id, type: 'message', status: 'completed', role: 'assistant', content: [outputTextPart(text)] };
}

export function outputTextPart(text: string): Record<string, unknown> {
  return { type: 'output_text', text, annotations: [], logprobs: [] };
}

export function reasoningItem(text: string, id = itemId('rs')): Record<string, unknown> {
  return { id, type: 'reasoning', summary: [{ type: 'summary_text', text }] };
}

export function functionCallItem(callId: string, chatName: string, args: string, context: ResponsesContext, id = itemId('fc')): Record<string, unknown> {
  return { id, type: 'function_call', status: 'completed', call_id: callId, ...callNameOf(chatName, context), arguments: args };
}

/** The Responses answer for a chat completion (its first choice: a Responses request asks for one). */
export function responseOf(completion: ChatCompletionDto, context: ResponsesContext): Record<string, unknown> {
  const choice = completion.choices[0];
  const message = (choice?.message ?? {}) as unknown as Record<string, unknown>;
  const output: Array<Record<string, unknown>> = [];
  const reasoning = message.reasoning_content ?? message.reasoning;
  if (typeof reasoning === 'string' && reasoning !== '') output.push(reasoningItem(reasoning));
  if (typeof message.content === 'string' && message.content !== '') output.push(messageItem(message.content));
  else if (typeof message.refusal === 'string' && message.refusal !== '') {
    output.push({ id: itemId('msg'), type: 'message', status: 'completed', role: 'assistant', content: [{ type: 'refusal', refusal: message.refusal }] });
  }
  for (const call of (message.tool_calls as ChatToolCall[] | undefined) ?? []) {
    output.push(functionCallItem(call.id ?? itemId('call'), call.function?.name ?? '', call.function?.arguments ?? '', context));
  }
  const answer: Record<string, unknown> = {
    ...responseShell(context, completion.model),
    ...statusOf(choice?.finish_reason),
    output,
    usage: responsesUsageOf(completion.usage as unknown as ChatUsageNumbers),
  };
  if (completion.meta) answer.meta = completion.meta;
  return answer;
}
