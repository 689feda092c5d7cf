import { startEmulator, type RunningEmulator } from '../emulator';
import { makePng } from '../media/png';

// Stability's Stable Image routes: /v2beta/stable-image/generate/{core|ultra|sd3} and /edit/inpaint.

const KEY = 'sk-stability';
let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, apiKey: KEY });
});

afterAll(async () => {
  await emulator.close();
});

function generate(service: string, fields: Record<string, string>, accept = 'application/json', key = KEY): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  return fetch(`${emulator.url}/v2beta/stable-image/generate/${service}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, accept }, body: form });
}

const sizeOf = (png: Buffer): number[] => [png.readUInt32BE(16), png.readUInt32BE(20)];

describe('POST /v2beta/stable-image/generate/{service}', () => {
  it('answers JSON with a base64 PNG sized by the aspect ratio, the finish reason and the seed', async () => {
    const response = await generate('core', { prompt: 'a lighthouse', aspect_ratio: '16:9', seed: '42' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { image: string; finish_reason: string; seed: number };
    expect(body.finish_reason).toBe('SUCCESS');
    expect(body.seed).toBe(42);
    expect(sizeOf(Buffer.from(body.image, 'base64'))).toEqual([1344, 768]);
    expect(emulator.requests.at(-1)).toMatchObject({ body: { prompt: 'a lighthouse', aspect_ratio: '16:9', seed: '42' }, files: [] });
  });

  it('answers the image bytes for accept image/*, with the finish reason and seed in headers', async () => {
    const response = await generate('ultra', { prompt: 'a lighthouse' }, 'image/*');
    expect(response.headers.get('content-type')).toBe('image/png');
    expect(response.headers.get('finish-reason')).toBe('SUCCESS');
    expect(Number(response.headers.get('seed'))).toBeGreaterThan(0);
    expect(sizeOf(Buffer.from(await response.arrayBuffer()))).toEqual([1024, 1024]);
  });

  it('reports CONTENT_FILTERED for a prompt that asks for it', async () => {
    const body = (await (await generate('core', { prompt: 'please emulate content filter' })).json()) as { finish_reason: string };
    expect(body.finish_reason).toBe('CONTENT_FILTERED');
  });

  it.each([
    ['core', {}, 'prompt'],
    ['core', { prompt: 'p', aspect_ratio: '7:3' }, 'aspect_ratio'],
    ['core', { prompt: 'p', output_format: 'gif' }, 'output_format'],
    ['sd3', { prompt: 'p', model: 'sd2' }, 'model'],
    ['sd3', { prompt: 'p', seed: '-4' }, 'seed'],
  ])('refuses %s %j in its error shape, naming %s', async (service, fields, field) => {
    const response = await generate(service, fields as Record<string, string>);
    expect(response.status).toBe(400);
    expect(await response.json()).toEqual({ id: expect.any(String), name: 'bad_request', errors: [expect.stringContaining(field)] });
  });

  it('refuses a JSON body, an unknown service and a wrong key', async () => {
    const json = await fetch(`${emulator.url}/v2beta/stable-image/generate/core`, {
      method: 'POST',
      headers: { authorization: `Bearer ${KEY}`, 'content-type': 'application/json' },
      body: '{"prompt":"p"}',
    });
    expect(json.status).toBe(400);
    expect((await generate('sdxl', { prompt: 'p' })).status).toBe(404);
    const unauthorized = await generate('core', { prompt: 'p' }, 'application/json', 'wrong');
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toMatchObject({ name: 'unauthorized' });
  });

  it('reads the control suffixes from the path segment and from the sd3 `model` field', async () => {
    expect((await generate('core@status=500', { prompt: 'p' })).status).toBe(500);
    expect((await generate('core%40status%3D429', { prompt: 'p' })).status).toBe(429);
    const sd3 = await generate('sd3', { prompt: 'p', model: 'sd3.5-large@status=503' });
    expect(sd3.status).toBe(503);
    expect(await sd3.json()).toMatchObject({ name: 'internal_error', errors: [expect.stringContaining('@status=')] });
    const huge = await generate('core@huge-body=1', { prompt: 'p' });
    expect((await huge.arrayBuffer()).byteLength).toBeGreaterThanOrEqual(1024 * 1024);
  });
});

describe('POST /v2beta/stable-image/edit/inpaint', () => {
  const inpaint = (fields: Record<string, string>, files: Array<[string, Buffer]>) => {
    const form = new FormData();
    for (const [name, value] of Object.entries(fields)) form.append(name, value);
    for (const [field, bytes] of files) form.append(field, new Blob([bytes], { type: 'image/png' }), `${field}.png`);
    return fetch(`${emulator.url}/v2beta/stable-image/edit/inpaint`, { method: 'POST', headers: { authorization: `Bearer ${KEY}`, accept: 'application/json' }, body: form });
  };

  it("answers an image of the input's size, with or without a mask", async () => {
    for (const files of [[['image', makePng(640, 480, 1)]], [['image', makePng(640, 480, 1)], ['mask', makePng(640, 480, 0)]]] as Array<Array<[string, Buffer]>>) {
      const response = await inpaint({ prompt: 'a door' }, files);
      expect(response.status).toBe(200);
      const body = (await response.json()) as { image: string; finish_reason: string };
      expect(body.finish_reason).toBe('SUCCESS');
      expect(sizeOf(Buffer.from(body.image, 'base64'))).toEqual([640, 480]);
    }
  });

  it('refuses no prompt, no image and a mask of another size with a 400', async () => {
    expect((await inpaint({}, [['image', makePng(64, 64, 1)]])).status).toBe(400);
    expect((await inpaint({ prompt: 'x' }, [])).status).toBe(400);
    const response = await inpaint({ prompt: 'x' }, [['image', makePng(64, 64, 1)], ['mask', makePng(32, 32, 0)]]);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { errors: string[] }).errors[0]).toMatch(/^mask:/);
  });
});
