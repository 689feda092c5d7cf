import { ApiProperty } from '@nestjs/swagger';
import { ValidateNested, type ValidationArguments } from 'class-validator';
import { MessageContent, type TextContent, type UserContent } from './chat-content.dto';
import { AssistantToolCalls, ToolCallFunctionDto, type AssistantToolCall } from './chat-tools.dto';
import { ArrayOfVariants, composeDecorators, IsArrayField, isRecord, IsOneOf, IsStringField, NestedObject, unknownVariant, VariantModels, variantsSchema, type FieldDoc, acceptDto, describeWrongType } from '@igw/validation';

/** Every role a message may have; `developer` is OpenAI's newer name for `system`. */
export const CHAT_ROLES = ['system', 'user', 'assistant', 'tool', 'developer'] as const;
export type ChatRole = (typeof CHAT_ROLES)[number];

/**
 * What every message has. The request holds the role classes below (one per role, chosen by
 * `role`); code that only reads role, content and name can treat them all as this class.
 */
export abstract class ChatMessageDto {
  abstract role: ChatRole;

  abstract content?: UserContent | null;

  // Typed `string` for readers; like every optional field, null is accepted and forwarded as sent.
  @IsStringField({}, { optional: true, nullable: true, description: 'Name of the participant (of the tool, for tool messages)' })
  name?: string;
}

/** `system`, or `developer` (the same role under OpenAI's newer name). */
export class SystemMessageDto extends ChatMessageDto {
  @IsOneOf(['system', 'developer'], { description: '`developer` is accepted as `system` (OpenAI\'s newer name for it)' })
  override role!: 'system' | 'developer';

  @MessageContent({ parts: 'text' })
  override content!: TextContent;
}

export class UserMessageDto extends ChatMessageDto {
  @IsOneOf(['user'])
  override role!: 'user';

  @MessageContent({ parts: 'user' }, { description: 'A string, or parts: text, image_url, input_audio, file' })
  override content!: UserContent;
}

/** tool_calls (other than an empty array) or function_call is given: content may be left out. */
export function hasToolCalls(message: object): boolean {
  if (!isRecord(message)) return false;
  const { tool_calls: calls, function_call: legacy } = message;
  const callsGiven = calls !== undefined && calls !== null && !(Array.isArray(calls) && calls.length === 0);
  return callsGiven || (legacy !== undefined && legacy !== null);
}

export class AssistantMessageDto extends ChatMessageDto {
  @IsOneOf(['assistant'])
  override role!: 'assistant';

  @MessageContent({ parts: 'text', optionalWhen: hasToolCalls, requiredNote: ' (required unless tool_calls or function_call is given)' }, { description: 'Required unless tool_calls or function_call is given' })
  override content?: TextContent | null;

  @IsStringField({}, { optional: true, nullable: true, description: 'A refusal the assistant gave' })
  refusal?: string | null;

  @AssistantToolCalls({ optional: true, description: 'Calls the assistant made; `extra_content` of each is forwarded unchanged' })
  tool_calls?: AssistantToolCall[];

  @NestedObject(() => ToolCallFunctionDto, undefined, { optional: true, deprecated: true, description: 'The older single function call (use tool_calls)' })
  function_call?: ToolCallFunctionDto;
}

export class ToolMessageDto extends ChatMessageDto {
  @IsOneOf(['tool'])
  override role!: 'tool';

  @MessageContent({ parts: 'text' })
  override content!: TextContent;

  @IsStringField({ expected: 'a string (the id of the tool call this message answers)' }, { description: 'Id of the tool call this message answers' })
  tool_call_id!: string;
}

export type ChatMessage = SystemMessageDto | UserMessageDto | AssistantMessageDto | ToolMessageDto;

const MESSAGE_VARIANTS: Readonly<Record<ChatRole, new () => ChatMessage>> = {
  system: SystemMessageDto,
  developer: SystemMessageDto,
  user: UserMessageDto,
  assistant: AssistantMessageDto,
  tool: ToolMessageDto,
};

const MESSAGE_ITEM = 'a message object with a role';

/** One message of `messages`, as the validation pipe would hold it, when the compiled acceptance is sure the pipe would accept it. */
export function acceptChatMessage(message: unknown): ChatMessage | undefined {
  if (!isRecord(message) || typeof message.role !== 'string' || !Object.hasOwn(MESSAGE_VARIANTS, message.role)) return undefined;
  return acceptDto(MESSAGE_VARIANTS[message.role as ChatRole], message);
}

/** `messages`: a non-empty array; each item becomes its role's class, an unknown role fails on `role`. */
export function ChatMessages(doc: FieldDoc): PropertyDecorator {
  return composeDecorators(
    ApiProperty({ items: variantsSchema('role', MESSAGE_VARIANTS) }),
    VariantModels(MESSAGE_VARIANTS),
    ArrayOfVariants('role', MESSAGE_VARIANTS, unknownVariant('role', CHAT_ROLES)),
    IsArrayField({ items: 'messages', nonEmpty: true, ofObjects: MESSAGE_ITEM }, doc),
    ValidateNested({ each: true, message: (args: ValidationArguments) => `Expected ${MESSAGE_ITEM}. Received ${describeWrongType(args.value)}` }),
  );
}
