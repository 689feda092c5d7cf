import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import {
  ErrorMessages,
  MAX_IMAGE_SIDE,
  MAX_IMAGE_STEPS,
  type AuthenticatedKey,
  type CatalogueModel,
  type ImageChoiceDto,
  type ImageGenerationRequestDto,
  type ImageGenerationResultDto,
  type ImageMetaUsageDto,
  type OpenAiImageDto,
  type OpenAiImageEditFormDto,
} from '@igw/contracts';
import { GatewayException, type RequestContext } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import {
  parseSize,
  providerKind,
  type CallOptions,
  type CancelSignal,
  type ImagesAdapter,
  type ProviderKind,
  type ProviderTarget,
  type UpstreamImage,
  type UpstreamImageFile,
  type UpstreamImageRequest,
  type UpstreamImageResult,
} from '@igw/providers';
import { PaidRequestPipeline } from '../paid-requests/paid-request-pipeline';
import { upstreamTimeoutMsOf, type UpstreamTarget } from '../paid-requests/upstream-route';
import { HostedImages } from './hosted-images';
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
  /** `/v1/images/generations`: add OpenAI's `data[i].b64_json` (or `url`) for the SDKs. */
  openAiShape: boolean;
  /** The gateway's address as the client reached it: where signed image links point. */
  origin?: string;
}

/** POST /v1/images/edits: the form's fields and its image files. */
export interface ImageEditCall extends Omit<ImagesCall, 'body' | 'openAiShape'> {
  body: OpenAiImageEditFormDto;
  images: UpstreamImageFile[];
  mask?: UpstreamImageFile;
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
    private readonly hosted: HostedImages,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  generate(call: ImagesCall): Promise<ImageGenerationResultDto> {
    const { body } = call;
    if (body.response_format === 'url' && !call.openAiShape) {
      throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} response_format: 'url' is served on /v1/images/generations (OpenAI's shape); this route answers base64 in output.choices.`);
    }
    return this.run(call, 'images.generations', (adapter, target, request, options) => adapter.generate(target, request, options));
  }

  /**
   * POST /v1/images/edits on the sources whose API edits with the model (OpenAI and Azure:
   * GPT Image, DALL·E 2; Stability: inpaint); any other is the client's 400 naming the model. Billed as the
   * catalogue prices the model's images, the same hold and bill as a generation.
   */
  edit(call: ImageEditCall): Promise<ImageGenerationResultDto> {
    const { body } = call;
    const generation: ImageGenerationRequestDto = {
      model: body.model,
      prompt: body.prompt,
      n: body.n,
      size: body.size,
      quality: body.quality,
      output_format: body.output_format,
      response_format: body.response_format,
      background: body.background,
      user: body.user,
      provider: body.provider,
    };
    return this.run({ ...call, body: generation, openAiShape: true }, 'images.edits', (adapter, target, request, options) =>
      adapter.edit!(
        target,
        { ...request, images: call.images, mask: call.mask, options: { ...request.options, ...(body.input_fidelity !== undefined ? { input_fidelity: body.input_fidelity } : {}) } },
        options,
      ),
    );
  }

  private async run(call: ImagesCall, endpoint: 'images.generations' | 'images.edits', send: ImageSend): Promise<ImageGenerationResultDto> {
    const { body } = call;
    const resolved = this.pipeline.resolveModel(body.model, 'images.generations');
    const editing = endpoint === 'images.edits';
    const capability = editing
      ? { name: 'image editing', supports: (kind: ProviderKind) => providerKind(kind).images?.edit !== undefined }
      : { name: 'image generation', supports: (kind: ProviderKind) => providerKind(kind).images !== undefined };
    const targets = editing ? editingTargets(resolved.model.id, mediaTargets(resolved.model, body.provider, this.settings, capability, HttpStatus.BAD_REQUEST)) : mediaTargets(resolved.model, body.provider, this.settings, capability);
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
    const plan = { endpoint, fallbackGroup: 'images.generations', model: priced, catalogueRevision: resolved.revision, targets, ceiling };
    const { result, usage } = await this.pipeline.run(call, plan, {
      send: (target, signal) =>
        send(
          providerKind(target.definition.kind).images!,
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
            responseFormat: body.response_format,
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
    const choices = await Promise.all(result.images.map((image, index) => this.choiceFor(call, image, index)));
    return {
      created: Math.floor(Date.now() / 1000),
      model: resolved.model.id,
      output: { choices },
      ...(call.openAiShape ? { data: choices.map(openAiImageOf) } : {}),
      meta: { usage },
    };
  }

  /**
   * One image as the client asked it: base64 (an upstream URL fetched and inlined), or with
   * `url` the upstream's own link when it gave one, else a signed link to the bytes the gateway keeps.
   */
  private async choiceFor(call: ImagesCall, image: UpstreamImage, index: number): Promise<ImageChoiceDto> {
    if (call.body.response_format === 'url') {
      if (image.url) return choiceOf(image, index, { url: image.url });
      const url = await this.hosted.host({ bytes: Buffer.from(image.base64 ?? '', 'base64'), mimeType: image.mimeType }, call.origin ?? '');
      return choiceOf(image, index, { url });
    }
    const inlined = await inlineImage(this.fetcher, image, call.signal, call.auth.keyId);
    return choiceOf(inlined, index, { image_base64: inlined.base64! });
  }
}

type ImageSend = (adapter: ImagesAdapter, target: ProviderTarget, request: UpstreamImageRequest, options: CallOptions) => Promise<UpstreamImageResult>;

/** Sources whose API edits with their model; none is the client's 400 naming the model. */
function editingTargets(modelId: string, targets: readonly UpstreamTarget[]): readonly UpstreamTarget[] {
  const refusals = targets.map((target) => providerKind(target.definition.kind).images!.editRefusal?.(target.model));
  const usable = targets.filter((_, index) => refusals[index] === undefined);
  if (usable.length === 0) {
    throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} model: '${modelId}' cannot edit images: ${[...new Set(refusals)].join('; ')}.`);
  }
  return usable;
}

function openAiImageOf(choice: ImageChoiceDto): OpenAiImageDto {
  const image: OpenAiImageDto = choice.url !== undefined ? { url: choice.url } : { b64_json: choice.image_base64 };
  if (choice.revised_prompt !== undefined) image.revised_prompt = choice.revised_prompt;
  return image;
}

/** The whitelisted provider options, named as each API names them. */
function providerOptions(body: ImageGenerationRequestDto): Record<string, string> | undefined {
  const options: Record<string, string> = {};
  if (body.style !== undefined) options.style = body.style;
  if (body.background !== undefined) options.background = body.background;
  if (body.style_preset !== undefined) options.style_preset = body.style_preset;
  return Object.keys(options).length > 0 ? options : undefined;
}

function choiceOf(image: UpstreamImage, index: number, content: { image_base64: string } | { url: string }): ImageChoiceDto {
  const choice: ImageChoiceDto = { index, ...content, mime_type: image.mimeType };
  if (image.revisedPrompt !== undefined) choice.revised_prompt = image.revisedPrompt;
  if (image.finishReason !== undefined) choice.finish_reason = image.finishReason;
  if (image.seed !== undefined) choice.seed = image.seed;
  return choice;
}
