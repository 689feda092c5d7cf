import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { MetaDto } from '../chat/chat-completion';
import { Checked, isRecord, IsStringField, RefusesUnknownFields, describeWrongType, relativeIssueLine } from '@igw/validation';

/** The inputs one moderation request may hold, as an embeddings request (each is a result). */
export const MAX_MODERATION_INPUTS = 2048;
/** The model a request without one is moderated by, as OpenAI's API defaults it. */
export const DEFAULT_MODERATION_MODEL = 'omni-moderation-latest';

export type ModerationPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };
/** A text, texts (one result each), or the parts of one multimodal input (omni-moderation). */
export type ModerationInput = string | string[] | ModerationPart[];

const INPUT_EXPECTED = `a non-empty string, a non-empty array (at most ${MAX_MODERATION_INPUTS}) of strings, or a non-empty array of parts {type: 'text', text} and {type: 'image_url', image_url: {url}}`;
const IMAGE_URL = /^(https?:\/\/|data:image\/)/i;

function partIssues(part: unknown, index: number): string[] {
  const at = (path: string, message: string) => [relativeIssueLine(`[${index}]${path}`, message)];
  if (!isRecord(part)) return at('', `Expected a part {type: 'text', text} or {type: 'image_url', image_url: {url}}, as the first item is. Received ${describeWrongType(part)}`);
  if (part.type === 'text') return typeof part.text === 'string' ? [] : at('.text', `Expected a string. Received ${describeWrongType(part.text)}`);
  if (part.type === 'image_url') {
    const url = isRecord(part.image_url) ? part.image_url.url : undefined;
    return typeof url === 'string' && IMAGE_URL.test(url) ? [] : at('.image_url.url', `Expected an http(s) URL or a data:image/ URL. Received ${describeWrongType(url)}`);
  }
  return at('.type', `Expected 'text' or 'image_url'. Received ${describeWrongType(part.type)}`);
}

/** The issues of an `input` value; each line names the item (`[2]`, `[1].image_url.url`) it is about. */
export function moderationInputIssues(value: unknown): string[] {
  if (typeof value === 'string') return value === '' ? [`Expected ${INPUT_EXPECTED}. Received ''`] : [];
  if (!Array.isArray(value)) return [`Expected ${INPUT_EXPECTED}. Received ${describeWrongType(value)}`];
  if (value.length === 0) return [`Expected ${INPUT_EXPECTED}. Received an empty array`];
  if (value.length > MAX_MODERATION_INPUTS) return [`Expected at most ${MAX_MODERATION_INPUTS} inputs. Received ${value.length}`];
  if (typeof value[0] === 'string') {
    return value.flatMap((item: unknown, index) => (typeof item === 'string' ? [] : [relativeIssueLine(`[${index}]`, `Expected a string, as the first item is. Received ${describeWrongType(item)}`)]));
  }
  return value.flatMap(partIssues);
}

/** The body of POST /v1/moderations, in OpenAI's shape so the official SDKs work unchanged; a field it does not declare is refused, as OpenAI refuses it. */
@RefusesUnknownFields()
export class ModerationRequestDto {
  @IsStringField({ nonEmpty: true, maxLength: 256 }, { optional: true, description: `A catalogue id or alias of a moderation model (default ${DEFAULT_MODERATION_MODEL})`, example: DEFAULT_MODERATION_MODEL })
  model?: string;

  @ApiProperty({
    description: `What to classify: a string, an array of strings (one result each, at most ${MAX_MODERATION_INPUTS}), or the parts of one input, text and image_url (models whose catalogue modalities take images, e.g. omni-moderation-latest)`,
    oneOf: [
      { type: 'string', example: 'I want to hug my cat.' },
      { type: 'array', items: { type: 'string' } },
      { type: 'array', items: { type: 'object', additionalProperties: true } },
    ],
  })
  @Checked('moderationInput', (value) => moderationInputIssues(value))
  input!: ModerationInput;

  @IsStringField({ nonEmpty: true, maxLength: 256 }, { optional: true, description: 'Provider routing override, case-insensitive: `auto`, or a connection one of its sources names', default: 'auto' })
  provider?: string;
}

export class ModerationResultDto {
  @ApiProperty({ description: 'Whether any category is flagged' }) flagged!: boolean;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'boolean' }, example: { harassment: false, violence: false } }) categories!: Record<string, boolean>;
  @ApiProperty({ type: 'object', additionalProperties: { type: 'number' }, example: { harassment: 0.0001, violence: 0.0002 } }) category_scores!: Record<string, number>;
  @ApiPropertyOptional({ type: 'object', additionalProperties: { type: 'array', items: { type: 'string' } }, description: "The input types (text, image) each category was scored on (omni models)" })
  category_applied_input_types?: Record<string, string[]>;
}

/** OpenAI's moderation answer, plus `meta.usage` as every billable response carries. */
export class ModerationListDto {
  @ApiProperty({ example: 'modr-0f8fad5bd9cb469fa16570867728950e' }) id!: string;
  @ApiProperty({ description: 'The catalogue id of the model', example: 'openai/omni-moderation-latest' }) model!: string;
  @ApiProperty({ type: [ModerationResultDto], description: 'One result per input, in input order' }) results!: ModerationResultDto[];
  @ApiPropertyOptional({ type: MetaDto, nullable: true, description: 'credits_used and usd_spent: exactly what the ledger records' })
  meta?: MetaDto | null;
}
