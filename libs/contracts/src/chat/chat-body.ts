import { BadRequestException } from '@nestjs/common';
import type { ValidationError } from 'class-validator';
import { ErrorMessages } from '../errors/error-body.dto';
import { appValidationPipe, BodyValidationErrors, errorTreeValidationPipe, formatValidationErrors, acceptDto } from '@igw/validation';
import { AzureChatCompletionRequestDto } from './azure-chat-completion-request.dto';
import { ChatCompletionRequestDto } from './chat-completion-request.dto';
import type { ChatMessage } from './chat-messages.dto';
import { acceptChatMessage } from './chat-messages.dto';

export interface ChatBodyOptions {
  /** The Azure-style path (`AzureChatCompletionRequestDto`: `model` may be left out). */
  azure: boolean;
}

type ChatRequest = ChatCompletionRequestDto | AzureChatCompletionRequestDto;

/**
 * Messages, content parts and tool calls the validation pipe is given of one body at most: the
 * pipe's class-transformer and class-validator work on all of them in one turn of the event
 * loop, so a body of a few hundred kilobytes of empty messages would hold a replica for seconds.
 */
export const PIPE_CHECKED_ITEMS = 256;

/**
 * A chat completion body, validated: the DTO the global validation pipe would return, or the
 * BadRequestException it throws. The compiled acceptance (dto-acceptor.ts) answers the bodies
 * it is sure about; any other body goes through the app's own pipe, which alone words the
 * errors. A long conversation goes to the pipe with only the messages the compiled acceptance
 * is unsure of (validateLongChatBody).
 */
export function validateChatBody(body: unknown, options: { azure: false }): Promise<ChatCompletionRequestDto>;
export function validateChatBody(body: unknown, options: { azure: true }): Promise<AzureChatCompletionRequestDto>;
export function validateChatBody(body: unknown, options: ChatBodyOptions): Promise<ChatRequest>;
export async function validateChatBody(body: unknown, { azure }: ChatBodyOptions): Promise<ChatRequest> {
  const metatype = azure ? AzureChatCompletionRequestDto : ChatCompletionRequestDto;
  const accepted = acceptDto<ChatRequest>(metatype, body);
  if (accepted) return accepted;
  const messages = (body as { messages?: unknown } | null)?.messages;
  if (Array.isArray(messages) && itemsOf(messages) > PIPE_CHECKED_ITEMS) {
    return validateLongChatBody(body as Record<string, unknown>, messages, metatype);
  }
  return (await appValidationPipe().transform(body, { type: 'body', metatype })) as ChatRequest;
}

/**
 * A body whose messages hold more than PIPE_CHECKED_ITEMS items. The messages the compiled
 * acceptance is sure of are taken as it reads them; the pipe checks the rest of the body with only the others
 * (or the first message, when it is sure of all), their paths renumbered to the client's. Where
 * those others hold more than PIPE_CHECKED_ITEMS items, the pipe checks the first of them (and
 * the messages past them are not read): the issues it finds are the answer, and if it finds none
 * the body is refused as too costly to check.
 */
async function validateLongChatBody(body: Record<string, unknown>, messages: unknown[], metatype: typeof ChatCompletionRequestDto | typeof AzureChatCompletionRequestDto): Promise<ChatRequest> {
  const read: Array<ChatMessage | undefined> = [];
  const unsure: number[] = [];
  // Past the bound the answer is the pipe's issues or the refusal: the rest need not be read.
  for (let index = 0, unsureItems = 0; index < messages.length && unsureItems <= PIPE_CHECKED_ITEMS; index++) {
    const message = acceptChatMessage(messages[index]);
    read.push(message);
    if (message !== undefined) continue;
    unsure.push(index);
    unsureItems += 1 + innerItems(messages[index]);
  }
  const checked = unsure.length > 0 ? unsure : [0];
  const { kept, complete } = firstItems(checked.map((index) => messages[index]));
  let validated: ChatRequest;
  try {
    validated = (await errorTreeValidationPipe().transform({ ...body, messages: kept }, { type: 'body', metatype })) as ChatRequest;
  } catch (error) {
    if (error instanceof BodyValidationErrors) throw new BadRequestException(formatValidationErrors(renumberMessages(error.errors, checked), { partOfTheBody: !complete }));
    throw error;
  }
  if (!complete) {
    throw new BadRequestException(
      `${ErrorMessages.bodyValidationPrefix} messages: Expected at most ${PIPE_CHECKED_ITEMS} messages, content parts and tool calls in messages that need the full check (one with a key named like a JavaScript object member, such as 'constructor' or 'valueOf', or with values nested more than 64 levels deep). Received more`,
    );
  }
  const checkedAt = new Map(checked.map((index, position) => [index, position]));
  validated.messages = read.map((message, index) => message ?? (validated.messages[checkedAt.get(index)!] as ChatMessage));
  return validated;
}

/** Messages, plus the content parts and tool calls in them, counting no further than past PIPE_CHECKED_ITEMS. */
function itemsOf(messages: readonly unknown[]): number {
  let count = 0;
  for (let index = 0; index < messages.length && count <= PIPE_CHECKED_ITEMS; index++) count += 1 + innerItems(messages[index]);
  return count;
}

function innerItems(message: unknown): number {
  if (typeof message !== 'object' || message === null) return 0;
  const { content, tool_calls: toolCalls } = message as { content?: unknown; tool_calls?: unknown };
  return (Array.isArray(content) ? content.length : 0) + (Array.isArray(toolCalls) ? toolCalls.length : 0);
}

/**
 * The first messages, and the first parts and calls of the last one kept: about PIPE_CHECKED_ITEMS
 * items in all (a list cut short keeps at least one item, so that no list is made empty).
 */
function firstItems(messages: readonly unknown[]): { kept: unknown[]; complete: boolean } {
  const kept: unknown[] = [];
  let left = PIPE_CHECKED_ITEMS;
  for (const message of messages) {
    if (left <= 0) return { kept, complete: false };
    left -= 1 + innerItems(message);
    if (left >= 0) {
      kept.push(message);
      continue;
    }
    const room = Math.max(1, left + innerItems(message));
    const { content, tool_calls: toolCalls } = message as { content?: unknown; tool_calls?: unknown };
    const cut: Record<string, unknown> = { ...(message as Record<string, unknown>) };
    if (Array.isArray(content)) cut.content = content.slice(0, room);
    if (Array.isArray(toolCalls)) cut.tool_calls = toolCalls.slice(0, Math.max(1, room - (Array.isArray(content) ? content.length : 0)));
    kept.push(cut);
    return { kept, complete: false };
  }
  return { kept, complete: true };
}

/** `messages[j]` of the body the pipe checked is `messages[checked[j]]` of the client's. */
function renumberMessages(errors: ValidationError[], checked: readonly number[]): ValidationError[] {
  return errors.map((error) =>
    error.property === 'messages' && error.children?.length
      ? { ...error, children: error.children.map((child) => ({ ...child, property: String(checked[Number(child.property)] ?? child.property) })) }
      : error,
  );
}
