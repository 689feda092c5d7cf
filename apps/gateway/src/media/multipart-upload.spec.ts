import { EventEmitter } from 'node:events';
import { PassThrough } from 'node:stream';
import type { CallHandler, ExecutionContext, NestInterceptor } from '@nestjs/common';
import type { ServiceSettings } from '@igw/config';
import { lastValueFrom, of } from 'rxjs';
import { MediaFetcher } from './media-fetcher';
import { MultipartUpload } from './multipart-upload';

const BOUNDARY = 'unit-boundary';
const MAX_BYTES = 1_000;

function settings(): ServiceSettings {
  return { env: { MEDIA_FETCH_MAX_BYTES: MAX_BYTES, MEDIA_IN_FLIGHT_MAX_BYTES: 1_500, MEDIA_IN_FLIGHT_KEY_SHARE: 0.5 } } as ServiceSettings;
}

function form(parts: Array<{ name: string; value: string } | { name: string; filename: string; bytes: Buffer }>, close = true): Buffer {
  const pieces = parts.map((part) =>
    'value' in part
      ? Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="${part.name}"\r\n\r\n${part.value}\r\n`)
      : Buffer.concat([Buffer.from(`--${BOUNDARY}\r\ncontent-disposition: form-data; name="${part.name}"; filename="${part.filename}"\r\ncontent-type: audio/wav\r\n\r\n`), part.bytes, Buffer.from('\r\n')]),
  );
  return Buffer.concat([...pieces, Buffer.from(close ? `--${BOUNDARY}--\r\n` : '')]);
}

interface FakeExchange {
  request: PassThrough & Record<string, unknown>;
  response: EventEmitter & { headers: Record<string, string>; headersSent: boolean; set(name: string, value: string): void };
  destroyed: jest.Mock;
}

function exchange(body: Buffer | undefined, headers: Record<string, string> = {}, keyId = 'key-1', end = true): FakeExchange {
  const request = new PassThrough() as PassThrough & Record<string, unknown>;
  const destroyed = jest.fn();
  Object.assign(request, {
    headers: { 'content-type': `multipart/form-data; boundary=${BOUNDARY}`, ...(body ? { 'content-length': String(body.length) } : { 'transfer-encoding': 'chunked' }), ...headers },
    context: { auth: { keyId } },
    socket: { destroy: destroyed },
  });
  if (body) {
    if (end) request.end(body);
    else request.write(body);
  }
  const response = Object.assign(new EventEmitter(), {
    headers: {} as Record<string, string>,
    headersSent: false,
    set(name: string, value: string) {
      this.headers[name] = value;
    },
  });
  return { request, response, destroyed };
}

async function run(interceptor: NestInterceptor, fake: FakeExchange): Promise<void> {
  const context = { switchToHttp: () => ({ getRequest: () => fake.request, getResponse: () => fake.response }) } as unknown as ExecutionContext;
  const next: CallHandler = { handle: () => of('handled') };
  await lastValueFrom(interceptor.intercept(context, next) as ReturnType<CallHandler['handle']>);
}

describe('multipart uploads', () => {
  const Interceptor = MultipartUpload({ files: [{ name: 'file', maxCount: 1 }], numberFields: ['temperature'] });
  let fetcher: MediaFetcher;
  let interceptor: NestInterceptor;

  beforeEach(() => {
    fetcher = new MediaFetcher(settings());
    interceptor = new Interceptor(fetcher, settings());
  });

  it('puts the text fields in the body (numbers as numbers, repeated names as lists) and the file in uploads', async () => {
    const fake = exchange(
      form([
        { name: 'model', value: 'whisper' },
        { name: 'temperature', value: '0.5' },
        { name: 'timestamp_granularities[]', value: 'word' },
        { name: 'timestamp_granularities[]', value: 'segment' },
        { name: 'file', filename: 'a.wav', bytes: Buffer.alloc(600, 7) },
      ]),
    );
    await run(interceptor, fake);
    expect(fake.request.body).toEqual({ model: 'whisper', temperature: 0.5, timestamp_granularities: ['word', 'segment'] });
    expect(fake.request.uploads).toEqual({ file: [{ field: 'file', filename: 'a.wav', contentType: 'audio/wav', bytes: Buffer.alloc(600, 7) }] });
  });

  it('leaves a field that is not a number for the DTO to name', async () => {
    const fake = exchange(form([{ name: 'temperature', value: 'hot' }]));
    await run(interceptor, fake);
    expect(fake.request.body).toEqual({ temperature: 'hot' });
  });

  it('refuses a declared length past the limit with 413 without reading a byte, and closes the connection once answered', async () => {
    const fake = exchange(undefined, { 'content-length': String(MAX_BYTES + 2 * 1024 * 1024), 'transfer-encoding': '' });
    await expect(run(interceptor, fake)).rejects.toMatchObject({ status: 413, message: expect.stringMatching(/^Payload Too Large: the uploaded files are larger than the gateway's limit of 1000 bytes/) });
    expect(fake.request.readableFlowing).toBeNull();
    expect(fake.response.headers.connection).toBe('close');
    fake.response.emit('finish');
    expect(fake.destroyed).toHaveBeenCalled();
  });

  it('refuses a file that grows past the limit as it streams, at once, though the client is still sending', async () => {
    const fake = exchange(form([{ name: 'file', filename: 'a.wav', bytes: Buffer.alloc(MAX_BYTES + 1) }], false), { 'content-length': '' }, 'key-1', false);
    await expect(run(interceptor, fake)).rejects.toMatchObject({ status: 413 });
    expect(fake.request.writableEnded).toBe(false);
  });

  it("holds the upload in the key's share of the media budget until the response is over", async () => {
    const first = exchange(form([{ name: 'file', filename: 'a.wav', bytes: Buffer.alloc(800) }]));
    await run(interceptor, first);
    const second = exchange(form([{ name: 'file', filename: 'b.wav', bytes: Buffer.alloc(800) }]));
    await expect(run(interceptor, second)).rejects.toMatchObject({ status: 429, message: expect.stringContaining('MEDIA_IN_FLIGHT_KEY_SHARE') });
    second.response.emit('close');
    first.response.emit('close');
    await run(interceptor, exchange(form([{ name: 'file', filename: 'c.wav', bytes: Buffer.alloc(800) }])));
  });

  it('refuses a body that is not a form, a file field the route does not take, and a form cut short, with a 400', async () => {
    await expect(run(interceptor, exchange(Buffer.from('{}'), { 'content-type': 'application/json' }))).rejects.toMatchObject({ status: 400, message: expect.stringContaining('must be a multipart/form-data form') });
    await expect(run(interceptor, exchange(form([{ name: 'image', filename: 'a.png', bytes: Buffer.alloc(10) }])))).rejects.toMatchObject({
      status: 400,
      message: 'Body validation error! image: is not a file field of this route, or carries more files than it takes',
    });
    const cut = form([{ name: 'file', filename: 'a.wav', bytes: Buffer.alloc(100) }]).subarray(0, 120);
    await expect(run(interceptor, exchange(cut))).rejects.toMatchObject({ status: 400, message: expect.stringContaining('could not be read') });
  });
});
