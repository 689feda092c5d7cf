import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional, ValidateIf } from 'class-validator';
import { Checked, eachItemIssues, IsArrayField, IsBooleanField, IsNumberField, isRecord, IsObjectField, IsOneOf, IsStringField, NestedObject, describeWrongType, expectedOneOf, relativeIssueLine } from '@igw/validation';

// Anthropic's Messages API request (POST /v1/messages). Content blocks, tools and `system` are
// checked here for what the gateway reads of them and otherwise kept as sent, so the blocks and
// fields Anthropic adds later (and Claude Code sends) pass through to the translation untouched;
// undeclared top-level fields (output_config's siblings, container, mcp_servers, ...) are
// dropped by the pipe's whitelist: accepted, not refused.

export const MESSAGES_ROLES = ['user', 'assistant', 'system'] as const;
export const MESSAGES_TOOL_CHOICE_TYPES = ['auto', 'any', 'tool', 'none'] as const;
export const MESSAGES_THINKING_TYPES = ['enabled', 'disabled', 'adaptive'] as const;
/** Anthropic's smallest thinking budget. */
export const MESSAGES_MIN_THINKING_BUDGET = 1024;
export const MESSAGES_MAX_TOOLS = 128;

export type MessagesBlock = Record<string, unknown> & { type: string };

/** What validation checks of a client's block of each type (blockIssues); its other fields are kept as sent. */
export interface MessagesCheckedBlockFields {
  text: { text: string; cache_control?: Record<string, unknown> };
  image: { source: Record<string, unknown>; cache_control?: Record<string, unknown> };
  tool_use: { id: string; name: string; input: Record<string, unknown> };
  tool_result: { tool_use_id: string; content?: string | MessagesBlock[]; is_error?: unknown };
  thinking: { thinking: string };
}

/** A block of a turn, `system` or a tool result, as validation leaves it for its type. */
export type MessagesCheckedBlock<T extends keyof MessagesCheckedBlockFields> = MessagesBlock & { type: T } & MessagesCheckedBlockFields[T];

export type MessagesTextBlock = MessagesCheckedBlock<'text'>;

/**
 * Whether a block of a validated request is of `type`, and so has the fields validation checked
 * for it. Only for blocks validation walked: a document's own content is not one of them.
 */
export function isCheckedBlock<T extends keyof MessagesCheckedBlockFields>(block: MessagesBlock, type: T): block is MessagesCheckedBlock<T> {
  return block.type === type;
}

/** A turn; a system one takes text blocks only, as `system` does. */
export type MessagesMessage = { role: 'user' | 'assistant'; content: string | MessagesBlock[] } | { role: 'system'; content: string | MessagesTextBlock[] };

export interface MessagesTool {
  name: string;
  /** Absent or `custom` on a client tool; a server tool's versioned type (`web_search_20250305`, `bash_20250124`, ...). */
  type?: string;
  description?: string;
  input_schema?: Record<string, unknown>;
  cache_control?: Record<string, unknown>;
  /** Web search's most searches: not validated (the gateway caps what it sends). */
  max_uses?: unknown;
}

function issue(path: string, expected: string, value: unknown): string {
  return relativeIssueLine(path, `Expected ${expected}. Received ${describeWrongType(value)}`);
}

/** What the gateway reads of one content block; other fields and block types are kept as sent. */
function blockIssues(block: unknown, path: string): string[] {
  if (!isRecord(block)) return [issue(path, 'a content block object', block)];
  if (typeof block.type !== 'string' || block.type === '') return [issue(`${path}.type`, 'a non-empty string (the block type)', block.type)];
  const issues: string[] = [];
  const need = (field: string, expected: string, ok: (value: unknown) => boolean) => {
    if (!ok(block[field])) issues.push(issue(`${path}.${field}`, expected, block[field]));
  };
  const isString = (value: unknown) => typeof value === 'string';
  switch (block.type) {
    case 'text':
      need('text', 'a string', isString);
      break;
    case 'image':
      need('source', 'an object (base64 data with its media_type, or a url)', isRecord);
      break;
    case 'tool_use':
      need('id', 'a non-empty string', (value) => isString(value) && value !== '');
      need('name', 'a non-empty string', (value) => isString(value) && value !== '');
      need('input', 'an object', isRecord);
      break;
    case 'tool_result':
      need('tool_use_id', 'a non-empty string', (value) => isString(value) && value !== '');
      if (block.content !== undefined && !isString(block.content)) {
        if (!Array.isArray(block.content)) issues.push(issue(`${path}.content`, 'a string or an array of content blocks', block.content));
        else block.content.forEach((inner: unknown, index) => issues.push(...blockIssues(inner, `${path}.content[${index}]`)));
      }
      break;
    case 'thinking':
      need('thinking', 'a string', isString);
      break;
  }
  return issues;
}

/** `firstOnly`: as a Check's (field-validators.ts), only whether there is an issue is asked. */
function contentIssues(content: unknown, path: string, textOnly: boolean, firstOnly: boolean): string[] {
  if (typeof content === 'string') return [];
  if (!Array.isArray(content)) return [issue(path, textOnly ? 'a string or an array of text blocks' : 'a string or an array of content blocks', content)];
  return eachItemIssues(content, firstOnly, (block: unknown, index) => {
    const at = `${path}[${index}]`;
    if (textOnly && isRecord(block) && block.type !== 'text') return [relativeIssueLine(`${at}.type`, expectedOneOf(['text'], block.type))];
    return blockIssues(block, at);
  });
}

function messagesIssues(value: unknown, firstOnly: boolean): string[] {
  if (!Array.isArray(value)) return [issue('', 'a non-empty array of messages', value)];
  if (value.length === 0) return ['Expected a non-empty array of messages. Received an empty array'];
  return eachItemIssues(value, firstOnly, (message: unknown, index) => {
    const at = `[${index}]`;
    if (!isRecord(message)) return [issue(at, 'a message object with a role', message)];
    if (typeof message.role !== 'string' || !(MESSAGES_ROLES as readonly string[]).includes(message.role)) {
      return [relativeIssueLine(`${at}.role`, expectedOneOf(MESSAGES_ROLES, message.role))];
    }
    return contentIssues(message.content, `${at}.content`, message.role === 'system', firstOnly);
  });
}

export function toolsIssues(value: unknown): string[] {
  if (!Array.isArray(value)) return [issue('', 'an array of tools', value)];
  if (value.length > MESSAGES_MAX_TOOLS) return [`Expected at most ${MESSAGES_MAX_TOOLS} tools. Received ${value.length}`];
  const issues: string[] = [];
  value.forEach((tool: unknown, index) => {
    const at = `[${index}]`;
    if (!isRecord(tool)) return issues.push(issue(at, 'a tool object', tool));
    if (typeof tool.name !== 'string' || tool.name === '') issues.push(issue(`${at}.name`, 'a non-empty string', tool.name));
    if (tool.type !== undefined && (typeof tool.type !== 'string' || tool.type === '')) issues.push(issue(`${at}.type`, 'a non-empty string', tool.type));
    const custom = tool.type === undefined || tool.type === 'custom';
    if (custom && !isRecord(tool.input_schema)) issues.push(issue(`${at}.input_schema`, 'a JSON Schema object (a custom tool needs one)', tool.input_schema));
    return undefined;
  });
  return issues;
}

export class MessagesTextBlockDto {
  @IsOneOf(['text'])
  type!: 'text';

  @IsStringField({})
  text!: string;

  @IsObjectField(undefined, { optional: true, description: "`{type: 'ephemeral', ttl?: '5m' | '1h'}`" })
  cache_control?: Record<string, unknown>;
}

export class MessagesToolChoiceDto {
  @IsOneOf(MESSAGES_TOOL_CHOICE_TYPES)
  type!: (typeof MESSAGES_TOOL_CHOICE_TYPES)[number];

  @ApiPropertyOptional({ description: 'The tool to call; required with type tool' })
  @ValidateIf((choice: MessagesToolChoiceDto) => choice.type === 'tool' || choice.name !== undefined)
  @IsStringField({ nonEmpty: true, expected: 'a non-empty string (the tool to call; required with type tool)' })
  name?: string;

  @IsBooleanField({ optional: true })
  disable_parallel_tool_use?: boolean;
}

export class MessagesThinkingDto {
  @IsOneOf(MESSAGES_THINKING_TYPES)
  type!: (typeof MESSAGES_THINKING_TYPES)[number];

  // Optional in the document, yet not IsOptional: ValidateIf requires it with type enabled.
  @ApiPropertyOptional({ description: 'Required with type enabled' })
  @ValidateIf((thinking: MessagesThinkingDto) => thinking.type === 'enabled' || thinking.budget_tokens !== undefined)
  @IsNumberField({ integer: true, min: MESSAGES_MIN_THINKING_BUDGET })
  budget_tokens?: number;
}

export class MessagesMetadataDto {
  @IsStringField({}, { optional: true, description: 'An id of the end user' })
  user_id?: string;
}

export const MESSAGES_OUTPUT_FORMAT_TYPES = ['json_schema'] as const;

/** Structured outputs: the answer's text is JSON satisfying `schema`. */
export class MessagesOutputFormatDto {
  @IsOneOf(MESSAGES_OUTPUT_FORMAT_TYPES)
  type!: (typeof MESSAGES_OUTPUT_FORMAT_TYPES)[number];

  @IsObjectField('a JSON Schema object', { description: 'The JSON Schema the answer satisfies; sent as it is' })
  schema!: Record<string, unknown>;
}

export class MessagesOutputConfigDto {
  @IsStringField({}, { optional: true, description: 'How much the model thinks with adaptive thinking (low, medium, high, max)' })
  effort?: string;

  @NestedObject(() => MessagesOutputFormatDto, undefined, {
    optional: true,
    description: "Structured outputs `{type: 'json_schema', schema}`: Anthropic's own where the source takes it, a forced tool call on other Anthropic sources, `response_format` on every other source",
  })
  format?: MessagesOutputFormatDto;
}

/** `POST /v1/messages/count_tokens`: the Messages body without `max_tokens` and the generation settings. */
export class MessagesCountTokensRequestDto {
  @IsStringField({ nonEmpty: true, maxLength: 256 }, { description: 'A catalogue model id or alias: any chat model, whatever its source', example: 'claude-sonnet-4-5' })
  model!: string;

  @ApiProperty({
    type: 'array',
    minItems: 1,
    description: "Turns of `user` and `assistant` (a `system` one is taken as a system prompt); content a string or blocks: text, image, tool_use, tool_result, thinking",
    items: { type: 'object', additionalProperties: true },
  })
  @Checked('messagesMessages', (value, _args, firstOnly) => messagesIssues(value, firstOnly))
  messages!: MessagesMessage[];

  @ApiPropertyOptional({ oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', additionalProperties: true } }], description: 'A string or text blocks (with cache_control)' })
  @IsOptional()
  @Checked('messagesSystem', (value, _args, firstOnly) => contentIssues(value, '', true, firstOnly))
  system?: string | MessagesTextBlock[];

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: 'Custom tools `{name, description, input_schema}`; server tools (a versioned `type`) are accepted and left out of the upstream call',
  })
  @IsOptional()
  @Checked('messagesTools', (value) => toolsIssues(value))
  tools?: MessagesTool[];

  @NestedObject(() => MessagesToolChoiceDto, undefined, { optional: true })
  tool_choice?: MessagesToolChoiceDto;

  @NestedObject(() => MessagesThinkingDto, undefined, { optional: true })
  thinking?: MessagesThinkingDto;
}

/** The Messages API body; `max_tokens` is required, as Anthropic requires it. */
export class MessagesRequestDto extends MessagesCountTokensRequestDto {
  @IsNumberField({ integer: true, min: 1 }, { description: 'The most tokens to generate' })
  max_tokens!: number;

  @IsArrayField({ items: 'strings', ofStrings: true, max: 64 }, { optional: true })
  stop_sequences?: string[];

  @IsNumberField({ min: 0, max: 1 }, { optional: true })
  temperature?: number;

  @IsNumberField({ min: 0, max: 1 }, { optional: true })
  top_p?: number;

  @IsNumberField({ integer: true, min: 0 }, { optional: true, description: 'Accepted; no upstream of the chat pipeline takes it, so it is not sent' })
  top_k?: number;

  @NestedObject(() => MessagesMetadataDto, undefined, { optional: true })
  metadata?: MessagesMetadataDto;

  @NestedObject(() => MessagesOutputConfigDto, undefined, { optional: true })
  output_config?: MessagesOutputConfigDto;

  @IsObjectField(undefined, { optional: true, description: "Anthropic's context management (clearing old tool results); sent as it is to Anthropic sources, not used by others" })
  context_management?: Record<string, unknown>;

  @IsBooleanField({ optional: true, default: false, description: 'Answer with server-sent events' })
  stream?: boolean;
}

/** An Anthropic message, as `POST /v1/messages` answers it (plus the gateway's `meta.usage`). */
export interface MessagesResponse {
  id: string;
  type: 'message';
  role: 'assistant';
  content: MessagesBlock[];
  model: string;
  stop_reason: 'end_turn' | 'max_tokens' | 'stop_sequence' | 'tool_use' | 'refusal' | null;
  stop_sequence: string | null;
  usage: MessagesUsage;
  meta?: { usage: Record<string, unknown> };
}

export interface MessagesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_creation_input_tokens: number;
  cache_read_input_tokens: number;
}
