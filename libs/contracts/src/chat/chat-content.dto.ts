import { ApiProperty, ApiPropertyOptional, getSchemaPath, type ApiPropertyOptions } from '@nestjs/swagger';
import type { ValidationArguments } from 'class-validator';
import { IsOptional } from 'class-validator';
import {
  ArrayOfVariants,
  Checked,
  composeDecorators,
  eachItemIssues,
  instanceIssues,
  isRecord,
  IsOneOf,
  IsStringField,
  NestedObject,
  unknownVariant,
  type DtoClass,
} from '../validation/field-validators';
import { describeWrongType, relativeIssueLine } from '../validation/validation-issues';

export const CACHE_CONTROL_TYPES = ['ephemeral'] as const;
export const CACHE_TTLS = ['5m', '1h'] as const;
export const IMAGE_DETAILS = ['auto', 'low', 'high'] as const;

/** Prompt-caching hint on a text part or a tool (spec: `cache_control`). */
export class CacheControlDto {
  @ApiProperty({ enum: [...CACHE_CONTROL_TYPES], description: 'Always `ephemeral`' })
  @IsOneOf(CACHE_CONTROL_TYPES)
  type!: 'ephemeral';

  @ApiPropertyOptional({ enum: [...CACHE_TTLS], description: 'How long the cached prefix lives; `1h` is refused where the catalogue has no price for one-hour cache writes', default: '5m' })
  @IsOptional()
  @IsOneOf(CACHE_TTLS)
  ttl?: (typeof CACHE_TTLS)[number];
}

export class TextContentPartDto {
  @ApiProperty({ enum: ['text'] })
  @IsOneOf(['text'])
  type!: 'text';

  @ApiProperty({ description: 'The text' })
  @IsStringField()
  text!: string;

  @ApiPropertyOptional({ type: CacheControlDto })
  @IsOptional()
  @NestedObject(() => CacheControlDto)
  cache_control?: CacheControlDto;
}

export class ImageUrlDto {
  @ApiProperty({ description: 'An https address or a `data:image/...;base64,` URL' })
  @IsStringField({ nonEmpty: true })
  url!: string;

  @ApiPropertyOptional({ enum: [...IMAGE_DETAILS], default: 'auto' })
  @IsOptional()
  @IsOneOf(IMAGE_DETAILS)
  detail?: (typeof IMAGE_DETAILS)[number];
}

export class ImageContentPartDto {
  @ApiProperty({ enum: ['image_url'] })
  @IsOneOf(['image_url'])
  type!: 'image_url';

  @ApiProperty({ type: ImageUrlDto })
  @NestedObject(() => ImageUrlDto)
  image_url!: ImageUrlDto;

  @ApiPropertyOptional({ type: CacheControlDto })
  @IsOptional()
  @NestedObject(() => CacheControlDto)
  cache_control?: CacheControlDto;
}

export class InputAudioDto {
  @ApiProperty({ description: 'Base64-encoded audio' })
  @IsStringField({ nonEmpty: true })
  data!: string;

  @ApiProperty({ description: 'Encoding of the audio, e.g. wav or mp3', example: 'wav' })
  @IsStringField({ nonEmpty: true })
  format!: string;
}

export class AudioContentPartDto {
  @ApiProperty({ enum: ['input_audio'] })
  @IsOneOf(['input_audio'])
  type!: 'input_audio';

  @ApiProperty({ type: InputAudioDto })
  @NestedObject(() => InputAudioDto)
  input_audio!: InputAudioDto;

  @ApiPropertyOptional({ type: CacheControlDto })
  @IsOptional()
  @NestedObject(() => CacheControlDto)
  cache_control?: CacheControlDto;
}

export class FileDataDto {
  @ApiPropertyOptional({ description: 'Base64-encoded file content (a `data:` URL); this or file_id is required. A PDF or plain text reaches every chat source (Anthropic as a document block, Gemini as inline data); other media types only OpenAI-format sources' })
  @IsOptional()
  @IsStringField({ nonEmpty: true })
  file_data?: string;

  @ApiPropertyOptional({ description: "Id of a file uploaded to the operator's provider account; this or file_data is required. Refused unless the operator allows it (ALLOW_UPSTREAM_FILE_IDS)" })
  @IsOptional()
  @IsStringField({ nonEmpty: true })
  file_id?: string;

  @ApiPropertyOptional({ description: 'Name of the file' })
  @IsOptional()
  @IsStringField()
  filename?: string;
}

export class FileContentPartDto {
  @ApiProperty({ enum: ['file'] })
  @IsOneOf(['file'])
  type!: 'file';

  @ApiProperty({ type: FileDataDto })
  @NestedObject(() => FileDataDto)
  @Checked('fileDataOrId', (value) => (isRecord(value) && !hasFileDataOrId(value) ? ['Expected file_data or file_id. Received neither'] : []))
  file!: FileDataDto;

  @ApiPropertyOptional({ type: CacheControlDto })
  @IsOptional()
  @NestedObject(() => CacheControlDto)
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
export function MessageContent(rule: ContentRule): PropertyDecorator {
  const parts = partRules[rule.parts];
  return composeDecorators(
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

/** Swagger schema of a content field. */
export function contentSchema(parts: 'text' | 'user', nullable = false): ApiPropertyOptions {
  const items =
    parts === 'text'
      ? { $ref: getSchemaPath(TextContentPartDto) }
      : {
          oneOf: [TextContentPartDto, ImageContentPartDto, AudioContentPartDto, FileContentPartDto].map((type) => ({ $ref: getSchemaPath(type) })),
          discriminator: { propertyName: 'type' },
        };
  return {
    oneOf: [{ type: 'string' }, { type: 'array', items }],
    ...(nullable ? { nullable: true } : {}),
  };
}
