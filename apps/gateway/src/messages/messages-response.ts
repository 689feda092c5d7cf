import type { ChatCompletionDto, MessagesBlock, MessagesResponse, MessagesUsage } from '@igw/contracts';
import type { ChatUsageNumbers } from '../chat/chat-stream';

// The chat pipeline's answer (OpenAI-shaped) → Anthropic's message: reasoning becomes a thinking
// block ahead of the text, tool calls `tool_use` blocks after it; the usage splits the prompt
// into uncached input, cache writes and cache reads, as Anthropic reports it.

type StopReason = MessagesResponse['stop_reason'];

/** Anthropic's `stop_reason` for a chat `finish_reason`. */
export function stopReasonOf(finishReason: string | null | undefined): StopReason {
  switch (finishReason) {
    case 'length':
      return 'max_tokens';
    case 'tool_calls':
    case 'function_call':
      return 'tool_use';
    case 'content_filter':
      return 'refusal';
    default:
      return 'end_turn';
  }
}

/** Anthropic's usage: its input_tokens are the prompt tokens neither read from nor written to the cache. */
export function messagesUsageOf(usage: ChatUsageNumbers): MessagesUsage {
  const read = usage.prompt_tokens_details?.cached_tokens ?? 0;
  const written = usage.prompt_tokens_details?.cache_write_tokens ?? 0;
  return {
    input_tokens: Math.max(0, usage.prompt_tokens - read - written),
    output_tokens: usage.completion_tokens,
    cache_creation_input_tokens: written,
    cache_read_input_tokens: read,
  };
}

/** An Anthropic message id for the upstream's id (`msg_...` as it is, any other prefixed). */
export function messageIdOf(id: string): string {
  return id.startsWith('msg_') ? id : `msg_${id}`;
}

/** A tool call's arguments as the `input` object Anthropic's clients expect (`{}` when they are not one). */
export function toolInputOf(args: unknown): Record<string, unknown> {
  if (typeof args !== 'string' || args.trim() === '') return {};
  try {
    const parsed: unknown = JSON.parse(args);
    return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? (parsed as Record<string, unknown>) : {};
  } catch {
    return {};
  }
}

interface ChatToolCall {
  id?: string;
  function?: { name?: string; arguments?: string };
}

/** The message for a chat completion (its first choice: a Messages request asks for one). */
export function messageOf(completion: ChatCompletionDto): MessagesResponse {
  const choice = completion.choices[0];
  const message = (choice?.message ?? {}) as unknown as Record<string, unknown>;
  const content: MessagesBlock[] = [];
  const reasoning = message.reasoning_content ?? message.reasoning;
  if (typeof reasoning === 'string' && reasoning !== '') content.push({ type: 'thinking', thinking: reasoning, signature: '' });
  if (typeof message.content === 'string' && message.content !== '') content.push({ type: 'text', text: message.content });
  for (const call of (message.tool_calls as ChatToolCall[] | undefined) ?? []) {
    content.push({ type: 'tool_use', id: call.id ?? '', name: call.function?.name ?? '', input: toolInputOf(call.function?.arguments) });
  }
  const answer: MessagesResponse = {
    id: messageIdOf(completion.id),
    type: 'message',
    role: 'assistant',
    content,
    model: completion.model,
    stop_reason: stopReasonOf(choice?.finish_reason),
    stop_sequence: null,
    usage: messagesUsageOf(completion.usage as unknown as ChatUsageNumbers),
  };
  if (completion.meta) answer.meta = completion.meta as unknown as MessagesResponse['meta'];
  return answer;
}
