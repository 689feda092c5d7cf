import type { CallOptions, ProviderTarget, UpstreamImage, UpstreamImageResult } from '../provider.types';
import { getBytes } from '../transport/http-client';
import { UpstreamProtocolError } from '../upstream.errors';
import { imageDimensions, imageMimeType } from './image-facts';

/**
 * The result with every image that came as a URL fetched into `base64`, so the client always
 * gets bytes. The fetch goes through the same transport as the upstream call (its size limit,
 * timeout and cancellation); a failed fetch rejects like the upstream call would (the provider
 * has already done, and charges for, the work: the caller bills as for a failed answer).
 * Redirects are not followed (a 3xx is not an image): the URLs providers give are direct.
 */
export async function inlineImageUrls(target: ProviderTarget, result: UpstreamImageResult, options: CallOptions): Promise<UpstreamImageResult> {
  if (result.images.every((image) => image.base64 !== undefined)) return result;
  const images = await Promise.all(result.images.map((image) => (image.base64 !== undefined ? image : fetchImage(target, image, options))));
  return { ...result, images };
}

async function fetchImage(target: ProviderTarget, image: UpstreamImage, options: CallOptions): Promise<UpstreamImage> {
  if (!image.url) throw new UpstreamProtocolError(target.provider, 'an image has neither bytes nor a URL');
  let url: URL;
  try {
    url = new URL(image.url);
  } catch {
    throw new UpstreamProtocolError(target.provider, 'an image URL is not a URL');
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') throw new UpstreamProtocolError(target.provider, `an image URL has the scheme ${url.protocol}`);
  // No credentials: the key is for the API, never for wherever a URL points.
  const answer = await getBytes({ provider: target.provider, url: url.href, headers: {}, timeoutMs: options.timeoutMs, signal: options.signal, limits: target.limits }, 'image/*');
  // Judged by the bytes, not the header: whatever a URL points at reaches the client only if it
  // is an image, so a URL aimed at some internal service cannot relay its answers.
  const mimeType = imageMimeType(answer.body);
  if (!mimeType) throw new UpstreamProtocolError(target.provider, 'an image URL did not answer with a PNG, JPEG, WebP or GIF image');
  const size = imageDimensions(answer.body);
  return { ...image, base64: answer.body.toString('base64'), mimeType, ...(size ?? {}) };
}
