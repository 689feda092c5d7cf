import { Body, Controller, HttpCode, HttpStatus, Post, Req, Res } from '@nestjs/common';
import { ApiBody, ApiOkResponse, ApiOperation, ApiTags } from '@nestjs/swagger';
import { ErrorMessages, ImageGenerationRequestDto, ImageGenerationResultDto } from '@igw/contracts';
import { ApiErrorResponses, MODEL_ENDPOINT_ERRORS, RequireApiKey } from '@igw/platform';
import { Cancellation } from '@igw/providers';
import type { Request, Response } from 'express';
import { ImagesService } from './images.service';

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

@ApiTags('images')
@Controller()
export class ImagesController {
  constructor(private readonly images: ImagesService) {}

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

  /** A client that goes away aborts the upstream call, unless it was already sent (upstream-billing.ts). */
  private run(body: ImageGenerationRequestDto, request: Request, response: Response, openAiShape: boolean): Promise<ImageGenerationResultDto> {
    const cancellation = new Cancellation();
    response.on('close', () => {
      if (!response.writableFinished) cancellation.abort();
    });
    return this.images.generate({ requestId: request.context.requestId, context: request.context, auth: request.context.auth!, body, signal: cancellation, openAiShape });
  }
}
