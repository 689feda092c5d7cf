import type { ApiPropertyOptions } from '@nestjs/swagger';
import type { ValidationArguments } from 'class-validator';
import { ArrayOfVariants, Checked, documentedField, eachItemIssues, instanceIssues, isRecord, IsOneOf, IsStringField, NestedObject, unknownVariant, VariantModels, variantsSchema, type DtoClass, type FieldDoc, describeWrongType, relativeIssueLine } from '@igw/validation';

export const CACHE_CONTROL_TYPES = ['ephemeral'] as const;
export const CACHE_TTLS = ['5m', '1h'] as const;
export const IMAGE_DETAILS = ['auto', 'low', 'high'] as const;

/** Prompt-caching hint on a text part or a tool (spec: `cache_control`). */
export class CacheControlDto {
  @IsOneOf(CACHE_CONTROL_TYPES, { description: 'Always `ephemeral`' })
  type!: 'ephemeral';

  @IsOneOf(CACHE_TTLS, { optional: true, description: 'How long the cached prefix lives; `1h` is refused where the catalogue has no price for one-hour cache writes', default: '5m' })
  ttl?: (typeof CACHE_TTLS)[number];
}

export class TextContentPartDto {
  @IsOneOf(['text'])
  type!: 'text';

  @IsStringField({}, { description: 'The text' })
  text!: string;

  @NestedObject(() => CacheControlDto, undefined, { optional: true })
  cache_control?: CacheControlDto;
}

export class ImageUrlDto {
  @IsStringField({ nonEmpty: true }, { description: 'An https address or a `data:image/...;base64,` URL' })
  url!: string;

  @IsOneOf(IMAGE_DETAILS, { optional: true, default: 'auto' })
  detail?: (typeof IMAGE_DETAILS)[number];
}

export class ImageContentPartDto {
  @IsOneOf(['image_url'])
  type!: 'image_url';

  @NestedObject(() => ImageUrlDto, undefined)
  image_url!: ImageUrlDto;

  @NestedObject(() => CacheControlDto, undefined, { optional: true })
  cache_control?: CacheControlDto;
}

export class InputAudioDto {
  @IsStringField({ nonEmpty: true }, { description: 'Base64-encoded audio' })
  data!: string;

  @IsStringField({ nonEmpty: true }, { description: 'Encoding of the audio, e.g. wav or mp3', example: 'wav' })
  format!: string;
}

export class AudioContentPartDto {
  @IsOneOf(['input_audio'])
  type!: 'input_audio';

  @NestedObject(() => InputAudioDto, undefined)
  input_audio!: InputAudioDto;

  @NestedObject(() => CacheControlDto, undefined, { optional: true })
  cache_control?: CacheControlDto;
}

export class FileDataDto {
  @IsStringField({ nonEmpty: true }, { optional: true, description: 'Base64-encoded file content (a `data:` URL); this or file_id is required. A PDF or plain text reaches every chat source (Anthropic as a document block, Gemini as inline data); other media types only OpenAI-format sources' })
  file_data?: string;

  @IsStringField({ nonEmpty: true }, { optional: true, description: "Id of a file uploaded to the operator's provider account; this or file_data is required. Refused unless the operator allows it (ALLOW_UPSTREAM_FILE_IDS)" })
  file_id?: string;

  @IsStringField({}, { optional: true, description: 'Name of the file' })
  filename?: string;
}

export class FileContentPartDto {
  @IsOneOf(['file'])
  type!: 'file';

  @NestedObject(() => FileDataDto, undefined)
  @Checked('fileDataOrId', (value) => (isRecord(value) && !hasFileDataOrId(value) ? ['Expected file_data or file_id. Received neither'] : []))
  file!: FileDataDto;

  @NestedObject(() => CacheControlDto, undefined, { optional: true })
  cache_control?: CacheControlDto;
}

function isAbsent(value: unknown): boolean {
  return value === undefined || value === null;
}

/** A file part's `file` names its content: file_data or file_id is given (not null). */
export function hasFileDataOrId(file: Record<string, unknown>): boolean {
  return !isAbsent(file.file_data) || !isAbsent(file.file_id);
}

export type TextContent = string | TextContentPartDto[];
export type UserContentPart = TextContentPartDto | ImageContentPartDto | AudioContentPartDto | FileContentPartDto;
export type UserContent = string | UserContentPart[];

export const TEXT_PART_TYPES = ['text'] as const;
export const USER_PART_TYPES = ['text', 'image_url', 'input_audio', 'file'] as const;

const TEXT_PARTS: Readonly<Record<string, DtoClass>> = { text: TextContentPartDto };
const USER_PARTS: Readonly<Record<string, DtoClass>> = {
  text: TextContentPartDto,
  image_url: ImageContentPartDto,
  input_audio: AudioContentPartDto,
  file: FileContentPartDto,
};

export interface ContentRule {
  /** Which part types the role takes. */
  parts: 'text' | 'user';
  /** When content may be missing or null (assistant messages with tool calls); required otherwise. */
  optionalWhen?: (message: object) => boolean;
  /** Appended to the expectation when content is missing, e.g. ` unless tool_calls or function_call is given`. */
  requiredNote?: string;
}

const partRules = {
  text: { variants: TEXT_PARTS, fallback: unknownVariant('type', TEXT_PART_TYPES), expected: 'a string or an array of text parts' },
  user: { variants: USER_PARTS, fallback: unknownVariant('type', USER_PART_TYPES), expected: 'a string or an array of content parts' },
};

/**
 * A message's `content`: a string or an array of parts by `type`. Parts become their DTO
 * classes (undeclared fields inside them are dropped); each is checked with its exact path,
 * e.g. `messages[0].content[1].cache_control.ttl`.
 */
export function MessageContent(rule: ContentRule, doc?: FieldDoc): PropertyDecorator {
  const parts = partRules[rule.parts];
  return documentedField(
    contentSchema(rule),
    doc,
    VariantModels(parts.variants),
    ArrayOfVariants('type', parts.variants, parts.fallback),
    Checked('messageContent', (value: unknown, args: ValidationArguments, firstOnly) => {
      if (value === undefined || value === null) {
        if (rule.optionalWhen?.(args.object)) return [];
        return [`Expected ${parts.expected}${rule.requiredNote ?? ''}. Received ${describeWrongType(value)}`];
      }
      if (typeof value === 'string') return [];
      if (!Array.isArray(value)) return [`Expected ${parts.expected}. Received ${describeWrongType(value)}`];
      return eachItemIssues(value, firstOnly, (part: unknown, index) =>
        isRecord(part)
          ? instanceIssues(part, `[${index}]`, true)
          : [relativeIssueLine(`[${index}]`, `Expected a content part object with a type. Received ${describeWrongType(part)}`)],
      );
    }),
  );
}

/** The schema of a content field: a string or parts of the role's classes; null is documented where content may be left out. */
function contentSchema(rule: ContentRule): ApiPropertyOptions {
  const { oneOf } = variantsSchema('type', partRules[rule.parts].variants);
  const items = oneOf.length === 1 ? oneOf[0] : { oneOf, discriminator: { propertyName: 'type' } };
  return {
    oneOf: [{ type: 'string' }, { type: 'array', items }],
    ...(rule.optionalWhen ? { required: false, nullable: true } : {}),
  };
}
