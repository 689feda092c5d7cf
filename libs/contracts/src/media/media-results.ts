import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

export class MediaUsageDto {
  @ApiProperty({ description: 'Credits consumed by this request (what the ledger records)', example: 80000 }) credits_used!: number;
  @ApiProperty({ description: 'USD spent by this request', example: 0.04 }) usd_spent!: number;
}

export class ImageMetaUsageDto extends MediaUsageDto {
  @ApiProperty({ description: 'Images billed', example: 1 }) images!: number;
  @ApiPropertyOptional({ description: 'The size billed, when known', example: '1024x1024' }) size?: string;
  @ApiPropertyOptional({ description: 'Steps billed (models priced per step)' }) steps?: number;
  @ApiPropertyOptional({ description: 'Megapixels billed, rounded up (models priced per megapixel)' }) megapixels?: number;
}

export class ImageChoiceDto {
  @ApiProperty({ example: 0 }) index!: number;
  @ApiPropertyOptional({ description: 'The image bytes, base64-encoded (absent with `response_format: "url"`)', format: 'byte', example: 'iVBORw0KGgoAAAANSUhEUgAA...' }) image_base64?: string;
  @ApiPropertyOptional({ description: 'With `response_format: "url"`: a link to the image, valid for an hour' }) url?: string;
  @ApiProperty({ example: 'image/png' }) mime_type!: string;
  @ApiPropertyOptional({ description: 'The prompt the provider actually used (DALL·E 3)' }) revised_prompt?: string;
  @ApiPropertyOptional({ description: 'Stability: SUCCESS, or CONTENT_FILTERED for a blurred image (still billed)' }) finish_reason?: string;
  @ApiPropertyOptional({ description: 'The seed used, when the provider reports it' }) seed?: number;
}

export class ImageOutputDto {
  @ApiProperty({ type: [ImageChoiceDto] }) choices!: ImageChoiceDto[];
}

export class OpenAiImageDto {
  @ApiPropertyOptional({ format: 'byte' }) b64_json?: string;
  @ApiPropertyOptional({ description: 'With `response_format: "url"`: a link valid for an hour' }) url?: string;
  @ApiPropertyOptional() revised_prompt?: string;
}

export class ImageMetaDto {
  @ApiProperty({ type: ImageMetaUsageDto }) usage!: ImageMetaUsageDto;
}

/** The answer of POST /images/generations; `/v1/images/generations` adds OpenAI's `data` for the SDKs. */
export class ImageGenerationResultDto {
  @ApiProperty({ description: 'Unix seconds', example: 1764000000 }) created!: number;
  @ApiProperty({ description: 'The catalogue id of the model', example: 'openai/gpt-image-1' }) model!: string;
  @ApiProperty({ type: ImageOutputDto }) output!: ImageOutputDto;
  @ApiPropertyOptional({
    type: [OpenAiImageDto],
    description: 'Only on /v1/images/generations: the same images in OpenAI\'s shape (`data[i].b64_json`), so `client.images.generate` reads them. The spec path leaves it out rather than send every image twice.',
  })
  data?: OpenAiImageDto[];
  @ApiProperty({ type: ImageMetaDto }) meta!: ImageMetaDto;
}
