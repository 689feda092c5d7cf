import { ApiExtraModels, ApiProperty, ApiPropertyOptional, getSchemaPath, type ApiPropertyOptions } from '@nestjs/swagger';
import { ValidateIf, ValidateNested, type ValidationArguments } from 'class-validator';
import { CacheControlDto } from './chat-content.dto';
import { documentedField, VariantModels, variantsSchema, type FieldDoc, ArrayOfVariants, Checked, composeDecorators, instanceIssues, IsArrayField, IsBooleanField, isRecord, IsObjectField, IsOneOf, IsStringField, NestedObject, ObjectOf, ObjectOfVariants, plainIssues, stringIssues, unknownVariant, type DtoClass, describeValue, describeWrongType, expectedOneOf, quoteList, relativeIssueLine } from '@igw/validation';

// ---------------------------------------------------------------------------------------------
// Tools (request `tools`): function tools, custom tools, and any other object with a `type`.
// ---------------------------------------------------------------------------------------------

export const MAX_TOOLS = 128;
export const FUNCTION_NAME_PATTERN = /^[a-zA-Z0-9_-]{1,64}$/;
export const FUNCTION_NAME_RULE = { pattern: FUNCTION_NAME_PATTERN, patternText: '1-64 letters, digits, underscores or dashes' };

export class FunctionDefinitionDto {
  // The pattern bounds the length; maxLength says so to clients that do not read patterns.
  @ApiProperty({ maxLength: 64 })
  @IsStringField(FUNCTION_NAME_RULE, { description: 'Letters, digits, underscores and dashes; at most 64 characters' })
  name!: string;

  @IsStringField({}, { optional: true, description: 'What the function does; the model reads it to decide when to call it' })
  description?: string;

  @IsObjectField('a JSON Schema object', { optional: true, description: 'The arguments as a JSON Schema object' })
  parameters?: Record<string, unknown>;

  @IsBooleanField({ optional: true, nullable: true, description: 'When true the model follows the schema exactly (a subset of JSON Schema is supported)' })
  strict?: boolean | null;
}

export class FunctionToolDto {
  @IsOneOf(['function'])
  type!: 'function';

  @NestedObject(() => FunctionDefinitionDto, undefined)
  function!: FunctionDefinitionDto;

  @NestedObject(() => CacheControlDto, undefined, { optional: true })
  cache_control?: CacheControlDto;
}

export const GRAMMAR_SYNTAXES = ['lark', 'regex'] as const;
export const CUSTOM_TOOL_FORMAT_TYPES = ['text', 'grammar'] as const;

export class GrammarDto {
  @IsStringField({}, { description: 'The grammar' })
  definition!: string;

  @IsOneOf(GRAMMAR_SYNTAXES)
  syntax!: (typeof GRAMMAR_SYNTAXES)[number];
}

export class CustomToolFormatDto {
  @IsOneOf(CUSTOM_TOOL_FORMAT_TYPES, { description: '`text`: unconstrained text; `grammar`: input follows `grammar`' })
  type!: (typeof CUSTOM_TOOL_FORMAT_TYPES)[number];

  @ApiPropertyOptional({ type: GrammarDto, description: 'Required when type is grammar' })
  @ValidateIf((format: CustomToolFormatDto) => format.type === 'grammar' || format.grammar !== undefined)
  @NestedObject(() => GrammarDto, 'an object (required with type grammar)')
  grammar?: GrammarDto;
}

export class CustomToolDefinitionDto {
  @IsStringField({ nonEmpty: true }, { description: 'Name of the tool' })
  name!: string;

  @IsStringField({}, { optional: true })
  description?: string;

  @NestedObject(() => CustomToolFormatDto, undefined, { optional: true, description: 'Input format; unconstrained text when absent' })
  format?: CustomToolFormatDto;
}

export class CustomToolDto {
  @IsOneOf(['custom'])
  type!: 'custom';

  @NestedObject(() => CustomToolDefinitionDto, undefined)
  custom!: CustomToolDefinitionDto;

  @NestedObject(() => CacheControlDto, undefined, { optional: true })
  cache_control?: CacheControlDto;
}

/** Any other tool an upstream understands (e.g. a provider's built-in search): forwarded unchanged. */
export interface OtherTool {
  type: string;
  [field: string]: unknown;
}

export type ChatTool = FunctionToolDto | CustomToolDto | OtherTool;

const TOOL_VARIANTS: Readonly<Record<string, DtoClass>> = { function: FunctionToolDto, custom: CustomToolDto };

/**
 * Issues of a tool list. Tools are forwarded exactly as sent (the list is open-ended), so
 * function and custom tools are checked on a copy and nothing inside them is dropped.
 */
export function toolListIssues(value: unknown): string[] {
  if (!Array.isArray(value)) return [`Expected an array of tools. Received ${describeWrongType(value)}`];
  if (value.length > MAX_TOOLS) return [`Expected at most ${MAX_TOOLS} tools. Received ${value.length}`];
  return value.flatMap((tool: unknown, index) => {
    const at = `[${index}]`;
    if (!isRecord(tool)) return [relativeIssueLine(at, `Expected a tool object with a non-empty string type. Received ${describeWrongType(tool)}`)];
    if (typeof tool.type !== 'string' || tool.type === '') return stringIssues(tool.type, { nonEmpty: true }).map((message) => relativeIssueLine(`${at}.type`, message));
    if (!Object.hasOwn(TOOL_VARIANTS, tool.type)) return [];
    return plainIssues(TOOL_VARIANTS[tool.type], tool, at);
  });
}

/** A tool list: at most 128 items, each a function tool, a custom tool or any object with a non-empty `type`. */
export function ToolList(doc: FieldDoc): PropertyDecorator {
  return documentedField(toolListSchema(), doc, VariantModels(TOOL_VARIANTS), Checked('toolList', (value) => toolListIssues(value)));
}

function toolListSchema(): ApiPropertyOptions {
  return {
    type: 'array',
    maxItems: MAX_TOOLS,
    items: {
      oneOf: [
        ...variantsSchema('type', TOOL_VARIANTS).oneOf,
        {
          type: 'object',
          description: 'Any other tool: an object with a non-empty string `type`, forwarded unchanged',
          required: ['type'],
          properties: { type: { type: 'string', minLength: 1 } },
          additionalProperties: true,
        },
      ],
    },
  };
}

// ---------------------------------------------------------------------------------------------
// Tool calls of an assistant message (earlier turns the client sends back).
// ---------------------------------------------------------------------------------------------

const EXTRA_CONTENT_DOC = 'Opaque provider metadata of the call (e.g. a thought signature); echoed back unchanged on the next turn';

export class ToolCallFunctionDto {
  @IsStringField({}, { description: 'Name of the function called' })
  name!: string;

  @IsStringField({}, { description: 'The arguments as a JSON string (as generated; may be invalid JSON)' })
  arguments!: string;
}

export class FunctionToolCallDto {
  @IsStringField({}, { description: 'Id of the call; tool messages answer it by tool_call_id' })
  id!: string;

  @IsOneOf(['function'])
  type!: 'function';

  @NestedObject(() => ToolCallFunctionDto, undefined)
  function!: ToolCallFunctionDto;

  @IsObjectField(undefined, { optional: true, description: EXTRA_CONTENT_DOC })
  extra_content?: Record<string, unknown>;
}

export class ToolCallCustomDto {
  @IsStringField({}, { description: 'Name of the custom tool called' })
  name!: string;

  @IsStringField({}, { description: 'The input the model generated for the tool' })
  input!: string;
}

export class CustomToolCallDto {
  @IsStringField({}, { description: 'Id of the call; tool messages answer it by tool_call_id' })
  id!: string;

  @IsOneOf(['custom'])
  type!: 'custom';

  @NestedObject(() => ToolCallCustomDto, undefined)
  custom!: ToolCallCustomDto;

  @IsObjectField(undefined, { optional: true, description: EXTRA_CONTENT_DOC })
  extra_content?: Record<string, unknown>;
}

export type AssistantToolCall = FunctionToolCallDto | CustomToolCallDto;
export const TOOL_CALL_TYPES = ['function', 'custom'] as const;

/** An assistant message's `tool_calls`: each call becomes its class by `type`; an unknown type fails. */
export function AssistantToolCalls(doc: FieldDoc): PropertyDecorator {
  const variants = { function: FunctionToolCallDto, custom: CustomToolCallDto };
  const { oneOf, discriminator } = variantsSchema('type', variants);
  return composeDecorators(
    ApiProperty({ items: { oneOf, discriminator: { propertyName: discriminator.propertyName } } }),
    VariantModels(variants),
    ArrayOfVariants('type', variants, unknownVariant('type', TOOL_CALL_TYPES)),
    IsArrayField({ items: 'tool calls', ofObjects: 'a tool call object' }, doc),
    ValidateNested({ each: true, message: (args: ValidationArguments) => `Expected a tool call object. Received ${describeWrongType(args.value)}` }),
  );
}

// ---------------------------------------------------------------------------------------------
// tool_choice: 'none' | 'auto' | 'required' | {function} | {custom} | {allowed_tools}
// ---------------------------------------------------------------------------------------------

export const TOOL_CHOICE_MODES = ['none', 'auto', 'required'] as const;
export const TOOL_CHOICE_TYPES = ['function', 'custom', 'allowed_tools'] as const;
export const ALLOWED_TOOLS_MODES = ['auto', 'required'] as const;

export class NamedToolDto {
  @IsStringField({ nonEmpty: true }, { description: 'Name of the tool' })
  name!: string;
}

export class ToolChoiceFunctionDto {
  @IsOneOf(['function'])
  type!: 'function';

  @NestedObject(() => NamedToolDto, undefined, { description: 'The function the model must call' })
  function!: NamedToolDto;
}

@ApiExtraModels(NamedToolDto)
export class ToolChoiceCustomDto {
  @IsOneOf(['custom'])
  type!: 'custom';

  @ApiProperty({
    description: 'The custom tool the model must call: its name, or {name}',
    oneOf: [{ type: 'string' }, { $ref: getSchemaPath(NamedToolDto) }],
  })
  @ObjectOf(() => NamedToolDto)
  @Checked('customToolReference', (value) => {
    if (isRecord(value)) return instanceIssues(value, '', true);
    if (typeof value === 'string') return stringIssues(value, { nonEmpty: true });
    return [`Expected a tool name or an object {name}. Received ${describeWrongType(value)}`];
  })
  custom!: string | NamedToolDto;
}

@ApiExtraModels(FunctionToolDto, CustomToolDto)
export class AllowedToolsDto {
  @IsOneOf(ALLOWED_TOOLS_MODES, { description: '`auto`: the model may call one of the tools; `required`: it must' })
  mode!: (typeof ALLOWED_TOOLS_MODES)[number];

  @ToolList({ description: 'The tools the model may call (tool definitions, e.g. {type: "function", function: {name}})' })
  tools!: ChatTool[];
}

export class ToolChoiceAllowedToolsDto {
  @IsOneOf(['allowed_tools'])
  type!: 'allowed_tools';

  @NestedObject(() => AllowedToolsDto, undefined)
  allowed_tools!: AllowedToolsDto;
}

export type ToolChoiceObject = ToolChoiceFunctionDto | ToolChoiceCustomDto | ToolChoiceAllowedToolsDto;
export type ToolChoice = (typeof TOOL_CHOICE_MODES)[number] | ToolChoiceObject;

const TOOL_CHOICE_VARIANTS: Readonly<Record<string, DtoClass>> = {
  function: ToolChoiceFunctionDto,
  custom: ToolChoiceCustomDto,
  allowed_tools: ToolChoiceAllowedToolsDto,
};
const TOOL_CHOICE_EXPECTED = `one of ${quoteList(TOOL_CHOICE_MODES)}, or an object with type ${quoteList(TOOL_CHOICE_TYPES)}`;

export function toolChoiceIssues(value: unknown): string[] {
  if (typeof value === 'string') {
    return (TOOL_CHOICE_MODES as readonly string[]).includes(value) ? [] : [`Expected ${TOOL_CHOICE_EXPECTED}. Received ${describeValue(value)}`];
  }
  if (!isRecord(value)) return [`Expected ${TOOL_CHOICE_EXPECTED}. Received ${describeWrongType(value)}`];
  if (!Object.values(TOOL_CHOICE_VARIANTS).some((type) => value instanceof type)) {
    return [relativeIssueLine('.type', expectedOneOf(TOOL_CHOICE_TYPES, value.type))];
  }
  return instanceIssues(value, '', true);
}

/** `tool_choice`: a mode string, or an object that becomes its class by `type` (undeclared fields dropped). */
export function ToolChoiceField(doc: FieldDoc): PropertyDecorator {
  const schema = { oneOf: [{ type: 'string', enum: [...TOOL_CHOICE_MODES] }, ...variantsSchema('type', TOOL_CHOICE_VARIANTS).oneOf] };
  return documentedField(schema, doc, VariantModels(TOOL_CHOICE_VARIANTS), ObjectOfVariants('type', TOOL_CHOICE_VARIANTS), Checked('toolChoice', (value) => toolChoiceIssues(value)));
}
