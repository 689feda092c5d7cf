import { imageDimensions, imageMimeType, parseSize } from '../media/image-facts';
import type { CallOptions, ImagesAdapter, ProviderTarget, UpstreamImage, UpstreamImageEditRequest, UpstreamImageRequest, UpstreamImageResult } from '../provider.types';
import { postMultipart } from '../transport/http-client';
import { RequestTranslationError, UpstreamProtocolError } from '../upstream.errors';

export const STABILITY_DEFAULT_BASE_URL = 'https://api.stability.ai';
/** Images one generation may ask for: each is a call of its own, made together. */
export const STABILITY_MAX_IMAGES = 10;

/** Stability's JSON answer (`accept: application/json`): one image per request. */
export interface StabilityImageResponse {
  image?: string;
  finish_reason?: string;
  seed?: number;
}

/** The aspect ratios Stable Image accepts, as width / height. */
export const STABILITY_ASPECT_RATIOS: ReadonlyArray<[string, number]> = [
  ['21:9', 21 / 9],
  ['16:9', 16 / 9],
  ['3:2', 3 / 2],
  ['5:4', 5 / 4],
  ['1:1', 1],
  ['4:5', 4 / 5],
  ['2:3', 2 / 3],
  ['9:16', 9 / 16],
  ['9:21', 9 / 21],
];

/** The accepted aspect ratio nearest a `WIDTHxHEIGHT` size; undefined (Stability's 1:1) without one. */
export function stabilityAspectRatio(size: string | undefined): string | undefined {
  const parsed = parseSize(size);
  if (!parsed || parsed.width === 0 || parsed.height === 0) return undefined;
  const wanted = Math.log(parsed.width / parsed.height);
  let best = STABILITY_ASPECT_RATIOS[0];
  for (const candidate of STABILITY_ASPECT_RATIOS) {
    if (Math.abs(Math.log(candidate[1]) - wanted) < Math.abs(Math.log(best[1]) - wanted)) best = candidate;
  }
  return best[0];
}

/**
 * Stable Image models: `core` and `ultra` are their own routes; the SD 3.5 family (`sd3.5-large`,
 * `sd3.5-medium`, ...) shares `/sd3` and is named in the form's `model` field.
 */
export function stabilityRoute(model: string): { path: string; model?: string } {
  if (model.startsWith('sd3')) return { path: 'sd3', model };
  return { path: model };
}

/** The form of one call; with a seed, image `index` gets seed + index, so n images differ yet repeat. */
export function toStabilityFields(request: UpstreamImageRequest, index = 0): Record<string, string | undefined> {
  const route = stabilityRoute(request.model);
  const options = Object.fromEntries(Object.entries(request.options ?? {}).map(([name, value]) => [name, String(value)]));
  return {
    ...options,
    prompt: request.prompt,
    model: route.model,
    negative_prompt: request.negativePrompt,
    aspect_ratio: stabilityAspectRatio(request.size),
    seed: request.seed === undefined ? undefined : String(request.seed + index),
    output_format: request.outputFormat ?? 'png',
  };
}

export function fromStabilityImageResponse(provider: string, request: UpstreamImageRequest, response: StabilityImageResponse): UpstreamImage {
  if (!response || typeof response.image !== 'string' || response.image === '') throw new UpstreamProtocolError(provider, 'no image in the answer');
  const bytes = Buffer.from(response.image, 'base64');
  const image: UpstreamImage = { base64: response.image, mimeType: imageMimeType(bytes) ?? `image/${request.outputFormat ?? 'png'}`, ...imageDimensions(bytes) };
  if (typeof response.finish_reason === 'string') image.finishReason = response.finish_reason;
  if (typeof response.seed === 'number') image.seed = response.seed;
  return image;
}

/**
 * Stability's Stable Image API: `POST {base}/v2beta/stable-image/generate/{core|ultra|sd3}`, a
 * multipart form, one image per call; `n` images are `n` calls made together. If one fails the
 * whole generation fails (the fallback chain may retry it elsewhere).
 */
export class StabilityImagesAdapter implements ImagesAdapter {
  async generate(target: ProviderTarget, request: UpstreamImageRequest, options: CallOptions): Promise<UpstreamImageResult> {
    const url = `${target.baseUrl}/v2beta/stable-image/generate/${encodeURIComponent(stabilityRoute(request.model).path)}`;
    return this.call(target, request, options, url, (index) => toStabilityFields(request, index), []);
  }

  /** Every Stable Image model edits through Stability's inpaint route (its own model), one image at a time. */
  editRefusal(): string | undefined {
    return undefined;
  }

  /**
   * `POST {base}/v2beta/stable-image/edit/inpaint`: one image, redrawn where the mask (else the
   * image's own transparency) says; `n` edits are `n` calls made together.
   */
  async edit(target: ProviderTarget, request: UpstreamImageEditRequest, options: CallOptions): Promise<UpstreamImageResult> {
    if (request.images.length !== 1) throw new RequestTranslationError('Stability edits one image at a time: send one image', 'image');
    const files = [
      { field: 'image', filename: request.images[0].filename, contentType: request.images[0].contentType, data: request.images[0].data },
      ...(request.mask ? [{ field: 'mask', filename: request.mask.filename, contentType: request.mask.contentType, data: request.mask.data }] : []),
    ];
    const fields = (index: number) => {
      // The inpaint route takes no aspect ratio (the image's own) nor model.
      const { aspect_ratio: _ratio, model: _model, ...rest } = toStabilityFields(request, index);
      return rest;
    };
    return this.call(target, request, options, `${target.baseUrl}/v2beta/stable-image/edit/inpaint`, fields, files);
  }

  private async call(
    target: ProviderTarget,
    request: UpstreamImageRequest,
    options: CallOptions,
    url: string,
    fieldsOf: (index: number) => Record<string, string | undefined>,
    files: Array<{ field: string; filename: string; contentType: string; data: Buffer }>,
  ): Promise<UpstreamImageResult> {
    const count = request.n ?? 1;
    if (!Number.isInteger(count) || count < 1 || count > STABILITY_MAX_IMAGES) {
      throw new RequestTranslationError(`n must be an integer from 1 to ${STABILITY_MAX_IMAGES} for Stability models`, 'n');
    }
    const headers: Record<string, string> = target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {};
    const images = await Promise.all(
      Array.from({ length: count }, async (_, index) => {
        const response = await postMultipart<StabilityImageResponse>({
          provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits,
          url,
          headers,
          fields: fieldsOf(index),
          files,
          timeoutMs: options.timeoutMs,
          signal: options.signal,
          limits: target.limits,
        });
        return fromStabilityImageResponse(target.provider, request, response);
      }),
    );
    const { width, height } = images[0];
    return {
      model: request.model,
      images,
      usage: { images: images.length, ...(width && height ? { width, height, megapixels: images.reduce((sum, image) => sum + (image.width ?? 0) * (image.height ?? 0), 0) / 1e6 } : {}) },
    };
  }
}
