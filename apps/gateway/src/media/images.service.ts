import { Inject, Injectable } from '@nestjs/common';
import {
  MAX_IMAGE_SIDE,
  MAX_IMAGE_STEPS,
  type AuthenticatedKey,
  type CatalogueModel,
  type ImageChoiceDto,
  type ImageGenerationRequestDto,
  type ImageGenerationResultDto,
  type ImageMetaUsageDto,
} from '@igw/contracts';
import { SERVICE_SETTINGS, type RequestContext, type ServiceSettings } from '@igw/platform';
import { imagesAdapterFor, parseSize, type CancelSignal, type UpstreamImage, type UpstreamImageResult } from '@igw/providers';
import { PaidRequestPipeline } from '../paid-requests/paid-request-pipeline';
import { upstreamTimeoutMsOf } from '../paid-requests/upstream-route';
import { cheaperOf, defaultQuality, imagePriceUnits, imageUnits } from './image-pricing';
import { inlineImage } from './image-inline';
import { MediaFetcher } from './media-fetcher';
import { mediaTargets } from './media-routing';

export interface ImagesCall {
  requestId: string;
  /** The HTTP request's context, for the access log and metrics. */
  context?: RequestContext;
  auth: AuthenticatedKey;
  body: ImageGenerationRequestDto;
  signal: CancelSignal;
  /** `/v1/images/generations`: add OpenAI's `data[i].b64_json` for the SDKs. */
  openAiShape: boolean;
}

/**
 * POST /images/generations. The hold is n images at the price of the variant the request asks
 * for (size and quality; the dearest variant a dimension left open may give), plus steps and
 * megapixels when the model is priced by them. The bill is the images the upstream made, at the
 * variant of the size they came in (never dearer than the held one). Images an upstream answers
 * by URL are fetched under the media address policy; failing that is a 502, and the images are
 * billed all the same (the upstream made, and charges for, them).
 */
@Injectable()
export class ImagesService {
  constructor(
    private readonly pipeline: PaidRequestPipeline,
    private readonly fetcher: MediaFetcher,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  async generate(call: ImagesCall): Promise<ImageGenerationResultDto> {
    const { body } = call;
    const resolved = this.pipeline.resolveModel(body.model, 'images.generations');
    const targets = mediaTargets(resolved.model, body.provider, this.settings, { name: 'image generation', supports: (kind) => imagesAdapterFor(kind) !== undefined });
    const n = body.n ?? 1;
    const quality = body.quality ?? defaultQuality(resolved.model.pricing);
    const heldUnits = imagePriceUnits(resolved.model.pricing, { size: body.size, quality });
    // Metered against this request's own copy of the entry, whose prices are the variant's:
    // the hold is priced with the held variant, the bill (below) with the one made.
    const priced: CatalogueModel = { ...resolved.model, pricing: resolved.model.pricing && { ...resolved.model.pricing, units: heldUnits } };
    const requestedSize = parseSize(body.size);
    const side = MAX_IMAGE_SIDE;
    const ceiling = imageUnits(heldUnits, {
      images: n,
      steps: n * (body.steps ?? MAX_IMAGE_STEPS),
      megapixels: (n * (requestedSize ? requestedSize.width * requestedSize.height : side * side)) / 1e6,
    });
    // What a call whose answer went unread is billed: the images asked for, at the held price.
    const askedFor = imageUnits(heldUnits, {
      images: n,
      steps: body.steps !== undefined ? n * body.steps : undefined,
      megapixels: requestedSize ? (n * requestedSize.width * requestedSize.height) / 1e6 : undefined,
    });
    const plan = { endpoint: 'images.generations', model: priced, catalogueRevision: resolved.revision, targets, ceiling };
    const { result, usage } = await this.pipeline.run(call, plan, {
      send: (target, signal) =>
        imagesAdapterFor(target.definition.kind)!.generate(
          target,
          {
            model: target.model,
            prompt: body.prompt,
            n: body.n,
            size: body.size,
            quality,
            steps: body.steps,
            negativePrompt: body.negative_prompt,
            seed: body.seed,
            outputFormat: body.output_format,
            options: providerOptions(body),
            user: body.user,
          },
          { timeoutMs: upstreamTimeoutMsOf(resolved.model, this.settings, target), signal },
        ),
      // Made but unread (the client left, or the answer was refused): billed as asked for.
      unreadUnits: () => askedFor,
      settle: (result: UpstreamImageResult, admitted) => {
        // More images than asked for are the upstream's doing, and not held for: never billed.
        const made = { ...result.usage, images: Math.min(result.usage.images, n) };
        const size = made.width && made.height ? `${made.width}x${made.height}` : body.size;
        priced.pricing = priced.pricing && { ...priced.pricing, units: cheaperOf(imagePriceUnits(resolved.model.pricing, { size, quality }), heldUnits) };
        const stepsPerImage = made.steps ?? body.steps;
        const units = imageUnits(priced.pricing?.units ?? [], {
          images: made.images,
          steps: stepsPerImage !== undefined ? made.images * stepsPerImage : undefined,
          megapixels: made.megapixels,
        });
        const charged = admitted.settle(units);
        const usage: ImageMetaUsageDto = {
          ...charged,
          images: made.images,
          ...(size ? { size } : {}),
          ...(units.steps !== undefined ? { steps: units.steps } : {}),
          ...(units.megapixels !== undefined ? { megapixels: units.megapixels } : {}),
        };
        return { result, usage };
      },
    });
    const images = await Promise.all(result.images.map((image) => inlineImage(this.fetcher, image, call.signal, call.auth.keyId)));
    const choices = images.map((image, index) => choiceOf(image, index));
    return {
      created: Math.floor(Date.now() / 1000),
      model: resolved.model.id,
      output: { choices },
      ...(call.openAiShape
        ? { data: choices.map((choice) => (choice.revised_prompt !== undefined ? { b64_json: choice.image_base64, revised_prompt: choice.revised_prompt } : { b64_json: choice.image_base64 })) }
        : {}),
      meta: { usage },
    };
  }
}

/** The whitelisted provider options, named as each API names them. */
function providerOptions(body: ImageGenerationRequestDto): Record<string, string> | undefined {
  const options: Record<string, string> = {};
  if (body.style !== undefined) options.style = body.style;
  if (body.background !== undefined) options.background = body.background;
  if (body.style_preset !== undefined) options.style_preset = body.style_preset;
  return Object.keys(options).length > 0 ? options : undefined;
}

function choiceOf(image: UpstreamImage, index: number): ImageChoiceDto {
  const choice: ImageChoiceDto = { index, image_base64: image.base64!, mime_type: image.mimeType };
  if (image.revisedPrompt !== undefined) choice.revised_prompt = image.revisedPrompt;
  if (image.finishReason !== undefined) choice.finish_reason = image.finishReason;
  if (image.seed !== undefined) choice.seed = image.seed;
  return choice;
}
