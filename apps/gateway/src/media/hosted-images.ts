import { HttpStatus, Inject, Injectable, type OnModuleDestroy } from '@nestjs/common';
import { GatewayException } from '@igw/http';
import { SERVICE_SETTINGS, requestPathRedisOptions, trustedRanges, type ServiceSettings } from '@igw/config';
import { Redis } from 'ioredis';
import type { IncomingMessage } from 'node:http';
import { createHmac, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/** How long a signed image link works, and its image is kept. */
export const HOSTED_IMAGE_TTL_SECONDS = 3600;
/** The path the links point at; `{id}` is the image's. */
export const HOSTED_IMAGES_PATH = 'v1/images/hosted';

export interface HostedImage {
  bytes: Buffer;
  mimeType: string;
}

/** Where the images behind the links are kept: every replica must read what one kept. */
interface HostedImageStore {
  put(id: string, image: HostedImage, ttlMs: number): Promise<void>;
  get(id: string): Promise<HostedImage | undefined>;
  /** The signing key kept beside the images, made once by whichever replica asks first. */
  sharedSecret(): Promise<string>;
  close(): Promise<void>;
}

/** Standalone: the process's own memory, at most `maxBytes`, the oldest images dropped first. */
class MemoryHostedImageStore implements HostedImageStore {
  private readonly images = new Map<string, HostedImage & { expiresAt: number }>();
  private held = 0;
  private readonly secret = randomBytes(32).toString('base64url');

  constructor(private readonly maxBytes: number) {}

  async put(id: string, image: HostedImage, ttlMs: number): Promise<void> {
    const now = Date.now();
    for (const [key, kept] of this.images) {
      // Insertion order is age order: expired ones first, then the oldest while there is no room.
      if (kept.expiresAt > now && this.held + image.bytes.length <= this.maxBytes) break;
      this.images.delete(key);
      this.held -= kept.bytes.length;
    }
    this.images.set(id, { ...image, expiresAt: now + ttlMs });
    this.held += image.bytes.length;
  }

  async get(id: string): Promise<HostedImage | undefined> {
    const kept = this.images.get(id);
    return kept && kept.expiresAt > Date.now() ? { bytes: kept.bytes, mimeType: kept.mimeType } : undefined;
  }

  async sharedSecret(): Promise<string> {
    return this.secret;
  }

  async close(): Promise<void> {
    this.images.clear();
  }
}

/** With REDIS_URL: a hash per image (its type and bytes) that Redis expires with the link. */
class RedisHostedImageStore implements HostedImageStore {
  private readonly redis: Redis;

  constructor(url: string, private readonly prefix: string, commandTimeoutMs: number) {
    // Uploading an image of megabytes takes longer than a limits command: a few times the timeout.
    // Connected on first use: a gateway whose clients never ask for links holds no connection for them.
    this.redis = new Redis(url, { ...requestPathRedisOptions(commandTimeoutMs * 10), enableOfflineQueue: true, lazyConnect: true });
    this.redis.on('error', () => undefined);
  }

  async put(id: string, image: HostedImage, ttlMs: number): Promise<void> {
    await this.redis.multi().hset(this.key(id), { type: image.mimeType, bytes: image.bytes }).pexpire(this.key(id), ttlMs).exec();
  }

  async get(id: string): Promise<HostedImage | undefined> {
    const kept = await this.redis.hgetallBuffer(this.key(id));
    if (!kept?.bytes || !kept.type) return undefined;
    return { bytes: kept.bytes, mimeType: kept.type.toString('utf8') };
  }

  async sharedSecret(): Promise<string> {
    const key = `${this.prefix}:hosted-images:secret`;
    await this.redis.set(key, randomBytes(32).toString('base64url'), 'NX');
    const secret = await this.redis.get(key);
    if (!secret) throw new Error('the hosted images secret vanished from Redis');
    return secret;
  }

  async close(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }

  private key(id: string): string {
    return `${this.prefix}:hosted-images:${id}`;
  }
}

/**
 * The images a client asked links for (`response_format: "url"`) when the upstream answered
 * bytes: kept an hour where every replica reads them (Redis with REDIS_URL, else the process's
 * memory, bounded by HOSTED_IMAGES_MAX_BYTES), and linked with `?expires=&signature=`, an
 * HMAC-SHA256 over the id and the expiry under MEDIA_URL_SECRET (or the shared generated key,
 * see the variable). The link needs no API key: its signature is the credential.
 */
@Injectable()
export class HostedImages implements OnModuleDestroy {
  private readonly store: HostedImageStore;
  private secret?: Promise<string>;
  private readonly isTrustedProxy?: (address: string) => boolean;

  constructor(@Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings) {
    const { env } = settings;
    this.isTrustedProxy = trustedRanges(env.TRUSTED_PROXIES);
    this.store = env.REDIS_URL ? new RedisHostedImageStore(env.REDIS_URL, env.QUEUE_PREFIX, env.REDIS_COMMAND_TIMEOUT_MS) : new MemoryHostedImageStore(env.HOSTED_IMAGES_MAX_BYTES);
  }

  async onModuleDestroy(): Promise<void> {
    await this.store.close();
  }

  /** Keeps the image and answers its signed link under `origin` (the gateway's address as the client reached it). */
  async host(image: HostedImage, origin: string): Promise<string> {
    if (image.bytes.length > this.settings.env.MEDIA_FETCH_MAX_BYTES) {
      throw new GatewayException(HttpStatus.BAD_GATEWAY, 'Bad Gateway: the upstream answered with an image larger than the gateway keeps for a link (MEDIA_FETCH_MAX_BYTES); ask for b64_json.');
    }
    const id = randomUUID().replace(/-/g, '');
    const expires = Math.floor(Date.now() / 1000) + HOSTED_IMAGE_TTL_SECONDS;
    try {
      await this.store.put(id, image, HOSTED_IMAGE_TTL_SECONDS * 1000);
      const signature = signatureOf(await this.signingKey(), id, expires);
      return `${origin}/${HOSTED_IMAGES_PATH}/${id}?expires=${expires}&signature=${signature}`;
    } catch (error) {
      throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'Service Unavailable: the image was made but could not be kept for a link (its store did not answer); ask for b64_json, or retry.', { cause: error });
    }
  }

  /**
   * The gateway's address as the client reached it, for the links: the `Host` it called (the
   * gateway serves plain HTTP), or behind a proxy of TRUSTED_PROXIES what the proxy forwarded
   * (`X-Forwarded-Proto`, `X-Forwarded-Host`). A host that is no host name falls back to HOST:PORT.
   */
  originOf(request: Pick<IncomingMessage, 'headers' | 'socket'>): string {
    const first = (value: string | string[] | undefined) => (Array.isArray(value) ? value[0] : value)?.split(',')[0]?.trim();
    const proxied = this.isTrustedProxy !== undefined && request.socket?.remoteAddress !== undefined && this.isTrustedProxy(request.socket.remoteAddress);
    const forwardedProto = proxied ? first(request.headers['x-forwarded-proto']) : undefined;
    const protocol = forwardedProto === 'https' || forwardedProto === 'http' ? forwardedProto : 'http';
    const host = (proxied ? first(request.headers['x-forwarded-host']) : undefined) ?? request.headers.host;
    const { HOST, PORT } = this.settings.env;
    return `${protocol}://${host !== undefined && /^[A-Za-z0-9.-]+(:\d{1,5})?$|^\[[0-9A-Fa-f:.]+\](:\d{1,5})?$/.test(host) ? host : `${HOST}:${PORT}`}`;
  }

  /** The image a link names: 403 for a signature that does not match, 404 once expired or gone. */
  async read(id: string, expires: string | undefined, signature: string | undefined): Promise<HostedImage> {
    const expiry = Number(expires);
    const key = await this.signingKey().catch((error: unknown) => {
      throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'Service Unavailable: the store of image links did not answer; retry shortly.', { cause: error });
    });
    if (!/^[0-9a-f]{32}$/.test(id) || !Number.isInteger(expiry) || typeof signature !== 'string' || !sameSignature(signature, signatureOf(key, id, expiry))) {
      throw new GatewayException(HttpStatus.FORBIDDEN, 'Forbidden: this image link is not one the gateway signed (its id, expires or signature was changed).');
    }
    const gone = () => new GatewayException(HttpStatus.NOT_FOUND, `Not Found: this image link expired (links last ${HOSTED_IMAGE_TTL_SECONDS / 60} minutes); generate the image again.`);
    if (expiry * 1000 <= Date.now()) throw gone();
    const image = await this.store.get(id).catch((error: unknown) => {
      throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'Service Unavailable: the store of image links did not answer; retry shortly.', { cause: error });
    });
    if (!image) throw gone();
    return image;
  }

  private signingKey(): Promise<string> {
    const configured = this.settings.env.MEDIA_URL_SECRET;
    if (configured) return Promise.resolve(configured);
    this.secret ??= this.store.sharedSecret().catch((error: unknown) => {
      this.secret = undefined;
      throw error;
    });
    return this.secret;
  }
}

export function signatureOf(secret: string, id: string, expires: number): string {
  return createHmac('sha256', secret).update(`${id}.${expires}`).digest('base64url');
}

function sameSignature(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
