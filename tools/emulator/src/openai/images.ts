// POST /v1/images/generations, as OpenAI's images API answers:
//   {created, data: [{b64_json} | {url, revised_prompt?}], ...}
// Each image is a valid one-colour PNG of the requested size (media/png.ts), its colour picked
// by a hash of the prompt and the image's index. `response_format: 'url'` (the DALL·E default)
// answers URLs of the emulator's own GET /media/images/... route. Sizes per model family:
//   gpt-image-*: auto (= 1024x1024), 1024x1024, 1536x1024, 1024x1536; refuses `response_format`
//     (it always answers base64), answers `usage` (input = words of the prompt, output = 272 /
//     1056 / 4160 tokens per image at low / medium / high-or-auto quality) unless `@no-usage`.
//   dall-e-3: 1024x1024, 1792x1024, 1024x1792, n = 1 only, `revised_prompt` = the prompt.
//   dall-e-2: 256x256, 512x512, 1024x1024.
//   any other model (OpenAI-compatible servers): any WxH up to 2048 a side, default 1024x1024,
//     and `steps` (1 to 100; GPT Image and DALL·E refuse it as an unknown parameter).
import type { RequestContext } from '../context';
import { imageSeed, imageUrl, makePng, MAX_IMAGE_SIDE } from '../media/png';
import { countWords, hashText, isRecord } from '../util';

const SIZES: Array<[RegExp, readonly string[]]> = [
  [/^gpt-image/, ['auto', '1024x1024', '1536x1024', '1024x1536']],
  [/^dall-e-3/, ['1024x1024', '1792x1024', '1024x1792']],
  [/^dall-e-2/, ['256x256', '512x512', '1024x1024']],
];
const OUTPUT_TOKENS: Record<string, number> = { low: 272, medium: 1056, high: 4160, auto: 4160 };

export function imageGenerations(ctx: RequestContext): void {
  const body = ctx.body;
  if (!isRecord(body)) return ctx.error(400, 'The body must be a JSON object.');
  const model = typeof body.model === 'string' && body.model !== '' ? body.model : 'dall-e-2';
  if (typeof body.prompt !== 'string' || body.prompt.trim() === '') return ctx.error(400, "Missing required parameter: 'prompt'.", { param: 'prompt' });
  const n = body.n ?? 1;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < 1 || n > 10) return ctx.error(400, "Invalid 'n': must be an integer from 1 to 10.", { param: 'n' });
  if (model.startsWith('dall-e-3') && n !== 1) return ctx.error(400, 'Invalid parameter: dall-e-3 only supports n=1.', { param: 'n' });
  const gptImage = model.startsWith('gpt-image');
  if ((gptImage || model.startsWith('dall-e')) && body.steps !== undefined) return ctx.error(400, "Unknown parameter: 'steps'.", { param: 'steps', code: 'unknown_parameter' });
  if (body.steps !== undefined && (typeof body.steps !== 'number' || !Number.isInteger(body.steps) || body.steps < 1 || body.steps > 100)) {
    return ctx.error(400, "Invalid 'steps': must be an integer from 1 to 100.", { param: 'steps' });
  }
  if (gptImage && body.response_format !== undefined) return ctx.error(400, "Unknown parameter: 'response_format'.", { param: 'response_format', code: 'unknown_parameter' });
  const responseFormat = body.response_format ?? (model.startsWith('dall-e') ? 'url' : 'b64_json');
  if (responseFormat !== 'url' && responseFormat !== 'b64_json') {
    return ctx.error(400, `Invalid value: '${String(responseFormat)}'. Supported values are: 'url' and 'b64_json'.`, { param: 'response_format' });
  }
  const size = typeof body.size === 'string' ? body.size : gptImage ? 'auto' : '1024x1024';
  const allowed = SIZES.find(([family]) => family.test(model))?.[1];
  const parsed = /^(\d{1,5})x(\d{1,5})$/.exec(size === 'auto' && allowed?.includes('auto') ? '1024x1024' : size);
  const width = Number(parsed?.[1]);
  const height = Number(parsed?.[2]);
  if ((allowed !== undefined && !allowed.includes(size)) || !parsed || width < 1 || height < 1 || width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE) {
    const expected = allowed === undefined ? `WIDTHxHEIGHT, at most ${MAX_IMAGE_SIDE} a side` : allowed.map((value) => `'${value}'`).join(', ');
    return ctx.error(400, `Invalid value: '${size}'. Supported values are: ${expected}.`, { param: 'size' });
  }
  const quality = typeof body.quality === 'string' ? body.quality : 'auto';
  const data = Array.from({ length: n }, (_, index) => {
    const seed = imageSeed(body.prompt as string, index);
    const item: Record<string, unknown> =
      responseFormat === 'url' ? { url: imageUrl(ctx.req.headers.host, width, height, seed) } : { b64_json: makePng(width, height, seed).toString('base64') };
    if (model.startsWith('dall-e-3')) item.revised_prompt = body.prompt;
    return item;
  });
  const answer: Record<string, unknown> = { created: Math.floor(Date.now() / 1000), data };
  if (gptImage) {
    Object.assign(answer, { background: body.background ?? 'opaque', output_format: body.output_format ?? 'png', quality: quality === 'auto' ? 'high' : quality, size: `${width}x${height}` });
    if (!ctx.controls.noUsage) {
      const input = countWords(body.prompt);
      const output = (OUTPUT_TOKENS[quality] ?? OUTPUT_TOKENS.auto) * n;
      answer.usage = { input_tokens: input, input_tokens_details: { text_tokens: input, image_tokens: 0 }, output_tokens: output, total_tokens: input + output };
    }
  }
  ctx.json(200, answer);
}

// POST /v1/images/edits, as OpenAI answers it: a multipart form with the image(s) in `image`
// (one) or `image[]` (several, GPT Image up to 16), an optional `mask` PNG, `prompt`, and the
// generation fields as text. dall-e-2 takes one square PNG and answers URLs unless asked for
// `b64_json`; gpt-image-* answers base64 with `usage`; dall-e-3 has no edits (400). The edited
// image is a one-colour PNG of the first image's size (or `size`), its colour from the prompt
// and the bytes of the images, so an edit differs from a generation of the same prompt.
export function imageEdits(ctx: RequestContext): void {
  if (!/^multipart\/form-data/i.test(ctx.req.headers['content-type'] ?? '')) return ctx.error(400, 'Invalid Content-Type header (expected multipart/form-data).');
  const fields = (ctx.body ?? {}) as Record<string, string | string[]>;
  const text = (name: string): string | undefined => (Array.isArray(fields[name]) ? fields[name][0] : (fields[name] as string | undefined));
  const model = text('model') ?? 'dall-e-2';
  if (model.startsWith('dall-e-3')) return ctx.error(400, "Invalid value: 'dall-e-3'. Value must be 'dall-e-2' or a GPT Image model.", { param: 'model' });
  const prompt = text('prompt');
  if (prompt === undefined || prompt.trim() === '') return ctx.error(400, "Missing required parameter: 'prompt'.", { param: 'prompt' });
  const images = ctx.files.filter((file) => file.field === 'image' || file.field === 'image[]');
  if (images.length === 0) return ctx.error(400, "Missing required parameter: 'image'.", { param: 'image' });
  const gptImage = model.startsWith('gpt-image');
  if (!gptImage && images.length > 1) return ctx.error(400, 'dall-e-2 edits exactly one image.', { param: 'image' });
  if (images.length > 16) return ctx.error(400, 'At most 16 images may be edited at once.', { param: 'image' });
  const sizes = images.map((file) => pngSize(file.data));
  if (sizes.some((size) => size === undefined)) return ctx.error(400, 'Invalid image file or mode for image, please check your image file.', { param: 'image' });
  const mask = ctx.files.find((file) => file.field === 'mask');
  if (mask) {
    const maskSize = pngSize(mask.data);
    if (!maskSize || maskSize[0] !== sizes[0]![0] || maskSize[1] !== sizes[0]![1]) return ctx.error(400, 'Invalid mask image: it must be a PNG of the same size as the image.', { param: 'mask' });
  }
  const n = Number(text('n') ?? '1');
  if (!Number.isInteger(n) || n < 1 || n > 10) return ctx.error(400, "Invalid 'n': must be an integer from 1 to 10.", { param: 'n' });
  const responseFormat = text('response_format') ?? (gptImage ? 'b64_json' : 'url');
  if (gptImage && text('response_format') !== undefined) return ctx.error(400, "Unknown parameter: 'response_format'.", { param: 'response_format', code: 'unknown_parameter' });
  const requested = text('size');
  const parsed = requested && requested !== 'auto' ? /^(\d{1,5})x(\d{1,5})$/.exec(requested) : null;
  const [width, height] = parsed ? [Number(parsed[1]), Number(parsed[2])] : sizes[0]!;
  if (width > MAX_IMAGE_SIDE || height > MAX_IMAGE_SIDE) return ctx.error(400, `Invalid value: '${requested}'.`, { param: 'size' });
  const basis = `${prompt}|${images.map((file) => hashText(file.data.toString('base64'))).join(',')}`;
  const data = Array.from({ length: n }, (_, index) => {
    const seed = imageSeed(basis, index);
    return responseFormat === 'url' ? { url: imageUrl(ctx.req.headers.host, width, height, seed) } : { b64_json: makePng(width, height, seed).toString('base64') };
  });
  const answer: Record<string, unknown> = { created: Math.floor(Date.now() / 1000), data };
  if (gptImage) {
    const quality = text('quality') ?? 'auto';
    Object.assign(answer, { background: text('background') ?? 'opaque', output_format: text('output_format') ?? 'png', quality: quality === 'auto' ? 'high' : quality, size: `${width}x${height}` });
    if (!ctx.controls.noUsage) {
      const input = countWords(prompt) + 65 * images.length;
      const output = (OUTPUT_TOKENS[quality] ?? OUTPUT_TOKENS.auto) * n;
      answer.usage = { input_tokens: input, input_tokens_details: { text_tokens: countWords(prompt), image_tokens: 65 * images.length }, output_tokens: output, total_tokens: input + output };
    }
  }
  ctx.json(200, answer);
}

/** The width and height of a PNG, from its IHDR; undefined for anything else. */
function pngSize(bytes: Buffer): [number, number] | undefined {
  if (bytes.length < 24 || bytes.readUInt32BE(0) !== 0x89504e47 || bytes.toString('ascii', 12, 16) !== 'IHDR') return undefined;
  return [bytes.readUInt32BE(16), bytes.readUInt32BE(20)];
}
