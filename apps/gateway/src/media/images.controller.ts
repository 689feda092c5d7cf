import { Body, Controller, Get, HttpCode, HttpStatus, Param, Post, Query, Req, Res, StreamableFile } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiParam, ApiProduces, ApiQuery, ApiTags } from '@nestjs/swagger';
import { ErrorMessages, ImageGenerationRequestDto, ImageGenerationResultDto, MAX_EDIT_IMAGES, MULTIPART_NUMBER_FIELDS, OpenAiImageEditFormDto } from '@igw/contracts';
import { ApiErrorResponses, GatewayException, MODEL_ENDPOINT_ERRORS, RequireApiKey } from '@igw/http';
import { Cancellation, imageMimeType, type UpstreamImageFile } from '@igw/providers';
import type { Request, Response } from 'express';
import { HOSTED_IMAGES_PATH, HostedImages } from './hosted-images';
import { ImagesService } from './images.service';
import { AcceptsUpload, type UploadedPart, type UploadPolicy } from './multipart-upload';

const IMAGE_FORM: UploadPolicy = {
  files: [
    { name: 'image', maxCount: 1 },
    { name: 'image[]', maxCount: MAX_EDIT_IMAGES },
    { name: 'mask', maxCount: 1 },
  ],
  numberFields: MULTIPART_NUMBER_FIELDS.imageEdit,
};

const EXAMPLE_RESULT = {
  created: 1764000000,
  model: 'openai/gpt-image-1',
  output: { choices: [{ index: 0, image_base64: 'iVBORw0KGgoAAAANSUhEUgAABAAAAAQACAIAAADwf7zU...', mime_type: 'image/png' }] },
  meta: { usage: { credits_used: 22000, usd_spent: 0.011, images: 1, size: '1024x1024' } },
};

const REQUEST_EXAMPLES = {
  gptImage: { summary: 'GPT Image, low quality', value: { model: 'gpt-image-1', prompt: 'A lighthouse on a cliff at dusk, watercolour', size: '1024x1024', quality: 'low' } },
  dalle: { summary: 'DALL·E 3, wide and HD', value: { model: 'dall-e-3', prompt: 'A red bicycle in the snow', size: '1792x1024', quality: 'hd', style: 'natural' } },
  stability: { summary: 'Stability, with a seed and a negative prompt', value: { model: 'stable-image-core', prompt: 'A fox in a forest', n: 2, seed: 42, negative_prompt: 'blurry', style_preset: 'photographic' } },
};

const IMAGE_ERRORS = {
  ...MODEL_ENDPOINT_ERRORS,
  400: {
    description: 'An invalid body, or a value the upstream refuses (its message passed on)',
    messages: {
      noPrompt: `${ErrorMessages.bodyValidationPrefix} prompt: Expected a non-empty string. Received nothing`,
      upstream: "Upstream provider openai rejected the request: Invalid value: '5x5'. Supported values are: 'auto', '1024x1024', '1536x1024', '1024x1536'.",
    },
  },
  502: {
    description: 'The upstream failed, or answered with an image URL the gateway would not or could not fetch',
    messages: { upstream: MODEL_ENDPOINT_ERRORS[502].messages, imageUrl: 'Bad Gateway: the upstream answered with an image URL that did not answer with a PNG, JPEG, WebP or GIF image.' },
  },
  503: {
    description: 'No configured source of the model offers image generation, an upstream cannot be reached, or keys cannot be verified (billing down)',
    messages: {
      noSource: "Service Unavailable: no source of model 'stability/stable-image-core' offers image generation (anthropic has no image generation API).",
      unreachable: MODEL_ENDPOINT_ERRORS[503].messages.unreachable,
      billing: MODEL_ENDPOINT_ERRORS[503].messages.billing,
    },
  },
};

const EDIT_ERRORS = {
  ...IMAGE_ERRORS,
  400: {
    description: 'A bad field, no image, a file that is not a PNG, JPEG or WebP image, or a model whose sources cannot edit',
    messages: {
      noImage: `${ErrorMessages.bodyValidationPrefix} image: Expected one or more image files (image, or image[]). Received nothing`,
      cannotEdit: `${ErrorMessages.bodyValidationPrefix} model: 'openai/dall-e-3' cannot edit images: dall-e-3 has no image edit API (GPT Image and DALL·E 2 models edit).`,
    },
  },
  413: { description: 'The uploaded files together are larger than MEDIA_FETCH_MAX_BYTES (nothing sent upstream, nothing billed)', messages: "Payload Too Large: the uploaded files are larger than the gateway's limit of 25 MiB (MEDIA_FETCH_MAX_BYTES)." },
};

const HOSTED_ERRORS = {
  403: { description: 'The link was changed: its id, expiry or signature is not what the gateway signed', messages: "Forbidden: this image link is not one the gateway signed (its id, expires or signature was changed)." },
  404: { description: 'The link expired (after an hour), or its image is no longer kept', messages: 'Not Found: this image link expired (links last 60 minutes); generate the image again.' },
};

@ApiTags('images')
@Controller()
export class ImagesController {
  constructor(
    private readonly images: ImagesService,
    private readonly hosted: HostedImages,
  ) {}

  @Post('v1/images/edits')
  @HttpCode(HttpStatus.OK)
  @RequireApiKey()
  @AcceptsUpload(IMAGE_FORM)
  @ApiOperation({
    summary: "Edit images with a prompt (and optionally a mask), in OpenAI's shape (`client.images.edit`)",
    description:
      'On models whose source edits: GPT Image and DALL·E 2 on OpenAI and Azure OpenAI, Stable Image models through Stability\'s inpaint route (one image); any other model is a 400 naming it. Billed per image as the catalogue prices the model (the size and quality asked for). The files together at most MEDIA_FETCH_MAX_BYTES.',
  })
  @ApiBody({ type: OpenAiImageEditFormDto })
  @ApiOkResponse({ type: ImageGenerationResultDto, example: { ...EXAMPLE_RESULT, data: [{ b64_json: EXAMPLE_RESULT.output.choices[0].image_base64 }] } })
  @ApiErrorResponses(EDIT_ERRORS)
  edit(@Body() body: OpenAiImageEditFormDto, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<ImageGenerationResultDto> {
    const uploads = request.uploads ?? {};
    const images = [...(uploads.image ?? []), ...(uploads['image[]'] ?? [])].map((part) => imageFileOf(part, 'image'));
    if (images.length === 0) throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} image: Expected one or more image files (image, or image[]). Received nothing`);
    if (images.length > MAX_EDIT_IMAGES) throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} image: Expected at most ${MAX_EDIT_IMAGES} images. Received ${images.length}`);
    const maskPart = uploads.mask?.[0];
    const mask = maskPart ? imageFileOf(maskPart, 'mask') : undefined;
    return this.images.edit({ ...this.callOf(request, response), body, images, mask });
  }

  @Get(`${HOSTED_IMAGES_PATH}/:id`)
  @ApiOperation({
    summary: 'An image the gateway keeps for a link (`response_format: "url"`): no API key, the signature is the credential',
    description: 'The links come in image answers and last an hour. A changed link is a 403, an expired one a 404.',
  })
  @ApiParam({ name: 'id', description: 'The image id (32 hex digits)' })
  @ApiQuery({ name: 'expires', description: 'Unix seconds the link expires at' })
  @ApiQuery({ name: 'signature', description: 'HMAC-SHA256 of the id and expiry, base64url' })
  @ApiProduces('image/png', 'image/jpeg', 'image/webp')
  @ApiOkResponse({ description: 'The image bytes', schema: { type: 'string', format: 'binary' } })
  @ApiErrorResponses(HOSTED_ERRORS)
  async hostedImage(@Param('id') id: string, @Query('expires') expires: string | undefined, @Query('signature') signature: string | undefined, @Res({ passthrough: true }) response: Response): Promise<StreamableFile> {
    const image = await this.hosted.read(id, expires, signature);
    response.set({ 'cache-control': 'private, max-age=3600' });
    return new StreamableFile(image.bytes, { type: image.mimeType, length: image.bytes.length });
  }

  @Post('images/generations')
  @HttpCode(HttpStatus.OK)
  @RequireApiKey()
  @ApiOperation({
    summary: 'Generate images from a prompt: base64 bytes in output.choices[i].image_base64',
    description:
      'Billed per image at the catalogue price of the size and quality asked for (per step or megapixel where the catalogue prices them). Example body: `{"model": "gpt-image-1", "prompt": "A lighthouse at dusk", "size": "1024x1024", "quality": "low"}`.',
  })
  @ApiBody({ type: ImageGenerationRequestDto, examples: REQUEST_EXAMPLES })
  @ApiOkResponse({ type: ImageGenerationResultDto, example: EXAMPLE_RESULT })
  @ApiErrorResponses(IMAGE_ERRORS)
  create(@Body() body: ImageGenerationRequestDto, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<ImageGenerationResultDto> {
    return this.run(body, request, response, false);
  }

  @Post('v1/images/generations')
  @HttpCode(HttpStatus.OK)
  @RequireApiKey()
  @ApiOperation({
    summary: "The same, for OpenAI SDKs (`client.images.generate` with the chat base URL): adds OpenAI's data[i].b64_json",
    description: 'Every image is sent twice (output.choices and data); clients that read only one should use /images/generations.',
  })
  @ApiBody({ type: ImageGenerationRequestDto, examples: REQUEST_EXAMPLES })
  @ApiOkResponse({ type: ImageGenerationResultDto, example: { ...EXAMPLE_RESULT, data: [{ b64_json: EXAMPLE_RESULT.output.choices[0].image_base64 }] } })
  @ApiErrorResponses(IMAGE_ERRORS)
  createForOpenAi(@Body() body: ImageGenerationRequestDto, @Req() request: Request, @Res({ passthrough: true }) response: Response): Promise<ImageGenerationResultDto> {
    return this.run(body, request, response, true);
  }

  private run(body: ImageGenerationRequestDto, request: Request, response: Response, openAiShape: boolean): Promise<ImageGenerationResultDto> {
    return this.images.generate({ ...this.callOf(request, response), body, openAiShape });
  }

  /** A client that goes away aborts the upstream call, unless it was already sent (upstream-billing.ts). */
  private callOf(request: Request, response: Response) {
    const cancellation = new Cancellation();
    response.on('close', () => {
      if (!response.writableFinished) cancellation.abort();
    });
    return { requestId: request.context.requestId, context: request.context, auth: request.context.auth!, signal: cancellation, origin: this.hosted.originOf(request) };
  }
}

/** An uploaded image, judged by its bytes: anything but a PNG, JPEG or WebP is the client's 400 naming the field. */
function imageFileOf(part: UploadedPart, field: 'image' | 'mask'): UpstreamImageFile {
  const type = imageMimeType(part.bytes);
  if (type === undefined || type === 'image/gif') {
    throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${field}: '${part.filename}' is not a PNG, JPEG or WebP image`);
  }
  const extension = type.slice('image/'.length).replace('jpeg', 'jpg');
  return { data: part.bytes, contentType: type, filename: /\.[A-Za-z0-9]+$/.test(part.filename) ? part.filename : `${field}.${extension}` };
}
