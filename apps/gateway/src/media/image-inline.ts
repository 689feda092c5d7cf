import { HttpStatus } from '@nestjs/common';
import { GatewayException } from '@igw/http';
import { imageDimensions, imageMimeType, type CancelSignal, type UpstreamImage } from '@igw/providers';
import type { HeldMedia, MediaFetcher } from './media-fetcher';

/**
 * An image an upstream answered by URL, fetched under the media address policy (the same as
 * speech-to-text's: no loopback, private or metadata address unless allowlisted, every redirect
 * checked, size and time capped, counted in the process's media budget and the key's share of it until inlined). Any
 * failure is the upstream's unusable answer: a 502.
 */
export async function inlineImage(fetcher: MediaFetcher, image: UpstreamImage, signal: CancelSignal, keyId: string): Promise<UpstreamImage> {
  if (image.base64 !== undefined) return image;
  const badGateway = (detail: string) => new GatewayException(HttpStatus.BAD_GATEWAY, `Bad Gateway: the upstream answered with an image URL that ${detail}.`);
  if (!image.url) throw badGateway('is empty');
  let media: HeldMedia;
  try {
    media = await fetcher.fetch(image.url, signal, keyId);
  } catch (error) {
    throw badGateway((error as Error).message);
  }
  try {
    const { bytes } = media;
    // Judged by the bytes, not the header: a URL aimed at some internal service cannot relay its answers.
    const mimeType = imageMimeType(bytes);
    if (!mimeType) throw badGateway('did not answer with a PNG, JPEG, WebP or GIF image');
    return { ...image, base64: bytes.toString('base64'), mimeType, ...(imageDimensions(bytes) ?? {}) };
  } finally {
    media.release();
  }
}
