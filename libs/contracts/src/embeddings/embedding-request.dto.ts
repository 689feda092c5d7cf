import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { Checked, IsNumberField, IsOneOf, IsStringField, NullMeansAbsent, describeWrongType, relativeIssueLine } from '@igw/validation';

/** OpenAI's limit on the number of inputs of one embeddings request. */
export const MAX_EMBEDDING_INPUTS = 2048;
export const EMBEDDING_ENCODING_FORMATS = ['float', 'base64'] as const;
export type EmbeddingEncodingFormat = (typeof EMBEDDING_ENCODING_FORMATS)[number];
/** What `input` may be: a text, texts, one token array, or token arrays. */
export type EmbeddingInput = string | string[] | number[] | number[][];

const INPUT_EXPECTED = `a non-empty string, or a non-empty array (at most ${MAX_EMBEDDING_INPUTS}) of non-empty strings, of token ids, or of non-empty token id arrays`;

const isTokenId = (value: unknown): boolean => typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;

/** The issues of an `input` value; each line names the item (`[2]`, `[1][4]`) it is about. */
export function embeddingInputIssues(value: unknown): string[] {
  if (typeof value === 'string') return value === '' ? [`Expected ${INPUT_EXPECTED}. Received ''`] : [];
  if (!Array.isArray(value)) return [`Expected ${INPUT_EXPECTED}. Received ${describeWrongType(value)}`];
  if (value.length === 0) return [`Expected ${INPUT_EXPECTED}. Received an empty array`];
  if (value.length > MAX_EMBEDDING_INPUTS) return [`Expected at most ${MAX_EMBEDDING_INPUTS} inputs. Received ${value.length}`];
  const first: unknown = value[0];
  if (typeof first === 'number') {
    // One token array: every item a token id.
    const bad = value.findIndex((item) => !isTokenId(item));
    return bad < 0 ? [] : [relativeIssueLine(`[${bad}]`, `Expected a token id (an integer of at least 0), as the first item is. Received ${describeWrongType(value[bad])}`)];
  }
  if (Array.isArray(first)) {
    return value.flatMap((item: unknown, index) => {
      if (!Array.isArray(item)) return [relativeIssueLine(`[${index}]`, `Expected an array of token ids, as the first item is. Received ${describeWrongType(item)}`)];
      if (item.length === 0) return [relativeIssueLine(`[${index}]`, 'Expected a non-empty array of token ids. Received an empty array')];
      const bad = item.findIndex((token) => !isTokenId(token));
      return bad < 0 ? [] : [relativeIssueLine(`[${index}][${bad}]`, `Expected a token id (an integer of at least 0). Received ${describeWrongType(item[bad])}`)];
    });
  }
  return value.flatMap((item: unknown, index) => {
    if (typeof item !== 'string') return [relativeIssueLine(`[${index}]`, `Expected a non-empty string, as the first item is. Received ${describeWrongType(item)}`)];
    if (item === '') return [relativeIssueLine(`[${index}]`, "Expected a non-empty string. Received ''")];
    return [];
  });
}

/**
 * The body of POST /v1/embeddings (spec: "POST /v1/embeddings"), in OpenAI's shape so the
 * official SDKs work unchanged. Validated by the global pipe (undeclared fields are dropped).
 * The model's own limits (vector length, context) are checked once the model is known.
 */
export class EmbeddingRequestDto {
  @IsStringField({ nonEmpty: true, maxLength: 256 }, { description: 'A catalogue id or alias of an embeddings model', example: 'text-embedding-3-small' })
  model!: string;

  @ApiProperty({
    description: `Text to embed: a string, an array of strings (one vector each, at most ${MAX_EMBEDDING_INPUTS}), or token ids (an array of integers, or an array of such arrays). Each input must fit the model's contextLength.`,
    oneOf: [
      { type: 'string', example: 'The food was delicious.' },
      { type: 'array', items: { type: 'string' } },
      { type: 'array', items: { type: 'integer' } },
      { type: 'array', items: { type: 'array', items: { type: 'integer' } } },
    ],
  })
  @Checked('embeddingInput', (value) => embeddingInputIssues(value))
  input!: EmbeddingInput;

  @IsNumberField({ integer: true, min: 1 }, { optional: true, description: "Shorter vectors: at most the model's default length (1536 for the small model, 3072 for the large one)" })
  dimensions?: number;

  @ApiPropertyOptional({
    enum: EMBEDDING_ENCODING_FORMATS,
    default: 'float',
    description: '`float`: arrays of numbers; `base64`: the little-endian float32 bytes of each vector, base64-encoded (what the OpenAI SDKs ask for and decode)',
  })
  @IsOptional()
  @IsOneOf(EMBEDDING_ENCODING_FORMATS)
  encoding_format?: EmbeddingEncodingFormat;

  @IsStringField({ maxLength: 256 }, { optional: true, description: 'An end-user id, forwarded to upstreams that take one (OpenAI, Azure)' })
  user?: string;

  @ApiPropertyOptional({
    description: 'Provider routing override, case-insensitive: `auto` (every source, by tier and weight), `fallback`, or a connection one of its sources names (its deployments alone)',
    default: 'auto',
    nullable: true,
  })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ nonEmpty: true })
  provider?: string;
}
