import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { Checked, IsNumberField, IsOneOf, IsStringField, describeWrongType, describeWrongValue, NullMeansAbsent } from '@igw/validation';
import { IsTextOfAtMost, PROVIDER_FIELD_DESCRIPTION } from './media-fields';

/** GPT Image's prompt limit (DALL·E 3 takes 4,000; its upstream 400 reaches the client). */
export const MAX_IMAGE_PROMPT_CHARACTERS = 32_000;
/** OpenAI's limit on images per request. */
export const MAX_IMAGES_PER_REQUEST = 10;
/** The largest side a size may name; also what a per-megapixel hold assumes when no size is given. */
export const MAX_IMAGE_SIDE = 4096;
/** The most diffusion steps a request may ask for; also what a per-step hold assumes when none is given. */
export const MAX_IMAGE_STEPS = 150;
export const IMAGE_QUALITIES = ['auto', 'low', 'medium', 'high', 'standard', 'hd'] as const;
export const IMAGE_OUTPUT_FORMATS = ['png', 'jpeg', 'webp'] as const;
export const IMAGE_BACKGROUNDS = ['auto', 'transparent', 'opaque'] as const;
const OPTION_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** `auto`, or `WIDTHxHEIGHT` with each side from 1 to MAX_IMAGE_SIDE. */
export function imageSizeIssues(value: unknown): string[] {
  const expected = `'auto' or WIDTHxHEIGHT with sides from 1 to ${MAX_IMAGE_SIDE} (e.g. '1024x1024')`;
  if (typeof value !== 'string') return [`Expected ${expected}. Received ${describeWrongType(value)}`];
  if (value === 'auto') return [];
  const match = /^([1-9]\d{0,4})x([1-9]\d{0,4})$/.exec(value);
  if (!match || Number(match[1]) > MAX_IMAGE_SIDE || Number(match[2]) > MAX_IMAGE_SIDE) return [`Expected ${expected}. Received ${describeWrongValue(value)}`];
  return [];
}

/**
 * The body of POST /images/generations (spec: "POST /images/generations"), in OpenAI's shape
 * so `client.images.generate` works, plus the diffusion fields other providers take.
 */
export class ImageGenerationRequestDto {
  @IsStringField({ nonEmpty: true, maxLength: 256 }, { description: 'A catalogue id or alias of an image generation model', example: 'gpt-image-1' })
  model!: string;

  @ApiProperty({ description: `What to draw (at most ${MAX_IMAGE_PROMPT_CHARACTERS} characters)`, example: 'A lighthouse on a cliff at dusk, watercolour' })
  @IsTextOfAtMost(MAX_IMAGE_PROMPT_CHARACTERS)
  prompt!: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_IMAGES_PER_REQUEST, default: 1, description: 'How many images; each is billed' })
  @NullMeansAbsent()
  @IsOptional()
  @IsNumberField({ integer: true, min: 1, max: MAX_IMAGES_PER_REQUEST })
  n?: number;

  @ApiPropertyOptional({ description: "`WIDTHxHEIGHT` or `auto`; the model's sizes are its catalogue price variants (Stability maps it to the nearest aspect ratio)", example: '1024x1024' })
  @NullMeansAbsent()
  @IsOptional()
  @Checked('imageSize', (value) => imageSizeIssues(value))
  size?: string;

  @ApiPropertyOptional({ enum: IMAGE_QUALITIES, description: "GPT Image: low, medium, high, auto; DALL·E 3: standard, hd. Absent: the model's default (auto, else the first quality its prices list)" })
  @NullMeansAbsent()
  @IsOptional()
  @IsOneOf(IMAGE_QUALITIES)
  quality?: (typeof IMAGE_QUALITIES)[number];

  @ApiPropertyOptional({ type: 'integer', minimum: 1, maximum: MAX_IMAGE_STEPS, description: 'Diffusion steps, for providers that take them' })
  @NullMeansAbsent()
  @IsOptional()
  @IsNumberField({ integer: true, min: 1, max: MAX_IMAGE_STEPS })
  steps?: number;

  @ApiPropertyOptional({ description: 'What to keep out of the image (Stability), at most 10,000 characters' })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ maxLength: 10_000 })
  negative_prompt?: string;

  @ApiPropertyOptional({ type: 'integer', minimum: 0, maximum: 4294967294, description: 'Seed for reproducible images (Stability)' })
  @NullMeansAbsent()
  @IsOptional()
  @IsNumberField({ integer: true, min: 0, max: 4294967294 })
  seed?: number;

  @ApiPropertyOptional({ enum: IMAGE_OUTPUT_FORMATS, default: 'png', description: 'Image encoding, where the provider offers a choice' })
  @NullMeansAbsent()
  @IsOptional()
  @IsOneOf(IMAGE_OUTPUT_FORMATS)
  output_format?: (typeof IMAGE_OUTPUT_FORMATS)[number];

  @ApiPropertyOptional({
    enum: ['b64_json', 'url'],
    default: 'b64_json',
    description: "`url` (on /v1/images/generations and /v1/images/edits): each image as a link valid for an hour, the upstream's own when it answered one (DALL·E), else one the gateway signs and serves (GET /v1/images/hosted/{id}); base64 otherwise",
  })
  @NullMeansAbsent()
  @IsOptional()
  @IsOneOf(['b64_json', 'url'])
  response_format?: 'b64_json' | 'url';

  @ApiPropertyOptional({ enum: ['vivid', 'natural'], description: 'DALL·E 3 style' })
  @NullMeansAbsent()
  @IsOptional()
  @IsOneOf(['vivid', 'natural'])
  style?: 'vivid' | 'natural';

  @ApiPropertyOptional({ enum: IMAGE_BACKGROUNDS, description: 'GPT Image background' })
  @NullMeansAbsent()
  @IsOptional()
  @IsOneOf(IMAGE_BACKGROUNDS)
  background?: (typeof IMAGE_BACKGROUNDS)[number];

  @ApiPropertyOptional({ description: 'Stability style preset, e.g. `photographic`, `anime` (1-64 lower-case letters, digits, `_` or `-`)' })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ pattern: OPTION_NAME, patternText: "1-64 lower-case letters, digits, '_' or '-'" })
  style_preset?: string;

  @ApiPropertyOptional({ description: 'An end-user id, forwarded to upstreams that take one (OpenAI, Azure)', maxLength: 256 })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ maxLength: 256 })
  user?: string;

  @ApiPropertyOptional({ description: PROVIDER_FIELD_DESCRIPTION, default: 'auto', nullable: true })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ nonEmpty: true, maxLength: 64 })
  provider?: string;
}
