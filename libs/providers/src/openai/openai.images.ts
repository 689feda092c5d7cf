import { imageDimensions, imageMimeType, parseSize } from '../media/image-facts';
import type { CallOptions, ImagesAdapter, ProviderTarget, UpstreamImage, UpstreamImageEditRequest, UpstreamImageRequest, UpstreamImageResult } from '../provider.types';
import { postJson, postMultipart } from '../transport/http-client';
import { UpstreamProtocolError } from '../upstream.errors';
import type { OpenAiEndpoint } from './openai.chat';

const bearer = (target: ProviderTarget): Record<string, string> => (target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {});
const OPENAI_IMAGES_ENDPOINT: OpenAiEndpoint = { url: (target) => `${target.baseUrl}/images/generations`, headers: bearer };
const OPENAI_IMAGE_EDITS_ENDPOINT: OpenAiEndpoint = { url: (target) => `${target.baseUrl}/images/edits`, headers: bearer };

/** OpenAI's images answer, as far as the gateway reads it. */
export interface OpenAiImagesResponse {
  created?: number;
  data?: Array<{ b64_json?: string; url?: string; revised_prompt?: string }>;
  output_format?: string;
  size?: string;
  usage?: { input_tokens?: number; output_tokens?: number; total_tokens?: number };
}

/**
 * `dall-e-*` models answer with a URL unless asked for `b64_json`; GPT Image models always answer
 * base64 and refuse `response_format` (a 400), so it is sent to the DALL·E family only.
 */
function takesResponseFormat(model: string): boolean {
  return model.startsWith('dall-e');
}

export function toOpenAiImagesRequest(request: UpstreamImageRequest): Record<string, unknown> {
  const body: Record<string, unknown> = { ...request.options, model: request.model, prompt: request.prompt };
  if (request.n !== undefined) body.n = request.n;
  if (request.size !== undefined) body.size = request.size;
  if (request.quality !== undefined) body.quality = request.quality;
  // OpenAI's own models take no steps (a 400); OpenAI-compatible diffusion servers do.
  if (request.steps !== undefined) body.steps = request.steps;
  if (request.user !== undefined) body.user = request.user;
  if (takesResponseFormat(request.model)) body.response_format = request.responseFormat === 'url' ? 'url' : 'b64_json';
  else if (request.outputFormat !== undefined) body.output_format = request.outputFormat;
  return body;
}

/**
 * The form of `POST /images/edits`: one image as `image`, several as `image[]` (GPT Image takes
 * up to 16; DALL·E 2 one square PNG), the optional mask as `mask`.
 */
export function toOpenAiImageEditForm(request: UpstreamImageEditRequest): {
  fields: Record<string, string | undefined>;
  files: Array<{ field: string; filename: string; contentType: string; data: Buffer }>;
} {
  const { images, mask, ...generation } = request;
  const body = toOpenAiImagesRequest(generation);
  const fields = Object.fromEntries(Object.entries(body).map(([name, value]) => [name, String(value)]));
  const field = images.length === 1 ? 'image' : 'image[]';
  const files = images.map((image) => ({ field, filename: image.filename, contentType: image.contentType, data: image.data }));
  if (mask) files.push({ field: 'mask', filename: mask.filename, contentType: mask.contentType, data: mask.data });
  return { fields, files };
}

/** OpenAI edits with GPT Image and DALL·E 2 only. */
export function openAiEditRefusal(model: string): string | undefined {
  if (model.startsWith('dall-e') && !model.startsWith('dall-e-2')) return `${model} has no image edit API (GPT Image and DALL·E 2 models edit)`;
  return undefined;
}

export function fromOpenAiImagesResponse(provider: string, request: UpstreamImageRequest, response: OpenAiImagesResponse): UpstreamImageResult {
  if (!response || !Array.isArray(response.data) || response.data.length === 0) throw new UpstreamProtocolError(provider, 'no images in the answer');
  const requested = parseSize(response.size ?? request.size);
  const declaredType = `image/${response.output_format ?? request.outputFormat ?? 'png'}`;
  const images = response.data.map((item): UpstreamImage => {
    if (typeof item?.b64_json === 'string' && item.b64_json !== '') {
      const bytes = Buffer.from(item.b64_json, 'base64');
      const size = imageDimensions(bytes) ?? requested;
      return withOptional({ base64: item.b64_json, mimeType: imageMimeType(bytes) ?? declaredType, ...size }, item.revised_prompt);
    }
    if (typeof item?.url === 'string' && item.url !== '') return withOptional({ url: item.url, mimeType: declaredType, ...requested }, item.revised_prompt);
    throw new UpstreamProtocolError(provider, 'an image has neither b64_json nor url');
  });
  const first = images[0];
  const width = first.width;
  const height = first.height;
  return {
    model: request.model,
    images,
    usage: {
      images: images.length,
      ...(width && height ? { width, height, megapixels: (width * height * images.length) / 1e6 } : {}),
      ...(request.steps !== undefined ? { steps: request.steps } : {}),
      ...(Number.isInteger(response.usage?.input_tokens) ? { inputTokens: response.usage?.input_tokens } : {}),
      ...(Number.isInteger(response.usage?.output_tokens) ? { outputTokens: response.usage?.output_tokens } : {}),
    },
  };
}

function withOptional(image: UpstreamImage, revisedPrompt: string | undefined): UpstreamImage {
  return typeof revisedPrompt === 'string' ? { ...image, revisedPrompt } : image;
}

/** OpenAI's images API and servers that copy it: `POST {base}/images/generations`. */
export class OpenAiImagesAdapter implements ImagesAdapter {
  constructor(
    private readonly endpoint: OpenAiEndpoint = OPENAI_IMAGES_ENDPOINT,
    private readonly editEndpoint: OpenAiEndpoint = OPENAI_IMAGE_EDITS_ENDPOINT,
  ) {}

  editRefusal(model: string): string | undefined {
    return openAiEditRefusal(model);
  }

  async edit(target: ProviderTarget, request: UpstreamImageEditRequest, options: CallOptions): Promise<UpstreamImageResult> {
    const form = toOpenAiImageEditForm(request);
    const response = await postMultipart<OpenAiImagesResponse>({
      provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits,
      url: this.editEndpoint.url(target),
      headers: this.editEndpoint.headers(target),
      fields: form.fields,
      files: form.files,
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: target.limits,
    });
    return fromOpenAiImagesResponse(target.provider, request, response);
  }

  async generate(target: ProviderTarget, request: UpstreamImageRequest, options: CallOptions): Promise<UpstreamImageResult> {
    const response = await postJson<OpenAiImagesResponse>({
      provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits,
      url: this.endpoint.url(target),
      headers: this.endpoint.headers(target),
      body: toOpenAiImagesRequest(request),
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: target.limits,
    });
    return fromOpenAiImagesResponse(target.provider, request, response);
  }
}
