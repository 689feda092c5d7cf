import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { RefusesUnknownFields, type UnservedField, Checked, eachItemIssues, IsArrayField, IsBooleanField, IsNumberField, isRecord, IsObjectField, IsStringField, IsStringMapField, NestedObject, describeWrongType, expectedOneOf, relativeIssueLine } from '@igw/validation';

/** OpenAI's bounds on a response's `metadata`, which is kept with a stored response. */
export const RESPONSES_METADATA = { maxEntries: 16, maxKeyLength: 64, maxValueLength: 512 } as const;

// OpenAI's Responses API request (POST /v1/responses). Input items, content parts and tools are
// checked here for what the gateway reads of them and otherwise kept as sent, so item and tool
// types OpenAI adds later reach the translation, which decides what it can send upstream.
// Top-level fields each change what the answer is, so one the gateway does not serve is refused,
// naming it (RESPONSES_UNSERVED_FIELDS says why), and so is one it does not know: never dropped.

export const RESPONSES_ROLES = ['user', 'assistant', 'system', 'developer'] as const;
export const RESPONSES_TOOL_CHOICE_MODES = ['auto', 'none', 'required'] as const;
export const RESPONSES_TEXT_FORMAT_TYPES = ['text', 'json_object', 'json_schema'] as const;
export const RESPONSES_MAX_TOOLS = 512;

export type ResponsesItem = Record<string, unknown> & { type?: string };
export type ResponsesPart = Record<string, unknown> & { type: string };
export type ResponsesTool = Record<string, unknown> & { type: string; name?: string };
export type ResponsesToolChoice = (typeof RESPONSES_TOOL_CHOICE_MODES)[number] | (Record<string, unknown> & { type: string });

/** What validation checks of an input item of each type (itemIssues; an item without a type is a message); its other fields are kept as sent. */
export interface ResponsesCheckedItemFields {
  message: { role: (typeof RESPONSES_ROLES)[number]; content: string | ResponsesPart[] };
  function_call: { call_id: string; name: string; arguments: string };
  function_call_output: { call_id: string; output: string | ResponsesPart[] };
}

export type ResponsesCheckedItem<T extends keyof ResponsesCheckedItemFields> = ResponsesItem & ResponsesCheckedItemFields[T];

/** Whether an input item of a validated request is of `type`, and so has the fields validation checked for it. */
export function isCheckedItem<T extends keyof ResponsesCheckedItemFields>(item: ResponsesItem, type: T): item is ResponsesCheckedItem<T> {
  return (item.type ?? 'message') === type;
}

/** What validation checks of a content part of each type (partsIssues); null stands for absent. */
export interface ResponsesCheckedPartFields {
  input_text: { text: string };
  output_text: { text: string };
  input_image: { image_url?: string | null };
  input_file: { file_data?: string | null; filename?: string | null; file_id?: string | null; file_url?: string | null };
}

export type ResponsesCheckedPart<T extends keyof ResponsesCheckedPartFields> = ResponsesPart & { type: T } & ResponsesCheckedPartFields[T];

/** Whether a content part of a validated request is of `type`, and so has the fields validation checked for it. */
export function isCheckedPart<T extends keyof ResponsesCheckedPartFields>(part: ResponsesPart, type: T): part is ResponsesCheckedPart<T> {
  return part.type === type;
}

/** What validation checks of a tool of each type (responsesToolsIssues): a namespace's function tools are checked as top-level ones are. */
export interface ResponsesCheckedToolFields {
  function: { name: string; parameters?: Record<string, unknown> | null };
  namespace: { name: string; tools: ResponsesTool[] };
}

export type ResponsesCheckedTool<T extends keyof ResponsesCheckedToolFields> = ResponsesTool & { type: T } & ResponsesCheckedToolFields[T];

/** Whether a tool of a validated request is of `type`, and so has the fields validation checked for it. */
export function isCheckedTool<T extends keyof ResponsesCheckedToolFields>(tool: ResponsesTool, type: T): tool is ResponsesCheckedTool<T> {
  return tool.type === type;
}

function issue(path: string, expected: string, value: unknown): string {
  return relativeIssueLine(path, `Expected ${expected}. Received ${describeWrongType(value)}`);
}

const isNonEmptyString = (value: unknown): value is string => typeof value === 'string' && value !== '';

/** The fields of an `input_file` part, each a string when given. */
const INPUT_FILE_FIELDS = ['file_data', 'filename', 'file_id', 'file_url'] as const;

/** `firstOnly`: as a Check's (field-validators.ts), only whether there is an issue is asked. */
function partsIssues(content: unknown, path: string, firstOnly: boolean): string[] {
  if (typeof content === 'string') return [];
  if (!Array.isArray(content)) return [issue(path, 'a string or an array of content parts', content)];
  return eachItemIssues(content, firstOnly, (part: unknown, index) => {
    const at = `${path}[${index}]`;
    if (!isRecord(part)) return [issue(at, 'a content part object', part)];
    if (!isNonEmptyString(part.type)) return [issue(`${at}.type`, 'a non-empty string (the part type)', part.type)];
    const issues: string[] = [];
    if ((part.type === 'input_text' || part.type === 'output_text') && typeof part.text !== 'string') issues.push(issue(`${at}.text`, 'a string', part.text));
    if (part.type === 'input_image' && part.image_url !== undefined && part.image_url !== null && typeof part.image_url !== 'string') issues.push(issue(`${at}.image_url`, 'a string (a URL or a data URL)', part.image_url));
    if (part.type === 'input_file') {
      for (const field of INPUT_FILE_FIELDS) if (part[field] !== undefined && part[field] !== null && typeof part[field] !== 'string') issues.push(issue(`${at}.${field}`, 'a string', part[field]));
    }
    return issues;
  });
}

function itemIssues(item: unknown, at: string, firstOnly: boolean): string[] {
  if (!isRecord(item)) return [issue(at, 'an input item object', item)];
  const type = item.type ?? 'message';
  if (!isNonEmptyString(type)) return [issue(`${at}.type`, 'a non-empty string (the item type)', item.type)];
  const issues: string[] = [];
  switch (type) {
    case 'message':
      if (typeof item.role !== 'string' || !(RESPONSES_ROLES as readonly string[]).includes(item.role)) return [relativeIssueLine(`${at}.role`, expectedOneOf(RESPONSES_ROLES, item.role))];
      return partsIssues(item.content, `${at}.content`, firstOnly);
    case 'function_call':
      if (!isNonEmptyString(item.call_id)) issues.push(issue(`${at}.call_id`, 'a non-empty string', item.call_id));
      if (!isNonEmptyString(item.name)) issues.push(issue(`${at}.name`, 'a non-empty string', item.name));
      if (typeof item.arguments !== 'string') issues.push(issue(`${at}.arguments`, 'a string (the arguments as JSON)', item.arguments));
      return issues;
    case 'function_call_output':
      if (!isNonEmptyString(item.call_id)) issues.push(issue(`${at}.call_id`, 'a non-empty string', item.call_id));
      issues.push(...partsIssues(item.output, `${at}.output`, firstOnly));
      return issues;
  }
  return issues;
}

/** `input`: a string, or a list of items (messages, function calls and their outputs, ...). */
function responsesInputIssues(value: unknown, firstOnly: boolean): string[] {
  if (typeof value === 'string') return [];
  if (!Array.isArray(value)) return [issue('', 'a string or an array of input items', value)];
  return eachItemIssues(value, firstOnly, (item: unknown, index) => itemIssues(item, `[${index}]`, firstOnly));
}

function functionToolIssues(tool: Record<string, unknown>, at: string): string[] {
  const issues: string[] = [];
  if (!isNonEmptyString(tool.name)) issues.push(issue(`${at}.name`, 'a non-empty string', tool.name));
  if (tool.parameters !== undefined && tool.parameters !== null && !isRecord(tool.parameters)) issues.push(issue(`${at}.parameters`, 'a JSON Schema object', tool.parameters));
  return issues;
}

/** `tools`: function tools, namespaces of them, and built-in tools (kept as sent: the translation leaves them out). */
export function responsesToolsIssues(value: unknown): string[] {
  if (!Array.isArray(value)) return [issue('', 'an array of tools', value)];
  if (value.length > RESPONSES_MAX_TOOLS) return [`Expected at most ${RESPONSES_MAX_TOOLS} tools. Received ${value.length}`];
  const issues: string[] = [];
  value.forEach((tool: unknown, index) => {
    const at = `[${index}]`;
    if (!isRecord(tool)) return issues.push(issue(at, 'a tool object', tool));
    if (!isNonEmptyString(tool.type)) return issues.push(issue(`${at}.type`, 'a non-empty string (the tool type)', tool.type));
    if (tool.type === 'function') issues.push(...functionToolIssues(tool, at));
    if (tool.type === 'namespace') {
      if (!isNonEmptyString(tool.name)) issues.push(issue(`${at}.name`, 'a non-empty string', tool.name));
      if (!Array.isArray(tool.tools)) issues.push(issue(`${at}.tools`, 'an array of function tools', tool.tools));
      else
        tool.tools.forEach((inner: unknown, innerIndex) => {
          const innerAt = `${at}.tools[${innerIndex}]`;
          if (!isRecord(inner)) issues.push(issue(innerAt, 'a tool object', inner));
          else if (inner.type === 'function') issues.push(...functionToolIssues(inner, innerAt));
        });
    }
    return undefined;
  });
  return issues;
}

export function responsesToolChoiceIssues(value: unknown): string[] {
  if (typeof value === 'string') return (RESPONSES_TOOL_CHOICE_MODES as readonly string[]).includes(value) ? [] : [expectedOneOf(RESPONSES_TOOL_CHOICE_MODES, value)];
  if (!isRecord(value)) return [issue('', `one of ${RESPONSES_TOOL_CHOICE_MODES.join(', ')} or a tool choice object`, value)];
  if (!isNonEmptyString(value.type)) return [issue('.type', 'a non-empty string', value.type)];
  if (value.type === 'function' && !isNonEmptyString(value.name)) return [issue('.name', 'a non-empty string (the function to call)', value.name)];
  return [];
}

function textFormatIssues(value: unknown): string[] {
  if (!isRecord(value)) return [issue('', 'a format object', value)];
  if (typeof value.type !== 'string' || !(RESPONSES_TEXT_FORMAT_TYPES as readonly string[]).includes(value.type)) return [relativeIssueLine('.type', expectedOneOf(RESPONSES_TEXT_FORMAT_TYPES, value.type))];
  if (value.type !== 'json_schema') return [];
  const issues: string[] = [];
  if (!isNonEmptyString(value.name)) issues.push(issue('.name', 'a non-empty string', value.name));
  if (!isRecord(value.schema)) issues.push(issue('.schema', 'a JSON Schema object', value.schema));
  return issues;
}

export class ResponsesTextDto {
  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: '`{type: "text"}`, `{type: "json_object"}` or `{type: "json_schema", name, schema, strict?}`' })
  @IsOptional()
  @Checked('responsesTextFormat', textFormatIssues)
  format?: Record<string, unknown> & { type: (typeof RESPONSES_TEXT_FORMAT_TYPES)[number] };

  @IsStringField({}, { optional: true, description: 'Accepted, not sent upstream (not every source takes it)' })
  verbosity?: string;
}

export class ResponsesReasoningDto {
  @IsStringField({}, { optional: true, description: 'none, minimal, low, medium, high or xhigh (mapped to the nearest effort the chat pipeline takes)' })
  effort?: string;

  @IsStringField({}, { optional: true, description: 'Accepted (auto, concise, detailed): the reasoning text an upstream gives comes back as the summary' })
  summary?: string;
}

/**
 * OpenAI's Responses fields the gateway does not serve, with the values that mean the same as
 * leaving them out: any other value is a 400 naming the field, as is a field OpenAI's API does
 * not have.
 */
export const RESPONSES_UNSERVED_FIELDS: Readonly<Record<string, UnservedField>> = {
  background: {
    asAbsent: [false],
    expected: 'false or nothing',
    why: 'background mode is not served here (a response is answered while its request waits; stream: true for long answers)',
  },
  conversation: { expected: 'nothing', why: "OpenAI's conversation objects live in an OpenAI account, not here: continue a stored response with previous_response_id" },
  prompt: { expected: 'nothing', why: "prompt templates live in an OpenAI account, not here: send the prompt's text as instructions and input" },
  context_management: { expected: 'nothing', why: 'server-side context compaction is not served here' },
  moderation: { expected: 'nothing', why: 'moderation settings of a response are not served here: call POST /v1/moderations' },
  max_tool_calls: { expected: 'nothing', why: 'a cap on built-in tool calls is not served here (built-in tools are left out of the upstream call)' },
  top_logprobs: { expected: 'nothing', why: 'log probabilities of a response are not served here' },
  truncation: { asAbsent: ['disabled'], expected: "'disabled' or nothing", why: 'automatic truncation is not served here: a conversation longer than the context is a 400' },
  service_tier: { asAbsent: ['auto', 'default'], expected: "'auto', 'default' or nothing", why: 'other service tiers are served on chat completions only' },
  safety_identifier: { expected: 'nothing', why: 'not sent upstream here: send the end user\'s id as user' },
  stream_options: { expected: 'nothing', why: 'stream options of a response are not served here' },
  prompt_cache_retention: { expected: 'nothing', why: "the provider's cache retention is not set through this gateway" },
  prompt_cache_options: { expected: 'nothing', why: "the provider's cache options are not set through this gateway" },
};

/** The Responses API body (what the `openai` SDK's `responses.create` and Codex send). */
@RefusesUnknownFields(RESPONSES_UNSERVED_FIELDS)
export class ResponsesRequestDto {
  @IsStringField({ nonEmpty: true, maxLength: 256 }, { description: 'A catalogue model id or alias: any chat model, whatever its source', example: 'gpt-4o-mini' })
  model!: string;

  @ApiProperty({
    oneOf: [{ type: 'string' }, { type: 'array', items: { type: 'object', additionalProperties: true } }],
    description: 'A string, or items: messages (roles user, assistant, system, developer; input_text and input_image parts), function_call, function_call_output, and item_reference (`{type: "item_reference", id}`: an item of a stored response)',
  })
  @Checked('responsesInput', (value, _args, firstOnly) => responsesInputIssues(value, firstOnly))
  input!: string | ResponsesItem[];

  @IsStringField({}, { optional: true, description: 'A system message ahead of the input' })
  instructions?: string;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: 'Function tools `{type: "function", name, parameters}`, namespaces of them, and built-in tools (left out of the upstream call and named in the `x-gateway-dropped-tools` header)',
  })
  @IsOptional()
  @Checked('responsesTools', (value) => responsesToolsIssues(value))
  tools?: ResponsesTool[];

  @ApiPropertyOptional({ oneOf: [{ type: 'string', enum: [...RESPONSES_TOOL_CHOICE_MODES] }, { type: 'object', additionalProperties: true }] })
  @IsOptional()
  @Checked('responsesToolChoice', (value) => responsesToolChoiceIssues(value))
  tool_choice?: ResponsesToolChoice;

  @IsBooleanField({ optional: true })
  parallel_tool_calls?: boolean;

  @IsNumberField({ integer: true, min: 1, max: Number.MAX_SAFE_INTEGER }, { optional: true, description: 'The most tokens to generate, reasoning included' })
  max_output_tokens?: number;

  @IsNumberField({ min: 0, max: 2 }, { optional: true })
  temperature?: number;

  @IsNumberField({ min: 0, max: 1 }, { optional: true })
  top_p?: number;

  @NestedObject(() => ResponsesTextDto, undefined, { optional: true })
  text?: ResponsesTextDto;

  @NestedObject(() => ResponsesReasoningDto, undefined, { optional: true })
  reasoning?: ResponsesReasoningDto;

  @ApiPropertyOptional({
    type: 'object',
    additionalProperties: { type: 'string', maxLength: RESPONSES_METADATA.maxValueLength },
    maxProperties: RESPONSES_METADATA.maxEntries,
    description: `Returned on the response and kept with it; not sent upstream. At most ${RESPONSES_METADATA.maxEntries} pairs, keys of at most ${RESPONSES_METADATA.maxKeyLength} characters, string values of at most ${RESPONSES_METADATA.maxValueLength}, as OpenAI bounds it`,
  })
  @IsOptional()
  @IsStringMapField(RESPONSES_METADATA)
  metadata?: Record<string, string>;

  @IsStringField({}, { optional: true, description: 'An id of the end user' })
  user?: string;

  @IsBooleanField({ optional: true, default: false, description: 'Answer with the typed server-sent events' })
  stream?: boolean;

  @IsBooleanField({ optional: true, default: true, description: 'Keep the response (input items, output, usage) for RESPONSES_RETENTION_DAYS, readable with GET /v1/responses/{id} and continued with previous_response_id; false keeps nothing' })
  store?: boolean;

  @IsStringField({ maxLength: 256 }, { optional: true, description: "A stored response of this account to continue: its conversation (every turn's input and output, not its instructions) goes ahead of `input`; an unknown one is a 404" })
  previous_response_id?: string;

  @IsArrayField({ items: 'strings', ofStrings: true, max: 64 }, { optional: true, description: 'Accepted (e.g. reasoning.encrypted_content); nothing extra is included' })
  include?: string[];

  @IsStringField({}, { optional: true, description: 'Accepted, not sent upstream' })
  prompt_cache_key?: string;

  @IsObjectField(undefined, { optional: true, description: 'Accepted (Codex sends it), not sent upstream' })
  client_metadata?: Record<string, unknown>;
}
