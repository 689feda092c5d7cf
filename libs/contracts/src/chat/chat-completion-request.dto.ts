import { ApiPropertyOptional } from '@nestjs/swagger';
import type { ValidationArguments } from 'class-validator';
import { IsOptional, ValidateIf } from 'class-validator';
import { ChatMessages, type ChatMessage } from './chat-messages.dto';
import { ToolChoiceField, ToolList, type ChatTool, type ToolChoice } from './chat-tools.dto';
import { arrayIssues, Checked, IsArrayField, IsBooleanField, IsNumberField, isRecord, IsObjectField, IsOneOf, IsStringField, NestedObject, numberIssues, type NumberRule, type StringRule, describeValue, describeWrongType } from '@igw/validation';

export * from './chat-content.dto';
export * from './chat-messages.dto';
export * from './chat-tools.dto';
export { describeValue, describeWrongType, describeWrongValue, expectedOneOf, validationIssues, type ValidationIssue } from '@igw/validation';

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
  @IsBooleanField({ description: 'Send a last chunk with the usage of the whole request' })
  include_usage!: boolean;
}

export class SearchOptionsDto {
  @IsBooleanField({ optional: true, description: 'Always search, instead of letting the model decide' })
  forced_search?: boolean;

  @IsOneOf(SEARCH_STRATEGIES, { optional: true })
  search_strategy?: (typeof SEARCH_STRATEGIES)[number];

  @IsBooleanField({ optional: true, description: 'Return the sources found' })
  enable_source?: boolean;
}

export class ReasoningDto {
  @IsOneOf(REASONING_OBJECT_EFFORTS, { optional: true, description: 'Not together with max_tokens' })
  effort?: (typeof REASONING_OBJECT_EFFORTS)[number];

  @Checked('reasoningBudgetOrEffort', (_value, args) =>
    isRecord(args.object) && args.object.effort !== undefined && args.object.effort !== null
      ? [`Expected either reasoning.effort or reasoning.max_tokens, not both. Received ${sibling(args.object, 'effort')}`]
      : [],
  )
  @IsNumberField(CHAT_REQUEST_RULES.reasoning_max_tokens, { optional: true, description: 'Token budget of the reasoning; not together with effort' })
  max_tokens?: number;

  @IsBooleanField({ optional: true, description: 'Leave the reasoning out of the response' })
  exclude?: boolean;
}

export class ResponseFormatDto {
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
export class ChatCompletionRequestDto {
  @IsStringField(CHAT_REQUEST_RULES.model, { description: 'A catalogue model id or alias', example: 'gpt-4o-mini' })
  model!: string;

  @IsStringField(CHAT_REQUEST_RULES.provider, {
    optional: true,
    description: 'Provider routing override, case-insensitive: `auto` (every source, by tier and weight), `fallback`, or a connection one of its sources names (its deployments alone)',
    default: 'auto',
    example: 'auto',
  })
  provider?: string;

  @ChatMessages({ description: 'The conversation; items by role' })
  messages!: ChatMessage[];

  @IsNumberField(CHAT_REQUEST_RULES.max_completion_tokens, { optional: true, description: 'Upper bound on generated tokens, visible and reasoning' })
  max_completion_tokens?: number;

  @IsNumberField(CHAT_REQUEST_RULES.max_tokens, { optional: true, description: 'Maximum generated tokens' })
  max_tokens?: number;

  @IsBooleanField({ optional: true, default: false, description: 'Answer with server-sent events' })
  stream?: boolean;

  @Checked('streamOptionsNeedStream', (_value, args) =>
    isRecord(args.object) && args.object.stream === true ? [] : [`Expected stream: true alongside stream_options. Received ${sibling(args.object, 'stream')}`],
  )
  @NestedObject(() => StreamOptionsDto, undefined, { optional: true, description: 'Only with stream: true' })
  stream_options?: StreamOptionsDto;

  @IsBooleanField({ optional: true, default: false, description: 'Turn on web search' })
  enable_search?: boolean;

  @NestedObject(() => SearchOptionsDto, undefined, { optional: true })
  search_options?: SearchOptionsDto;

  @ToolList({ optional: true, description: 'At most 128: function tools, custom tools, or any object with a non-empty string type (forwarded unchanged)' })
  tools?: ChatTool[];

  @ToolChoiceField({
    optional: true,
    description:
      "`none` (no tool; the default without tools), `auto` (the model picks; the default with tools), `required` (at least one tool call), or an object forcing a function, a custom tool, or limiting the callable set",
  })
  tool_choice?: ToolChoice;

  @IsBooleanField({ optional: true, description: 'Normalize tool function JSON schemas for compatibility' })
  normalize_tool_schemas?: boolean;

  @IsBooleanField({ optional: true, description: 'Allow parallel function calling' })
  parallel_tool_calls?: boolean;

  @IsNumberField(CHAT_REQUEST_RULES.temperature, { optional: true, description: 'Sampling temperature; change this or top_p, not both' })
  temperature?: number;

  @IsNumberField(CHAT_REQUEST_RULES.top_p, { optional: true, description: 'Nucleus sampling' })
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

  @IsBooleanField({ optional: true, nullable: true, description: 'Return log probabilities of the output tokens' })
  logprobs?: boolean | null;

  @Checked('topLogprobsNeedLogprobs', (_value, args: ValidationArguments) =>
    isRecord(args.object) && args.object.logprobs === true ? [] : [`Expected logprobs: true alongside top_logprobs. Received ${sibling(args.object, 'logprobs')}`],
  )
  @IsNumberField(CHAT_REQUEST_RULES.top_logprobs, { optional: true, nullable: true, description: 'Most likely tokens to return at each position; requires logprobs: true' })
  top_logprobs?: number | null;

  @IsOneOf(REASONING_EFFORTS, { optional: true })
  reasoning_effort?: (typeof REASONING_EFFORTS)[number];

  @NestedObject(() => ReasoningDto, undefined, { optional: true })
  reasoning?: ReasoningDto;

  // ---- OpenAI fields our upstreams understand: lightly checked, forwarded as sent ----

  @IsNumberField(CHAT_REQUEST_RULES.n, { optional: true, description: 'How many choices to generate' })
  n?: number;

  @IsNumberField(CHAT_REQUEST_RULES.seed, { optional: true, description: 'Best-effort deterministic sampling' })
  seed?: number;

  @IsStringField({}, { optional: true, description: 'An id of the end user' })
  user?: string;

  @NestedObject(() => ResponseFormatDto, undefined, { optional: true })
  response_format?: ResponseFormatDto;

  @IsNumberField(CHAT_REQUEST_RULES.penalty, { optional: true })
  presence_penalty?: number;

  @IsNumberField(CHAT_REQUEST_RULES.penalty, { optional: true })
  frequency_penalty?: number;

  @IsObjectField(undefined, { optional: true, description: "Key-value pairs attached to the request; refused unless the operator allows them (ALLOW_UPSTREAM_METADATA), as they land in the operator's provider account" })
  metadata?: Record<string, unknown>;

  @IsBooleanField({ optional: true, description: "Whether the upstream stores the completion; true is refused unless the operator allows it (ALLOW_UPSTREAM_STORE), as it is stored in the operator's provider account" })
  store?: boolean;

  @IsStringField({}, { optional: true, example: 'auto', description: "Upstream processing tier, e.g. auto, default, flex, priority; billed at the catalogue's price for the tier, and refused when the model has none" })
  service_tier?: string;

  @IsArrayField({ items: 'strings', ofStrings: true }, { optional: true, example: ['text'], description: 'Output modalities, e.g. text, audio' })
  modalities?: string[];

  @IsObjectField(undefined, { optional: true, description: 'Audio output settings, e.g. {voice, format}' })
  audio?: Record<string, unknown>;

  @IsObjectField(undefined, { optional: true, description: 'Predicted output, e.g. {type: "content", content}' })
  prediction?: Record<string, unknown>;

  @IsObjectField(undefined, { optional: true, description: "OpenAI's web search settings" })
  web_search_options?: Record<string, unknown>;

  @IsStringField({}, { optional: true, example: 'medium', description: 'Answer length, e.g. low, medium, high' })
  verbosity?: string;
}
