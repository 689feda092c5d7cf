import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { ServiceSettings } from '@igw/config';
import { Cancellation } from '@igw/providers';
import { makePng, startEmulator, type RunningEmulator } from '@igw/emulator';
import { inlineImage } from './image-inline';
import { MediaFetcher } from './media-fetcher';

/**
 * Images an upstream answers by URL are fetched under the media address policy: the emulator
 * (allowlisted by its exact host:port) serves them; every other address here is another
 * loopback port, which the policy forbids. Only 127.0.0.1 is ever connected to.
 */
describe('images answered by URL', () => {
  let emulator: RunningEmulator;
  let other: Server;
  let otherPort: number;

  beforeAll(async () => {
    emulator = await startEmulator();
    // Another loopback service: a redirect into it must not be followed.
    other = createServer((request, response) => {
      if (request.url === '/redirect') {
        response.writeHead(302, { location: `${emulator.url}/media/images/8x8/1.png` });
        response.end();
        return;
      }
      response.writeHead(200, { 'content-type': 'image/png' });
      response.end(makePng(8, 8, 1));
    });
    await new Promise<void>((resolve) => other.listen(0, '127.0.0.1', resolve));
    otherPort = (other.address() as AddressInfo).port;
  });

  afterAll(async () => {
    await emulator.close();
    await new Promise((resolve) => other.close(resolve));
  });

  /** The API key whose image request the fetches serve: alone here, so its share is the whole budget. */
  const IMAGE_KEY = 'image-key';
  const fetcherAllowing = (allowlist: string, maxBytes = 1024 * 1024, inFlightMaxBytes = 4 * maxBytes) =>
    new MediaFetcher({
      env: { MEDIA_FETCH_MAX_BYTES: maxBytes, MEDIA_FETCH_TIMEOUT_MS: 5_000, MEDIA_FETCH_ALLOWLIST: allowlist, MEDIA_IN_FLIGHT_MAX_BYTES: inFlightMaxBytes, MEDIA_IN_FLIGHT_KEY_SHARE: 1 },
    } as unknown as ServiceSettings);
  const emulatorHost = () => new URL(emulator.url).host;
  const urlImage = (url: string) => ({ url, mimeType: 'image/png' });

  it('fetches an allowlisted URL into base64, typed and sized by its bytes', async () => {
    const image = await inlineImage(fetcherAllowing(emulatorHost()), urlImage(`${emulator.url}/media/images/64x32/7.png`), new Cancellation(), IMAGE_KEY);
    expect(image).toMatchObject({ base64: makePng(64, 32, 7).toString('base64'), mimeType: 'image/png', width: 64, height: 32 });
  });

  it('answers 502 for a loopback URL outside the allowlist, before connecting', async () => {
    const served = emulator.requests.length;
    await expect(inlineImage(fetcherAllowing(emulatorHost()), urlImage(`http://127.0.0.1:${otherPort}/a.png`), new Cancellation(), IMAGE_KEY)).rejects.toMatchObject({
      status: 502,
      message: expect.stringMatching(/^Bad Gateway: the upstream answered with an image URL that .*loopback/),
    });
    // The policy judged it before any connection; with no allowlist the emulator is refused too.
    await expect(inlineImage(fetcherAllowing(''), urlImage(`${emulator.url}/media/images/8x8/1.png`), new Cancellation(), IMAGE_KEY)).rejects.toMatchObject({ status: 502 });
    expect(emulator.requests.length).toBe(served);
  });

  it('answers 502 for a redirect into a forbidden address, for an oversized image and for bytes that are not an image', async () => {
    const allowBoth = fetcherAllowing(`127.0.0.1:${otherPort}`);
    // The allowlisted server redirects to the emulator's port, which is not allowlisted.
    await expect(inlineImage(allowBoth, urlImage(`http://127.0.0.1:${otherPort}/redirect`), new Cancellation(), IMAGE_KEY)).rejects.toMatchObject({
      status: 502,
      message: expect.stringMatching(/redirects to a URL that/),
    });
    await expect(inlineImage(fetcherAllowing(emulatorHost(), 1_024), urlImage(`${emulator.url}/media/images/2048x2048/3.png`), new Cancellation(), IMAGE_KEY)).rejects.toMatchObject({ status: 502 });
    await expect(inlineImage(fetcherAllowing(emulatorHost()), urlImage(`${emulator.url}/media/sample.wav`), new Cancellation(), IMAGE_KEY)).rejects.toMatchObject({
      status: 502,
      message: 'Bad Gateway: the upstream answered with an image URL that did not answer with a PNG, JPEG, WebP or GIF image.',
    });
  });

  it("holds an image in the process's media budget only until it is inlined; an image past the budget is a 502", async () => {
    const png = makePng(64, 32, 7);
    const url = `${emulator.url}/media/images/64x32/7.png`;
    const roomForOne = fetcherAllowing(emulatorHost(), 1024 * 1024, png.length);
    for (let round = 0; round < 3; round++) {
      expect((await inlineImage(roomForOne, urlImage(url), new Cancellation(), IMAGE_KEY)).base64).toBe(png.toString('base64'));
    }
    await expect(inlineImage(fetcherAllowing(emulatorHost(), 1024 * 1024, png.length - 1), urlImage(url), new Cancellation(), IMAGE_KEY)).rejects.toMatchObject({
      status: 502,
      message: 'Bad Gateway: the upstream answered with an image URL that could not be fetched now: the gateway holds as much fetched media as it may at once.',
    });
  });
});
