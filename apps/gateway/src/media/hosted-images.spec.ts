import type { ServiceSettings } from '@igw/config';
import { HOSTED_IMAGE_TTL_SECONDS, HostedImages, signatureOf } from './hosted-images';

const SECRET = 'a-signing-key-of-at-least-32-characters!';

function hostedImages(env: Partial<ServiceSettings['env']> = {}): HostedImages {
  return new HostedImages({ env: { MEDIA_FETCH_MAX_BYTES: 1_000, HOSTED_IMAGES_MAX_BYTES: 2_500, QUEUE_PREFIX: 'igw', REDIS_COMMAND_TIMEOUT_MS: 500, ...env } } as ServiceSettings);
}

function partsOf(link: string): { id: string; expires: string; signature: string } {
  const url = new URL(link, 'http://gateway.test');
  return { id: url.pathname.split('/').at(-1)!, expires: url.searchParams.get('expires')!, signature: url.searchParams.get('signature')! };
}

const image = (size: number, fill = 1) => ({ bytes: Buffer.alloc(size, fill), mimeType: 'image/png' });

describe('images kept for signed links', () => {
  afterEach(() => jest.useRealTimers());

  it('answers a link under the origin that gives the bytes back for an hour, signed over the id and expiry', async () => {
    const hosted = hostedImages({ MEDIA_URL_SECRET: SECRET });
    const link = await hosted.host(image(10), 'http://gateway.test');
    expect(link).toMatch(/^http:\/\/gateway\.test\/v1\/images\/hosted\/[0-9a-f]{32}\?expires=\d+&signature=[\w-]+$/);
    const { id, expires, signature } = partsOf(link);
    expect(Number(expires) - Date.now() / 1000).toBeGreaterThan(HOSTED_IMAGE_TTL_SECONDS - 5);
    expect(signature).toBe(signatureOf(SECRET, id, Number(expires)));
    expect(await hosted.read(id, expires, signature)).toEqual(image(10));
  });

  it('refuses a changed id, expiry or signature with 403, and an expired link with 404', async () => {
    const hosted = hostedImages({ MEDIA_URL_SECRET: SECRET });
    const { id, expires, signature } = partsOf(await hosted.host(image(10), ''));
    const other = `${id.slice(0, -1)}${id.endsWith('0') ? '1' : '0'}`;
    for (const [changedId, changedExpires, changedSignature] of [
      [other, expires, signature],
      [id, String(Number(expires) + 1), signature],
      [id, expires, `${signature.slice(0, -1)}x`],
      [id, expires, undefined],
      [id, 'soon', signature],
    ]) {
      await expect(hosted.read(changedId!, changedExpires, changedSignature)).rejects.toMatchObject({ status: 403 });
    }
    const past = Math.floor(Date.now() / 1000) - 1;
    await expect(hosted.read(id, String(past), signatureOf(SECRET, id, past))).rejects.toMatchObject({ status: 404, message: expect.stringContaining('expired') });
    jest.useFakeTimers({ now: Date.now() + (HOSTED_IMAGE_TTL_SECONDS + 1) * 1000 });
    await expect(hosted.read(id, expires, signature)).rejects.toMatchObject({ status: 404 });
  });

  it('signs with a key of its own when none is configured, which another process does not share', async () => {
    const one = hostedImages();
    const link = partsOf(await one.host(image(10), ''));
    expect(await one.read(link.id, link.expires, link.signature)).toEqual(image(10));
    await expect(hostedImages().read(link.id, link.expires, link.signature)).rejects.toMatchObject({ status: 403 });
  });

  it('links under the Host the client called, or what a trusted proxy forwarded', () => {
    const request = (remoteAddress: string, headers: Record<string, string>) => ({ socket: { remoteAddress }, headers }) as never;
    const direct = hostedImages({ HOST: '0.0.0.0', PORT: 8080 });
    expect(direct.originOf(request('10.0.0.5', { host: 'gateway.test:8080', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'evil.test' }))).toBe('http://gateway.test:8080');
    expect(direct.originOf(request('10.0.0.5', { host: 'bad host/<x>' }))).toBe('http://0.0.0.0:8080');
    const proxied = hostedImages({ TRUSTED_PROXIES: '10.0.0.0/8' });
    expect(proxied.originOf(request('10.0.0.5', { host: 'internal:8080', 'x-forwarded-proto': 'https', 'x-forwarded-host': 'api.example.com' }))).toBe('https://api.example.com');
    expect(proxied.originOf(request('192.0.2.1', { host: 'internal:8080', 'x-forwarded-proto': 'https' }))).toBe('http://internal:8080');
  });

  it('keeps at most HOSTED_IMAGES_MAX_BYTES, dropping the oldest first, and refuses an image larger than MEDIA_FETCH_MAX_BYTES', async () => {
    const hosted = hostedImages({ MEDIA_URL_SECRET: SECRET });
    const links = [];
    for (let index = 0; index < 3; index++) links.push(partsOf(await hosted.host(image(1_000, index), '')));
    const [oldest, middle, newest] = links;
    await expect(hosted.read(oldest.id, oldest.expires, oldest.signature)).rejects.toMatchObject({ status: 404 });
    expect((await hosted.read(middle.id, middle.expires, middle.signature)).bytes).toEqual(Buffer.alloc(1_000, 1));
    expect((await hosted.read(newest.id, newest.expires, newest.signature)).bytes).toEqual(Buffer.alloc(1_000, 2));
    await expect(hosted.host(image(1_001), '')).rejects.toMatchObject({ status: 502 });
  });
});
