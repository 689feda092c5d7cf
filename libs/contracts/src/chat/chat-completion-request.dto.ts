import { ApiExtraModels, ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ValidationArguments } from 'class-validator';
import { IsOptional, ValidateIf } from 'class-validator';
import { AssistantMessageDto, ChatMessages, messagesSchema, SystemMessageDto, ToolMessageDto, UserMessageDto, type ChatMessage } from './chat-messages.dto';
import {
  CustomToolDto,
  FunctionToolDto,
  ToolChoiceAllowedToolsDto,
  ToolChoiceCustomDto,
  ToolChoiceField,
  ToolChoiceFunctionDto,
  toolChoiceSchema,
  ToolList,
  toolListSchema,
  type ChatTool,
  type ToolChoice,
} from './chat-tools.dto';
import {
  arrayIssues,
  Checked,
  IsArrayField,
  IsBooleanField,
  IsNumberField,
  isRecord,
  IsObjectField,
  IsOneOf,
  IsStringField,
  NestedObject,
  numberIssues,
  type NumberRule,
  type StringRule,
} from '../validation/field-validators';
import { describeValue, describeWrongType } from '../validation/validation-issues';

export * from './chat-content.dto';
export * from './chat-messages.dto';
export * from './chat-tools.dto';
export { describeValue, describeWrongType, describeWrongValue, expectedOneOf, validationIssues, type ValidationIssue } from '../validation/validation-issues';

export const MAX_STOP_SEQUENCES = 4;
export const REASONING_EFFORTS = ['none', 'low', 'medium', 'high'] as const;
export const SEARCH_STRATEGIES = ['turbo', 'max', 'agent'] as const;
export const RESPONSE_FORMAT_TYPES = ['text', 'json_object', 'json_schema'] as const;
/** `reasoning.effort` (the object form); only `reasoning_effort` also takes `none`. */
export const REASONING_OBJECT_EFFORTS = ['low', 'medium', 'high'] as const;

/**
 * The string and number rules of the request's scalar fields: the decorators below read them, and
 * the differential spec of the compiled acceptance probes their edges.
 */
export const CHAT_REQUEST_RULES = {
  model: { nonEmpty: true, maxLength: 256 },
  provider: { nonEmpty: true },
  max_completion_tokens: { integer: true, min: 1 },
  max_tokens: { integer: true, min: 1 },
  temperature: { min: 0, max: 2 },
  top_p: { min: 0.01, max: 1 },
  logit_bias: { min: -100, max: 100 },
  top_logprobs: { integer: true, min: 0, max: 20 },
  reasoning_max_tokens: { integer: true, min: 1 },
  n: { integer: true, min: 1, max: 128 },
  seed: { integer: true },
  penalty: { min: -2, max: 2 },
} as const satisfies Record<string, StringRule | NumberRule>;

/** `name: value` of a sibling field for cross-field messages, or `no name` when it is absent. */
function sibling(object: object, name: string): string {
  const value = isRecord(object) ? object[name] : undefined;
  if (value === undefined) return `no ${name}`;
  return `${name}: ${typeof value === 'boolean' || typeof value === 'number' ? String(value) : describeValue(value)}`;
}

export class StreamOptionsDto {
  @ApiProperty({ description: 'Send a last chunk with the usage of the whole request' })
  @IsBooleanField()
  include_usage!: boolean;
}

export class SearchOptionsDto {
  @ApiPropertyOptional({ description: 'Always search, instead of letting the model decide' })
  @IsOptional()
  @IsBooleanField()
  forced_search?: boolean;

  @ApiPropertyOptional({ enum: SEARCH_STRATEGIES })
  @IsOptional()
  @IsOneOf(SEARCH_STRATEGIES)
  search_strategy?: (typeof SEARCH_STRATEGIES)[number];

  @ApiPropertyOptional({ description: 'Return the sources found' })
  @IsOptional()
  @IsBooleanField()
  enable_source?: boolean;
}

export class ReasoningDto {
  @ApiPropertyOptional({ enum: [...REASONING_OBJECT_EFFORTS], description: 'Not together with max_tokens' })
  @IsOptional()
  @IsOneOf(REASONING_OBJECT_EFFORTS)
  effort?: (typeof REASONING_OBJECT_EFFORTS)[number];

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Token budget of the reasoning; not together with effort' })
  @IsOptional()
  @Checked('reasoningBudgetOrEffort', (_value, args) =>
    isRecord(args.object) && args.object.effort !== undefined && args.object.effort !== null
      ? [`Expected either reasoning.effort or reasoning.max_tokens, not both. Received ${sibling(args.object, 'effort')}`]
      : [],
  )
  @IsNumberField(CHAT_REQUEST_RULES.reasoning_max_tokens)
  max_tokens?: number;

  @ApiPropertyOptional({ description: 'Leave the reasoning out of the response' })
  @IsOptional()
  @IsBooleanField()
  exclude?: boolean;
}

export class ResponseFormatDto {
  @ApiProperty({ enum: RESPONSE_FORMAT_TYPES })
  @IsOneOf(RESPONSE_FORMAT_TYPES)
  type!: (typeof RESPONSE_FORMAT_TYPES)[number];

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: '{name, schema, strict, description}; required with type json_schema; forwarded unchanged' })
  @ValidateIf((format: ResponseFormatDto) => format.type === 'json_schema' || (format.json_schema !== undefined && format.json_schema !== null))
  @IsObjectField('an object (required with type json_schema)')
  json_schema?: Record<string, unknown>;
}

export function stopIssues(value: unknown): readonly string[] {
  if (typeof value === 'string') return [];
  if (!Array.isArray(value)) return [`Expected a string, an array of at most ${MAX_STOP_SEQUENCES} strings, or null. Received ${describeWrongType(value)}`];
  return arrayIssues(value, { items: 'stop sequences', max: MAX_STOP_SEQUENCES, ofStrings: true });
}

export function logitBiasIssues(value: unknown): readonly string[] {
  if (!isRecord(value)) return [`Expected an object mapping token ids to numbers from -100 to 100, or null. Received ${describeWrongType(value)}`];
  return Object.entries(value).flatMap(([token, bias]) => {
    if (!/^\d+$/.test(token)) return [`Expected token ids (integers) as keys. Received key ${describeValue(token)}`];
    return numberIssues(bias, CHAT_REQUEST_RULES.logit_bias).map((message) => `.${token}: ${message}`);
  });
}

/**
 * The body of POST /v1/chat/completions (spec: "POST /v1/chat/completions").
 *
 * Validated by the global pipe with `whitelist: true`: a field not declared here is dropped,
 * never forwarded. Defaults (stream false, provider auto, enable_search false) are documented,
 * not filled in, so what goes upstream is what the client sent.
 */
@ApiExtraModels(
  SystemMessageDto,
  UserMessageDto,
  AssistantMessageDto,
  ToolMessageDto,
  FunctionToolDto,
  CustomToolDto,
  ToolChoiceFunctionDto,
  ToolChoiceCustomDto,
  ToolChoiceAllowedToolsDto,
)
export class ChatCompletionRequestDto {
  @ApiProperty({ description: 'A catalogue model id or alias', example: 'gpt-4o-mini', maxLength: 256 })
  @IsStringField(CHAT_REQUEST_RULES.model)
  model!: string;

  @ApiPropertyOptional({
    description: 'Provider routing override, case-insensitive: `auto` (every source, by tier and weight), `fallback`, or a connection one of its sources names (its deployments alone)',
    default: 'auto',
    example: 'auto',
  })
  @IsOptional()
  @IsStringField(CHAT_REQUEST_RULES.provider)
  provider?: string;

  @ApiProperty(messagesSchema())
  @ChatMessages()
  messages!: ChatMessage[];

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Upper bound on generated tokens, visible and reasoning' })
  @IsOptional()
  @IsNumberField(CHAT_REQUEST_RULES.max_completion_tokens)
  max_completion_tokens?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: 'Maximum generated tokens' })
  @IsOptional()
  @IsNumberField(CHAT_REQUEST_RULES.max_tokens)
  max_tokens?: number;

  @ApiPropertyOptional({ default: false, description: 'Answer with server-sent events' })
  @IsOptional()
  @IsBooleanField()
  stream?: boolean;

  @ApiPropertyOptional({ type: StreamOptionsDto, description: 'Only with stream: true' })
  @IsOptional()
  @Checked('streamOptionsNeedStream', (_value, args) =>
    isRecord(args.object) && args.object.stream === true ? [] : [`Expected stream: true alongside stream_options. Received ${sibling(args.object, 'stream')}`],
  )
  @NestedObject(() => StreamOptionsDto)
  stream_options?: StreamOptionsDto;

  @ApiPropertyOptional({ default: false, description: 'Turn on web search' })
  @IsOptional()
  @IsBooleanField()
  enable_search?: boolean;

  @ApiPropertyOptional({ type: SearchOptionsDto })
  @IsOptional()
  @NestedObject(() => SearchOptionsDto)
  search_options?: SearchOptionsDto;

  @ApiPropertyOptional(toolListSchema('At most 128: function tools, custom tools, or any object with a non-empty string type (forwarded unchanged)'))
  @IsOptional()
  @ToolList()
  tools?: ChatTool[];

  @ApiPropertyOptional(toolChoiceSchema())
  @IsOptional()
  @ToolChoiceField()
  tool_choice?: ToolChoice;

  @ApiPropertyOptional({ description: 'Normalize tool function JSON schemas for compatibility' })
  @IsOptional()
  @IsBooleanField()
  normalize_tool_schemas?: boolean;

  @ApiPropertyOptional({ description: 'Allow parallel function calling' })
  @IsOptional()
  @IsBooleanField()
  parallel_tool_calls?: boolean;

  @ApiPropertyOptional({ type: 'number', minimum: 0, maximum: 2, description: 'Sampling temperature; change this or top_p, not both' })
  @IsOptional()
  @IsNumberField(CHAT_REQUEST_RULES.temperature)
  temperature?: number;

  @ApiPropertyOptional({ type: 'number', minimum: 0.01, maximum: 1, description: 'Nucleus sampling' })
  @IsOptional()
  @IsNumberField(CHAT_REQUEST_RULES.top_p)
  top_p?: number;

  @ApiPropertyOptional({
    description: 'Up to 4 sequences where generation stops; the output does not contain them',
    nullable: true,
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'string' }, maxItems: MAX_STOP_SEQUENCES }],
  })
  @IsOptional()
  @Checked('stop', (value) => stopIssues(value))
  stop?: string | string[] | null;

  @ApiPropertyOptional({
    type: 'object',
    nullable: true,
    additionalProperties: { type: 'number', minimum: -100, maximum: 100 },
    description: 'Token id → bias from -100 to 100, added to the logits before sampling',
  })
  @IsOptional()
  @Checked('logitBias', (value) => logitBiasIssues(value))
  logit_bias?: Record<string, number> | null;

  @ApiPropertyOptional({ type: 'boolean', nullable: true, description: 'Return log probabilities of the output tokens' })
  @IsOptional()
  @IsBooleanField()
  logprobs?: boolean | null;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 20, nullable: true, description: 'Most likely tokens to return at each position; requires logprobs: true' })
  @IsOptional()
  @Checked('topLogprobsNeedLogprobs', (_value, args: ValidationArguments) =>
    isRecord(args.object) && args.object.logprobs === true ? [] : [`Expected logprobs: true alongside top_logprobs. Received ${sibling(args.object, 'logprobs')}`],
  )
  @IsNumberField(CHAT_REQUEST_RULES.top_logprobs)
  top_logprobs?: number | null;

  @ApiPropertyOptional({ enum: REASONING_EFFORTS })
  @IsOptional()
  @IsOneOf(REASONING_EFFORTS)
  reasoning_effort?: (typeof REASONING_EFFORTS)[number];

  @ApiPropertyOptional({ type: ReasoningDto })
  @IsOptional()
  @NestedObject(() => ReasoningDto)
  reasoning?: ReasoningDto;

  // ---- OpenAI fields our upstreams understand: lightly checked, forwarded as sent ----

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: 128, description: 'How many choices to generate' })
  @IsOptional()
  @IsNumberField(CHAT_REQUEST_RULES.n)
  n?: number;

  @ApiPropertyOptional({ type: 'integer', minimum: Number.MIN_SAFE_INTEGER, maximum: Number.MAX_SAFE_INTEGER, description: 'Best-effort deterministic sampling' })
  @IsOptional()
  @IsNumberField(CHAT_REQUEST_RULES.seed)
  seed?: number;

  @ApiPropertyOptional({ description: 'An id of the end user' })
  @IsOptional()
  @IsStringField()
  user?: string;

  @ApiPropertyOptional({ type: ResponseFormatDto })
  @IsOptional()
  @NestedObject(() => ResponseFormatDto)
  response_format?: ResponseFormatDto;

  @ApiPropertyOptional({ type: 'number', minimum: -2, maximum: 2 })
  @IsOptional()
  @IsNumberField(CHAT_REQUEST_RULES.penalty)
  presence_penalty?: number;

  @ApiPropertyOptional({ type: 'number', minimum: -2, maximum: 2 })
  @IsOptional()
  @IsNumberField(CHAT_REQUEST_RULES.penalty)
  frequency_penalty?: number;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: "Key-value pairs attached to the request; refused unless the operator allows them (ALLOW_UPSTREAM_METADATA), as they land in the operator's provider account" })
  @IsOptional()
  @IsObjectField()
  metadata?: Record<string, unknown>;

  @ApiPropertyOptional({ description: "Whether the upstream stores the completion; true is refused unless the operator allows it (ALLOW_UPSTREAM_STORE), as it is stored in the operator's provider account" })
  @IsOptional()
  @IsBooleanField()
  store?: boolean;

  @ApiPropertyOptional({ example: 'auto', description: "Upstream processing tier, e.g. auto, default, flex, priority; billed at the catalogue's price for the tier, and refused when the model has none" })
  @IsOptional()
  @IsStringField()
  service_tier?: string;

  @ApiPropertyOptional({ type: 'array', items: { type: 'string' }, example: ['text'], description: 'Output modalities, e.g. text, audio' })
  @IsOptional()
  @IsArrayField({ items: 'strings', ofStrings: true })
  modalities?: string[];

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Audio output settings, e.g. {voice, format}' })
  @IsOptional()
  @IsObjectField()
  audio?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'Predicted output, e.g. {type: "content", content}' })
  @IsOptional()
  @IsObjectField()
  prediction?: Record<string, unknown>;

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: "OpenAI's web search settings" })
  @IsOptional()
  @IsObjectField()
  web_search_options?: Record<string, unknown>;

  @ApiPropertyOptional({ example: 'medium', description: 'Answer length, e.g. low, medium, high' })
  @IsOptional()
  @IsStringField()
  verbosity?: string;
}
