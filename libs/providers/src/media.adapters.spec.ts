import { readFileSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import type { ProviderTarget } from './provider.types';
import { isRetriableUpstreamError } from './fallback';
import { findProvider, providerKind } from './registry';
import { RequestTranslationError, UpstreamHttpError, UpstreamProtocolError, UpstreamUnavailableError } from './upstream.errors';

// Every media adapter against its golden exchange (`<kind>/__fixtures__/*.json`): what the
// gateway hands the adapter, the exact HTTP request it must send (JSON, raw bytes or a
// multipart form, decoded here by the platform's own FormData parser), the upstream's answer
// and the normalised result. Buffers are written as base64 (`audioBase64`).

interface Fixture {
  description: string;
  target: ProviderTarget;
  request: Record<string, unknown> & { model: string; audioBase64?: string };
  wire: {
    method: string;
    path: string;
    headers: Record<string, string>;
    body?: unknown;
    bytesBase64?: string;
    multipart?: { fields: Record<string, string[]>; files: Array<{ field: string; filename: string; contentType: string; base64: string }> };
  };
  upstream: { status: number; contentType: string; json?: unknown; base64?: string };
  result: Record<string, unknown>;
}

interface Received {
  method: string;
  path: string;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

const OPTIONS = { timeoutMs: 5_000 };
let server: Server;
let base: string;
let received: Received[] = [];
let reply: Fixture['upstream'] = { status: 500, contentType: 'application/json', json: {} };

beforeAll(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({ method: req.method ?? '', path: req.url ?? '', headers: req.headers, body: Buffer.concat(chunks) });
      const body = reply.json !== undefined ? Buffer.from(JSON.stringify(reply.json)) : Buffer.from(reply.base64 ?? '', 'base64');
      res.writeHead(reply.status, { 'content-type': reply.contentType, 'content-length': body.length });
      res.end(body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  received = [];
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

function load(file: string): Fixture {
  return JSON.parse(readFileSync(path.join(__dirname, file), 'utf8')) as Fixture;
}

/** Runs the capability the fixture's file name says, through the registry as the gateway will. */
async function run(file: string, target: ProviderTarget, request: Fixture['request']): Promise<Record<string, unknown>> {
  const kind = findProvider(target.provider)!.kind;
  if (file.includes('/images-') || file.includes('/generate-')) {
    return { ...(await providerKind(kind).images!.generate(target, request as never, OPTIONS)) };
  }
  if (file.includes('/transcription-') || file.includes('/listen')) {
    const { audioBase64, ...rest } = request;
    return { ...(await providerKind(kind).transcription!.transcribe(target, { ...rest, audio: Buffer.from(audioBase64 ?? '', 'base64') } as never, OPTIONS)) };
  }
  const { audio, ...result } = await providerKind(kind).speech!.synthesize(target, request as never, OPTIONS);
  return { ...result, audioBase64: audio.toString('base64') };
}

async function multipartOf(sent: Received): Promise<NonNullable<Fixture['wire']['multipart']>> {
  const form = await new Response(sent.body, { headers: { 'content-type': String(sent.headers['content-type']) } }).formData();
  const fields: Record<string, string[]> = {};
  const files: NonNullable<Fixture['wire']['multipart']>['files'] = [];
  for (const [name, value] of form.entries()) {
    if (typeof value === 'string') (fields[name] ??= []).push(value);
    else files.push({ field: name, filename: value.name, contentType: value.type, base64: Buffer.from(await value.arrayBuffer()).toString('base64') });
  }
  return { fields, files };
}

describe.each([
  'openai/__fixtures__/images-gpt-image.json',
  'openai/__fixtures__/images-dall-e-url.json',
  'openai/__fixtures__/transcription-whisper.json',
  'openai/__fixtures__/transcription-gpt-4o.json',
  'openai/__fixtures__/speech.json',
  'deepgram/__fixtures__/listen.json',
  'deepgram/__fixtures__/speak.json',
  'stability/__fixtures__/generate-core.json',
])('golden exchange %s', (file) => {
  const fixture = load(file);

  it(`${fixture.description}`, async () => {
    reply = fixture.upstream;
    const target = { ...fixture.target, baseUrl: fixture.target.baseUrl.replace('{base}', base) };
    const result = await run(file, target, fixture.request);
    expect(result).toEqual(fixture.result);
    expect(received).toHaveLength(1);
    const [sent] = received;
    expect({ method: sent.method, path: sent.path }).toEqual({ method: fixture.wire.method, path: fixture.wire.path });
    expect(sent.headers).toMatchObject(fixture.wire.headers);
    if (fixture.wire.body !== undefined) expect(JSON.parse(sent.body.toString('utf8'))).toEqual(fixture.wire.body);
    if (fixture.wire.bytesBase64 !== undefined) expect(sent.body.toString('base64')).toBe(fixture.wire.bytesBase64);
    if (fixture.wire.multipart !== undefined) {
      expect(sent.headers['content-type']).toMatch(/^multipart\/form-data; boundary=/);
      expect(await multipartOf(sent)).toEqual(fixture.wire.multipart);
    }
  });
});

describe('media adapters', () => {
  const target = (provider: string, model: string, suffix = ''): ProviderTarget => ({ provider, model, baseUrl: `${base}${suffix}`, apiKey: 'k' });

  it('exist for the kinds with such an API, and not for the others', () => {
    expect(providerKind('openai').images).toBeDefined();
    expect(providerKind('stability').images).toBeDefined();
    expect(providerKind('openai').transcription).toBeDefined();
    expect(providerKind('deepgram').transcription).toBeDefined();
    expect(providerKind('openai').speech).toBeDefined();
    expect(providerKind('deepgram').speech).toBeDefined();
    for (const kind of ['anthropic', 'google', 'deepgram'] as const) expect(providerKind(kind).images).toBeUndefined();
    for (const kind of ['anthropic', 'google', 'stability'] as const) {
      expect(providerKind(kind).transcription).toBeUndefined();
      expect(providerKind(kind).speech).toBeUndefined();
    }
  });

  it('sends no chat to a media-only provider: the attempt fails as an unusable source, before any request', async () => {
    for (const provider of ['deepgram', 'stability']) {
      const definition = findProvider(provider)!;
      expect(providerKind(definition.kind).embeddings).toBeUndefined();
      const failure = await providerKind(definition.kind).chat
        .chat(target(provider, 'm'), { model: 'm', messages: [] }, OPTIONS)
        .catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(UpstreamUnavailableError);
      expect(isRetriableUpstreamError(failure)).toBe(true);
      await expect(providerKind(definition.kind).chat.stream(target(provider, 'm'), { model: 'm', messages: [] }, OPTIONS)).rejects.toThrow(/no chat completions API/);
    }
    expect(received).toHaveLength(0);
  });

  it("passes Deepgram's and Stability's error bodies on as the reason", async () => {
    reply = { status: 400, contentType: 'application/json', json: { err_code: 'Bad Request', err_msg: 'corrupt or unsupported data', request_id: 'r' } };
    const listen = providerKind('deepgram').transcription!.transcribe(target('deepgram', 'nova-3'), { model: 'nova-3', audio: Buffer.from('x'), contentType: 'audio/wav' }, OPTIONS);
    await expect(listen).rejects.toBeInstanceOf(UpstreamHttpError);
    await expect(listen).rejects.toMatchObject({ status: 400, upstreamMessage: 'corrupt or unsupported data' });
    reply = { status: 403, contentType: 'application/json', json: { id: 'x', name: 'content_moderation', errors: ['prompt: flagged', 'try again'] } };
    const generate = providerKind('stability').images!.generate(target('stability', 'core'), { model: 'core', prompt: 'p' }, OPTIONS);
    await expect(generate).rejects.toMatchObject({ status: 403, upstreamMessage: 'prompt: flagged; try again' });
  });

  it('refuses a speech answer that is not audio, and an images answer without images', async () => {
    reply = { status: 200, contentType: 'application/json', json: { error: 'not audio' } };
    await expect(providerKind('openai').speech!.synthesize(target('openai', 'tts-1', '/v1'), { model: 'tts-1', text: 'hi' }, OPTIONS)).rejects.toBeInstanceOf(UpstreamProtocolError);
    reply = { status: 200, contentType: 'audio/wav', base64: '' };
    await expect(providerKind('deepgram').speech!.synthesize(target('deepgram', 'aura-2'), { model: 'aura-2', text: 'hi' }, OPTIONS)).rejects.toThrow(/no audio/);
    reply = { status: 200, contentType: 'application/json', json: { data: [] } };
    await expect(providerKind('openai').images!.generate(target('openai', 'gpt-image-1', '/v1'), { model: 'gpt-image-1', prompt: 'p' }, OPTIONS)).rejects.toBeInstanceOf(UpstreamProtocolError);
  });

  it('refuses an n Stability cannot serve before any call', async () => {
    for (const n of [0, 11, 1.5]) {
      await expect(providerKind('stability').images!.generate(target('stability', 'core'), { model: 'core', prompt: 'p', n }, OPTIONS)).rejects.toBeInstanceOf(RequestTranslationError);
    }
    expect(received).toHaveLength(0);
  });

  it('makes n Stability calls for n images, one image each', async () => {
    reply = load('stability/__fixtures__/generate-core.json').upstream;
    const result = await providerKind('stability').images!.generate(target('stability', 'sd3.5-large'), { model: 'sd3.5-large', prompt: 'p', n: 3 }, OPTIONS);
    expect(result.images).toHaveLength(3);
    expect(result.usage).toMatchObject({ images: 3, width: 4, height: 6 });
    expect(received.map((sent) => sent.path)).toEqual(Array(3).fill('/v2beta/stable-image/generate/sd3'));
    const form = await multipartOf(received[0]);
    expect(form.fields).toMatchObject({ model: ['sd3.5-large'], prompt: ['p'], output_format: ['png'] });
    expect(form.fields.aspect_ratio).toBeUndefined();
  });
});
