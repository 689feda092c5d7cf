import { ApiProperty, ApiPropertyOptional, type ApiPropertyOptions } from '@nestjs/swagger';
import { IsOptional } from 'class-validator';
import { Checked, composeDecorators, IsNumberField, IsOneOf, IsStringField, describeWrongType, describeWrongValue, NullMeansAbsent, type FieldDoc } from '@igw/validation';
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

/** What a route says of a field an image generation and an image edit share. */
type ImageFieldDoc = Pick<FieldDoc, 'description' | 'example' | 'default'>;

/** An optional field (null means absent): its rule, then `schema` documenting it over what the rule says. */
function optionalImageField(rule: PropertyDecorator, schema: ApiPropertyOptions): PropertyDecorator {
  return composeDecorators(rule, IsOptional(), NullMeansAbsent(), ApiPropertyOptional(schema));
}

/**
 * The fields POST /images/generations and POST /v1/images/edits share, each rule declared once
 * here; each route describes them in its own words.
 */
export const ImageField = {
  model: (doc: ImageFieldDoc) => IsStringField({ nonEmpty: true, maxLength: 256 }, doc),
  prompt: (doc: ImageFieldDoc) => composeDecorators(IsTextOfAtMost(MAX_IMAGE_PROMPT_CHARACTERS), ApiProperty(doc)),
  n: () =>
    optionalImageField(IsNumberField({ integer: true, min: 1, max: MAX_IMAGES_PER_REQUEST }), {
      type: 'integer',
      minimum: 1,
      maximum: MAX_IMAGES_PER_REQUEST,
      default: 1,
      description: 'How many images; each is billed',
    }),
  size: (doc: ImageFieldDoc) => optionalImageField(Checked('imageSize', (value) => imageSizeIssues(value)), doc),
  quality: (doc: ImageFieldDoc = {}) => optionalImageField(IsOneOf(IMAGE_QUALITIES), { enum: IMAGE_QUALITIES, ...doc }),
  responseFormat: (doc: ImageFieldDoc) => optionalImageField(IsOneOf(['b64_json', 'url']), { enum: ['b64_json', 'url'], default: 'b64_json', ...doc }),
  outputFormat: (doc: ImageFieldDoc = {}) => optionalImageField(IsOneOf(IMAGE_OUTPUT_FORMATS), { enum: IMAGE_OUTPUT_FORMATS, ...doc }),
  background: () => optionalImageField(IsOneOf(IMAGE_BACKGROUNDS), { enum: IMAGE_BACKGROUNDS, description: 'GPT Image background' }),
  user: (doc: ImageFieldDoc) => optionalImageField(IsStringField({ maxLength: 256 }), { maxLength: 256, ...doc }),
};

/**
 * The body of POST /images/generations (spec: "POST /images/generations"), in OpenAI's shape
 * so `client.images.generate` works, plus the diffusion fields other providers take.
 */
export class ImageGenerationRequestDto {
  @ImageField.model({ description: 'A catalogue id or alias of an image generation model', example: 'gpt-image-1' })
  model!: string;

  @ImageField.prompt({ description: `What to draw (at most ${MAX_IMAGE_PROMPT_CHARACTERS} characters)`, example: 'A lighthouse on a cliff at dusk, watercolour' })
  prompt!: string;

  @ImageField.n()
  n?: number;

  @ImageField.size({ description: "`WIDTHxHEIGHT` or `auto`; the model's sizes are its catalogue price variants (Stability maps it to the nearest aspect ratio)", example: '1024x1024' })
  size?: string;

  @ImageField.quality({ description: "GPT Image: low, medium, high, auto; DALL·E 3: standard, hd. Absent: the model's default (auto, else the first quality its prices list)" })
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

  @ImageField.outputFormat({ default: 'png', description: 'Image encoding, where the provider offers a choice' })
  output_format?: (typeof IMAGE_OUTPUT_FORMATS)[number];

  @ImageField.responseFormat({
    description: "`url` (on /v1/images/generations and /v1/images/edits): each image as a link valid for an hour, the upstream's own when it answered one (DALL·E), else one the gateway signs and serves (GET /v1/images/hosted/{id}); base64 otherwise",
  })
  response_format?: 'b64_json' | 'url';

  @ApiPropertyOptional({ enum: ['vivid', 'natural'], description: 'DALL·E 3 style' })
  @NullMeansAbsent()
  @IsOptional()
  @IsOneOf(['vivid', 'natural'])
  style?: 'vivid' | 'natural';

  @ImageField.background()
  background?: (typeof IMAGE_BACKGROUNDS)[number];

  @ApiPropertyOptional({ description: 'Stability style preset, e.g. `photographic`, `anime` (1-64 lower-case letters, digits, `_` or `-`)' })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ pattern: OPTION_NAME, patternText: "1-64 lower-case letters, digits, '_' or '-'" })
  style_preset?: string;

  @ImageField.user({ description: 'An end-user id, forwarded to upstreams that take one (OpenAI, Azure)' })
  user?: string;

  @ApiPropertyOptional({ description: PROVIDER_FIELD_DESCRIPTION, default: 'auto', nullable: true })
  @NullMeansAbsent()
  @IsOptional()
  @IsStringField({ nonEmpty: true, maxLength: 64 })
  provider?: string;
}
