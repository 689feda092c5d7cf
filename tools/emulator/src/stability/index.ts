// Stability AI's Stable Image API: `Authorization: Bearer <key>`, errors as
// `{id, name, errors: [message]}`.
//   POST /v2beta/stable-image/generate/{core|ultra|sd3}  (multipart/form-data only)
//     fields: prompt (required, at most 10000 characters), aspect_ratio (21:9 16:9 3:2 5:4 1:1
//     4:5 2:3 9:16 9:21, default 1:1), seed (0 to 4294967294, 0 = random), output_format
//     (png default, jpeg, webp), negative_prompt, style_preset; sd3 takes `model` (sd3.5-large
//     default, sd3.5-large-turbo, sd3.5-medium, sd3.5-flash).
//     `accept: application/json` answers `{image: <base64>, finish_reason: 'SUCCESS', seed}`;
//     `image/*` (the default) answers the bytes with `finish-reason` and `seed` headers.
//     The image is a one-colour PNG (whatever output_format says) sized by the aspect ratio
//     (1:1 → 1024x1024, 16:9 → 1344x768, ...), its colour from the seed, else the prompt.
//     A prompt containing `emulate content filter` answers finish_reason CONTENT_FILTERED.
//   POST /v2beta/stable-image/edit/inpaint  (multipart/form-data only)
//     files: image (PNG, required), mask (PNG of the same size, optional: the image's alpha
//     otherwise); fields: prompt (required), negative_prompt, seed, output_format, grow_mask,
//     style_preset. Answers as generate does, a one-colour PNG of the image's size.
import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { RequestContext } from '../context';
import type { ErrorResponse, RouterFailure, WireFormat } from '../format';
import { imageSeed, makePng } from '../media/png';

export const STABILITY_SIZES: Record<string, [number, number]> = {
  '21:9': [1536, 640],
  '16:9': [1344, 768],
  '3:2': [1216, 832],
  '5:4': [1088, 896],
  '1:1': [1024, 1024],
  '4:5': [896, 1088],
  '2:3': [832, 1216],
  '9:16': [768, 1344],
  '9:21': [640, 1536],
};
const SD3_MODELS = ['sd3.5-large', 'sd3.5-large-turbo', 'sd3.5-medium', 'sd3.5-flash'];
const SERVICES = ['core', 'ultra', 'sd3'];

function errorName(status: number): string {
  if (status === 401) return 'unauthorized';
  if (status === 403) return 'content_moderation';
  if (status === 404) return 'not_found';
  if (status === 413) return 'payload_too_large';
  if (status === 429) return 'rate_limit_exceeded';
  if (status >= 500) return 'internal_error';
  return 'bad_request';
}

function generate(ctx: RequestContext): void {
  const service = ctx.params[0];
  if (!SERVICES.includes(service)) return ctx.error(404, `No such service: ${service}`);
  if (!/^multipart\/form-data/i.test(ctx.req.headers['content-type'] ?? '')) return ctx.error(400, 'content-type: must be multipart/form-data');
  const fields = (ctx.body ?? {}) as Record<string, string | string[]>;
  const text = (name: string): string | undefined => {
    const value = fields[name];
    return Array.isArray(value) ? value[0] : value;
  };
  const prompt = text('prompt');
  if (prompt === undefined || prompt.trim() === '') return ctx.error(400, 'prompt: is required');
  if ([...prompt].length > 10_000) return ctx.error(400, 'prompt: must be at most 10000 characters');
  const aspectRatio = text('aspect_ratio') ?? '1:1';
  const size = STABILITY_SIZES[aspectRatio];
  if (!size) return ctx.error(400, `aspect_ratio: must be one of ${Object.keys(STABILITY_SIZES).join(', ')}`);
  const outputFormat = text('output_format') ?? 'png';
  if (!['png', 'jpeg', 'webp'].includes(outputFormat)) return ctx.error(400, 'output_format: must be one of png, jpeg, webp');
  const model = text('model');
  if (service === 'sd3' && model !== undefined && !SD3_MODELS.includes(model)) return ctx.error(400, `model: must be one of ${SD3_MODELS.join(', ')}`);
  const seedField = text('seed');
  const seed = seedField === undefined || seedField === '0' ? imageSeed(prompt) : Number(seedField);
  if (!Number.isInteger(seed) || seed < 0 || seed > 4_294_967_294) return ctx.error(400, 'seed: must be an integer from 0 to 4294967294');
  const png = makePng(size[0], size[1], seed & 0xffffff);
  const finishReason = /emulate content filter/i.test(prompt) ? 'CONTENT_FILTERED' : 'SUCCESS';
  if (/application\/json/i.test(ctx.req.headers.accept ?? '')) {
    return ctx.json(200, { image: png.toString('base64'), finish_reason: finishReason, seed });
  }
  ctx.send(200, png, 'image/png', { 'finish-reason': finishReason, seed: String(seed) });
}

function inpaint(ctx: RequestContext): void {
  if (!/^multipart\/form-data/i.test(ctx.req.headers['content-type'] ?? '')) return ctx.error(400, 'content-type: must be multipart/form-data');
  const fields = (ctx.body ?? {}) as Record<string, string | string[]>;
  const prompt = Array.isArray(fields.prompt) ? fields.prompt[0] : fields.prompt;
  if (prompt === undefined || prompt.trim() === '') return ctx.error(400, 'prompt: is required');
  const image = ctx.files.find((file) => file.field === 'image');
  const size = image && pngSize(image.data);
  if (!size) return ctx.error(400, 'image: is required and must be a PNG, JPEG or WebP');
  const mask = ctx.files.find((file) => file.field === 'mask');
  const maskSize = mask && pngSize(mask.data);
  if (mask && (!maskSize || maskSize[0] !== size[0] || maskSize[1] !== size[1])) return ctx.error(400, 'mask: must be an image of the same size as image');
  const seed = imageSeed(`${prompt}|inpaint|${image.data.length}`);
  const png = makePng(size[0], size[1], seed);
  if (/application\/json/i.test(ctx.req.headers.accept ?? '')) return ctx.json(200, { image: png.toString('base64'), finish_reason: 'SUCCESS', seed });
  ctx.send(200, png, 'image/png', { 'finish-reason': 'SUCCESS', seed: String(seed) });
}

function pngSize(bytes: Buffer): [number, number] | undefined {
  if (bytes.length < 24 || bytes.readUInt32BE(0) !== 0x89504e47 || bytes.toString('ascii', 12, 16) !== 'IHDR') return undefined;
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}

export const stabilityFormat: WireFormat = {
  name: 'stability',
  routes: [
    { method: 'POST', path: /^\/v2beta\/stable-image\/generate\/([^/]+)$/, handle: generate },
    { method: 'POST', path: '/v2beta/stable-image/edit/inpaint', handle: inpaint },
  ],
  ownsPath: (path) => path.startsWith('/v2beta/'),
  apiKeyOf(req: IncomingMessage): string | undefined {
    const header = req.headers.authorization;
    if (header === undefined || !/^bearer /i.test(header)) return undefined;
    return header.slice(7).trim();
  },
  errorBody: (status: number, message: string) => ({ id: randomUUID().replace(/-/g, ''), name: errorName(status), errors: [message] }),
  describeFailure(failure: RouterFailure): ErrorResponse {
    switch (failure.kind) {
      case 'not_found':
        return { status: 404, message: `${failure.method} ${failure.path}: not found` };
      case 'invalid_json':
        return { status: 400, message: 'body: is not valid' };
      case 'body_too_large':
        return { status: 413, message: `body: must be at most ${failure.limitBytes} bytes` };
      case 'missing_api_key':
        return { status: 401, message: 'authorization: missing header value' };
      case 'invalid_api_key':
        return { status: 401, message: 'authorization: invalid API key' };
      case 'emulated':
        return { status: failure.status, message: `Emulated error: HTTP ${failure.status} requested by ${failure.source === 'model' ? 'the model name (@status=)' : 'x-emulator-status'}.` };
      case 'internal':
        return { status: 500, message: 'The emulator failed to process the request.' };
    }
  },
};
