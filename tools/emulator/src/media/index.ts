// Media the emulated providers link to or tests upload, served over GET without an API key
// (like a provider's signed download URL):
//   GET /media/sample.wav                         a 2 s WAV whose transcript is SAMPLE_TEXT
//   GET /media/tone.wav?seconds=N&frequency=F      an N-second (default 1, at most 600) sine tone
//   GET /media/images/{W}x{H}/{seed}.png          the image an images route answered with a URL for
// Errors use a plain `{error: {message}}` body.
import type { IncomingMessage } from 'node:http';
import type { RequestContext } from '../context';
import type { ErrorResponse, RouterFailure, WireFormat } from '../format';
import { makePng, MAX_IMAGE_SIDE } from './png';
import { makeWav, MAX_TONE_SECONDS, SAMPLE_SECONDS, SAMPLE_TEXT } from './wav';

let sample: Buffer | undefined;

function sampleWav(ctx: RequestContext): void {
  sample ??= makeWav({ seconds: SAMPLE_SECONDS, text: SAMPLE_TEXT, frequency: 330 });
  ctx.send(200, sample, 'audio/wav');
}

function toneWav(ctx: RequestContext): void {
  const seconds = Number(ctx.query.get('seconds') ?? '1');
  const frequency = Number(ctx.query.get('frequency') ?? '440');
  if (!Number.isFinite(seconds) || seconds <= 0 || seconds > MAX_TONE_SECONDS) {
    return ctx.error(400, `seconds must be a number above 0 and at most ${MAX_TONE_SECONDS}`);
  }
  if (!Number.isFinite(frequency) || frequency < 20 || frequency > 12_000) return ctx.error(400, 'frequency must be between 20 and 12000 Hz');
  ctx.send(200, makeWav({ seconds, frequency }), 'audio/wav');
}

function image(ctx: RequestContext): void {
  const [width, height, seed] = ctx.params.map(Number);
  if (width < 1 || height < 1 || width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE || seed > 0xffffff) {
    return ctx.error(404, 'No such image');
  }
  ctx.send(200, makePng(width, height, seed), 'image/png');
}

export const mediaFormat: WireFormat = {
  name: 'media',
  routes: [
    { method: 'GET', path: '/media/sample.wav', handle: sampleWav, public: true },
    { method: 'GET', path: '/media/tone.wav', handle: toneWav, public: true },
    { method: 'GET', path: /^\/media\/images\/(\d{1,5})x(\d{1,5})\/(\d{1,9})\.png$/, handle: image, public: true },
  ],
  ownsPath: (path) => path.startsWith('/media/'),
  // Only unknown /media paths ask for one (the router checks keys before it answers 404).
  apiKeyOf(req: IncomingMessage): string | undefined {
    const header = req.headers.authorization;
    return header !== undefined && /^bearer /i.test(header) ? header.slice(7).trim() : undefined;
  },
  errorBody: (_status: number, message: string) => ({ error: { message } }),
  describeFailure(failure: RouterFailure): ErrorResponse {
    switch (failure.kind) {
      case 'not_found':
        return { status: 404, message: `No media at ${failure.path}` };
      case 'emulated':
        return { status: failure.status, message: `Emulated error: HTTP ${failure.status}.` };
      case 'missing_api_key':
      case 'invalid_api_key':
        return { status: 401, message: 'Unauthorized' };
      case 'invalid_json':
        return { status: 400, message: 'Invalid request' };
      case 'body_too_large':
        return { status: 413, message: `Request body too large (limit ${failure.limitBytes} bytes).` };
      case 'internal':
        return { status: 500, message: 'The emulator failed to process the request.' };
    }
  },
};
