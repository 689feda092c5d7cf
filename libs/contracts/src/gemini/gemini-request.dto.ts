import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { Checked, eachItemIssues, IsArrayField, IsBooleanField, IsNumberField, isRecord, IsObjectField, IsOneOf, IsStringField, NestedObject, describeWrongType, expectedOneOf, relativeIssueLine } from '@igw/validation';

// Google's Generative Language API requests (POST /v1beta/models/{model}:generateContent and its
// siblings; the model is in the path, not the body). Contents, parts and function declarations
// are checked for what the gateway reads of them and otherwise kept as sent (a Google source gets
// them as they came); generationConfig and toolConfig are declared field by field, so a field the
// gateway does not know is dropped from them, as undeclared top-level fields are.

export const GEMINI_ROLES = ['user', 'model'] as const;
export const GEMINI_FUNCTION_CALLING_MODES = ['AUTO', 'ANY', 'NONE', 'VALIDATED', 'MODE_UNSPECIFIED'] as const;
export const GEMINI_THINKING_LEVELS = ['MINIMAL', 'LOW', 'MEDIUM', 'HIGH', 'minimal', 'low', 'medium', 'high', 'THINKING_LEVEL_UNSPECIFIED'] as const;
/** Function declarations across a request's tools (Google documents 128 and more; the gateway takes as many as a chat request). */
export const GEMINI_MAX_FUNCTION_DECLARATIONS = 512;
export const GEMINI_MAX_BATCH_EMBED_REQUESTS = 2048;
/** The part kinds a turn may carry (one of these fields per part). */
const PART_KINDS = ['text', 'inlineData', 'fileData', 'functionCall', 'functionResponse', 'executableCode', 'codeExecutionResult'] as const;

/** A part as validation leaves it: each kind it carries checked (partIssues), its other fields kept as sent. */
export interface GeminiRequestPart {
  text?: string;
  inlineData?: { mimeType: string; data: string };
  fileData?: { fileUri: string; mimeType?: unknown };
  functionCall?: { name: string; args?: Record<string, unknown>; id?: unknown };
  functionResponse?: { name: string; response?: Record<string, unknown>; id?: unknown };
  thought?: boolean;
  thoughtSignature?: string;
  [other: string]: unknown;
}

export interface GeminiRequestContent {
  role?: (typeof GEMINI_ROLES)[number];
  parts: GeminiRequestPart[];
}

export interface GeminiRequestTool {
  functionDeclarations?: Array<{ name: string; description?: string; parameters?: Record<string, unknown>; parametersJsonSchema?: Record<string, unknown> }>;
  googleSearch?: Record<string, unknown>;
  [other: string]: unknown;
}

function issue(path: string, expected: string, value: unknown): string {
  return relativeIssueLine(path, `Expected ${expected}. Received ${describeWrongType(value)}`);
}

function partIssues(part: unknown, path: string): string[] {
  if (!isRecord(part)) return [issue(path, 'a part object', part)];
  // Google takes one kind per part; each one given is checked, since the translation may read any of them.
  const kinds = PART_KINDS.filter((name) => part[name] !== undefined);
  if (kinds.length === 0) {
    // A part of thought text alone is Google's own (thought: true with text); anything else says nothing.
    return [issue(path, `a part with one of ${PART_KINDS.join(', ')}`, part)];
  }
  const issues: string[] = [];
  for (const kind of kinds) issues.push(...partKindIssues(kind, part[kind], `${path}.${kind}`));
  if (part.thought !== undefined && typeof part.thought !== 'boolean') issues.push(issue(`${path}.thought`, 'a boolean', part.thought));
  if (part.thoughtSignature !== undefined && typeof part.thoughtSignature !== 'string') issues.push(issue(`${path}.thoughtSignature`, 'a string', part.thoughtSignature));
  return issues;
}

function partKindIssues(kind: (typeof PART_KINDS)[number], value: unknown, at: string): string[] {
  const issues: string[] = [];
  switch (kind) {
    case 'text':
      if (typeof value !== 'string') issues.push(issue(at, 'a string', value));
      break;
    case 'inlineData':
      if (!isRecord(value)) issues.push(issue(at, 'an object {mimeType, data}', value));
      else {
        if (typeof value.mimeType !== 'string' || value.mimeType === '') issues.push(issue(`${at}.mimeType`, 'a non-empty string', value.mimeType));
        if (typeof value.data !== 'string') issues.push(issue(`${at}.data`, 'a base64 string', value.data));
      }
      break;
    case 'fileData':
      if (!isRecord(value) || typeof value.fileUri !== 'string' || value.fileUri === '') issues.push(issue(`${at}.fileUri`, 'a non-empty string', isRecord(value) ? value.fileUri : value));
      break;
    case 'functionCall':
      if (!isRecord(value)) issues.push(issue(at, 'an object {name, args}', value));
      else {
        if (typeof value.name !== 'string' || value.name === '') issues.push(issue(`${at}.name`, 'a non-empty string', value.name));
        if (value.args !== undefined && !isRecord(value.args)) issues.push(issue(`${at}.args`, 'an object', value.args));
      }
      break;
    case 'functionResponse':
      if (!isRecord(value)) issues.push(issue(at, 'an object {name, response}', value));
      else {
        if (typeof value.name !== 'string' || value.name === '') issues.push(issue(`${at}.name`, 'a non-empty string', value.name));
        if (value.response !== undefined && !isRecord(value.response)) issues.push(issue(`${at}.response`, 'an object', value.response));
      }
      break;
  }
  return issues;
}

/** `checkRole`: a turn's role is user or model; a system instruction's or an embedded text's is not read. */
function contentIssues(content: unknown, path: string, firstOnly: boolean, checkRole: boolean): string[] {
  if (!isRecord(content)) return [issue(path, 'a content object {role, parts}', content)];
  const issues: string[] = [];
  if (checkRole && content.role !== undefined && !(GEMINI_ROLES as readonly string[]).includes(content.role as string)) {
    issues.push(relativeIssueLine(`${path}.role`, expectedOneOf(GEMINI_ROLES, content.role)));
  }
  if (!Array.isArray(content.parts)) return [...issues, issue(`${path}.parts`, 'an array of parts', content.parts)];
  return [...issues, ...eachItemIssues(content.parts, firstOnly, (part: unknown, index) => partIssues(part, `${path}.parts[${index}]`))];
}

function contentsIssues(value: unknown, firstOnly: boolean): string[] {
  if (!Array.isArray(value)) return [issue('', 'a non-empty array of contents', value)];
  if (value.length === 0) return ['Expected a non-empty array of contents. Received an empty array'];
  return eachItemIssues(value, firstOnly, (content: unknown, index) => contentIssues(content, `[${index}]`, firstOnly, true));
}

function toolsIssues(value: unknown): string[] {
  if (!Array.isArray(value)) return [issue('', 'an array of tools', value)];
  const issues: string[] = [];
  let declarations = 0;
  value.forEach((tool: unknown, index) => {
    const at = `[${index}]`;
    if (!isRecord(tool)) return issues.push(issue(at, 'a tool object', tool));
    const list = tool.functionDeclarations;
    if (list === undefined) return undefined;
    if (!Array.isArray(list)) return issues.push(issue(`${at}.functionDeclarations`, 'an array of function declarations', list));
    declarations += list.length;
    list.forEach((declaration: unknown, position) => {
      const where = `${at}.functionDeclarations[${position}]`;
      if (!isRecord(declaration)) return issues.push(issue(where, 'a function declaration object', declaration));
      if (typeof declaration.name !== 'string' || !/^[A-Za-z_][\w.:-]{0,127}$/.test(declaration.name)) {
        issues.push(issue(`${where}.name`, '1-128 letters, digits, underscores, dots, colons or dashes, not starting with a digit', declaration.name));
      }
      if (declaration.description !== undefined && typeof declaration.description !== 'string') issues.push(issue(`${where}.description`, 'a string', declaration.description));
      for (const field of ['parameters', 'parametersJsonSchema', 'response', 'responseJsonSchema']) {
        if (declaration[field] !== undefined && !isRecord(declaration[field])) issues.push(issue(`${where}.${field}`, 'a schema object', declaration[field]));
      }
      return undefined;
    });
    return undefined;
  });
  if (declarations > GEMINI_MAX_FUNCTION_DECLARATIONS) issues.push(`Expected at most ${GEMINI_MAX_FUNCTION_DECLARATIONS} function declarations. Received ${declarations}`);
  return issues;
}

export class GeminiFunctionCallingConfigDto {
  @IsOneOf(GEMINI_FUNCTION_CALLING_MODES, { optional: true, description: 'AUTO (the default), ANY (a call is forced) or NONE' })
  mode?: (typeof GEMINI_FUNCTION_CALLING_MODES)[number];

  @IsArrayField({ items: 'function names', ofStrings: true, max: GEMINI_MAX_FUNCTION_DECLARATIONS }, { optional: true, description: 'With mode ANY: the functions the model may call' })
  allowedFunctionNames?: string[];
}

export class GeminiToolConfigDto {
  @NestedObject(() => GeminiFunctionCallingConfigDto, undefined, { optional: true })
  functionCallingConfig?: GeminiFunctionCallingConfigDto;
}

export class GeminiThinkingConfigDto {
  @IsNumberField({ integer: true, min: -1 }, { optional: true, description: 'Thinking tokens; 0 turns thinking off, -1 lets the model decide' })
  thinkingBudget?: number;

  @IsBooleanField({ optional: true, description: 'Answer thought summaries as parts with thought: true' })
  includeThoughts?: boolean;

  @IsOneOf(GEMINI_THINKING_LEVELS, { optional: true, description: "Gemini 3's thinking level (instead of a budget)" })
  thinkingLevel?: string;
}

export class GeminiGenerationConfigDto {
  @IsNumberField({ min: 0, max: 2 }, { optional: true })
  temperature?: number;

  @IsNumberField({ min: 0, max: 1 }, { optional: true })
  topP?: number;

  @IsNumberField({ integer: true, min: 1 }, { optional: true, description: 'Sent to Google sources; no other source takes it' })
  topK?: number;

  @IsNumberField({ integer: true, min: 1 }, { optional: true, description: "The most tokens to generate (lowered to the model's output limit)" })
  maxOutputTokens?: number;

  @IsArrayField({ items: 'stop sequences', ofStrings: true, max: 5 }, { optional: true })
  stopSequences?: string[];

  @IsNumberField({ integer: true, min: 1, max: 8 }, { optional: true })
  candidateCount?: number;

  @IsStringField({ maxLength: 128 }, { optional: true, description: 'text/plain (the default), application/json (JSON output), text/x.enum' })
  responseMimeType?: string;

  @IsObjectField('a schema object', { optional: true, description: "An OpenAPI schema object (Google's Schema: type STRING, OBJECT, ...), with responseMimeType application/json" })
  responseSchema?: Record<string, unknown>;

  @IsObjectField('a JSON Schema object', { optional: true, description: 'A JSON Schema, with responseMimeType application/json' })
  responseJsonSchema?: Record<string, unknown>;

  @NestedObject(() => GeminiThinkingConfigDto, undefined, { optional: true })
  thinkingConfig?: GeminiThinkingConfigDto;

  @IsNumberField({ min: -2, max: 2 }, { optional: true })
  presencePenalty?: number;

  @IsNumberField({ min: -2, max: 2 }, { optional: true })
  frequencyPenalty?: number;

  @IsNumberField({ integer: true }, { optional: true })
  seed?: number;

  @IsBooleanField({ optional: true })
  responseLogprobs?: boolean;

  @IsNumberField({ integer: true, min: 0, max: 20 }, { optional: true, description: 'With responseLogprobs: the top candidates per position' })
  logprobs?: number;
}

/** `:countTokens`'s body and the prompt part of every generateContent request. */
export class GeminiPromptDto {
  @ApiProperty({
    type: 'array',
    minItems: 1,
    description: 'Turns of `user` and `model`, each `{role, parts}`; a part carries text, inlineData, fileData, functionCall or functionResponse (thought and thoughtSignature kept)',
    items: { type: 'object', additionalProperties: true },
  })
  @Checked('geminiContents', (value, _args, firstOnly) => contentsIssues(value, firstOnly))
  contents!: GeminiRequestContent[];

  @ApiPropertyOptional({ type: 'object', additionalProperties: true, description: 'The system prompt, `{parts: [{text}]}`' })
  @IsOptional()
  @Checked('geminiSystemInstruction', (value, _args, firstOnly) => contentIssues(value, '', firstOnly, false))
  systemInstruction?: GeminiRequestContent;

  @ApiPropertyOptional({
    type: 'array',
    items: { type: 'object', additionalProperties: true },
    description: '`{functionDeclarations: [{name, description, parameters | parametersJsonSchema}]}`; `{googleSearch: {}}` where the source runs it (Google sources), left out elsewhere',
  })
  @IsOptional()
  @Checked('geminiTools', (value) => toolsIssues(value))
  tools?: GeminiRequestTool[];

  @NestedObject(() => GeminiToolConfigDto, undefined, { optional: true })
  toolConfig?: GeminiToolConfigDto;
}

/** `:generateContent` and `:streamGenerateContent`. */
export class GeminiGenerateContentRequestDto extends GeminiPromptDto {
  @NestedObject(() => GeminiGenerationConfigDto, undefined, { optional: true })
  generationConfig?: GeminiGenerationConfigDto;

  @ApiPropertyOptional({ type: 'array', items: { type: 'object', additionalProperties: true }, description: '`{category, threshold}`: sent to Google sources as they are; other sources have no equivalent' })
  @IsOptional()
  @IsArrayField({ items: 'safety settings', ofObjects: 'a safety setting object {category, threshold}', max: 32 })
  safetySettings?: Array<Record<string, unknown>>;

  @IsStringField({ maxLength: 512 }, { optional: true, description: "Refused: a cached content names the upstream account's cache, shared by every client of the gateway" })
  cachedContent?: string;
}

/** `:countTokens`: either the prompt itself or a whole `generateContentRequest`. */
export class GeminiCountTokensRequestDto {
  @ApiPropertyOptional({ type: 'array', items: { type: 'object', additionalProperties: true }, description: 'The turns to count (or send generateContentRequest)' })
  @IsOptional()
  @Checked('geminiContents', (value, _args, firstOnly) => contentsIssues(value, firstOnly))
  contents?: GeminiRequestContent[];

  @NestedObject(() => GeminiGenerateContentRequestDto, undefined, { optional: true, description: 'A whole request to count, system instruction and tools included' })
  generateContentRequest?: GeminiGenerateContentRequestDto;
}

export class GeminiEmbedContentRequestDto {
  @IsStringField({ nonEmpty: true, maxLength: 256 }, { optional: true, description: 'Inside batchEmbedContents: `models/<id>`, the model of the path' })
  model?: string;

  @ApiProperty({ type: 'object', additionalProperties: true, description: 'The text to embed, `{parts: [{text}]}`' })
  @Checked('geminiEmbedContent', (value, _args, firstOnly) => embedContentIssues(value, firstOnly))
  content!: GeminiRequestContent;

  @IsStringField({ maxLength: 64 }, { optional: true, description: 'Accepted; sent to no source (the gateway embeds through OpenAI-shaped embeddings)' })
  taskType?: string;

  @IsStringField({ maxLength: 1024 }, { optional: true, description: 'Accepted; sent to no source' })
  title?: string;

  @IsNumberField({ integer: true, min: 1 }, { optional: true, description: 'A shorter vector, where the model takes dimensions' })
  outputDimensionality?: number;
}

function embedContentIssues(value: unknown, firstOnly: boolean): string[] {
  const issues = contentIssues(value, '', firstOnly, false);
  if (issues.length > 0 || !isRecord(value)) return issues;
  const parts = value.parts as unknown[];
  if (parts.length === 0) return ['.parts: Expected a non-empty array of text parts. Received an empty array'];
  return eachItemIssues(parts, firstOnly, (part: unknown, index) =>
    isRecord(part) && typeof part.text === 'string' ? [] : [issue(`.parts[${index}]`, 'a text part {text} (embeddings take text only)', part)],
  );
}

export class GeminiBatchEmbedContentsRequestDto {
  // The items' class, which the checks below validate them as.
  @ApiProperty({ type: [GeminiEmbedContentRequestDto] })
  @IsArrayField({ items: 'embed requests', nonEmpty: true, max: GEMINI_MAX_BATCH_EMBED_REQUESTS, ofObjects: 'an embedContent request object' }, { description: `One embedContent request per text (at most ${GEMINI_MAX_BATCH_EMBED_REQUESTS}), each with the path's model` })
  @Checked('geminiEmbedRequests', (value, _args, firstOnly) =>
    Array.isArray(value) ? eachItemIssues(value, firstOnly, (request: unknown, index) => (isRecord(request) ? embedContentIssues(request.content, firstOnly).map((line) => `[${index}].content${line.startsWith('.') || line.startsWith('[') ? '' : ': '}${line}`) : [])) : [],
  )
  requests!: GeminiEmbedContentRequestDto[];
}
