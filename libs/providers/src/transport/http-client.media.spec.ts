import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { UpstreamHttpError, UpstreamLimitExceededError, UpstreamTimeoutError, UpstreamUnavailableError } from '../upstream.errors';
import { encodeMultipart, postBytes, postJsonForBytes, postMultipart } from './http-client';
import { DEFAULT_UPSTREAM_LIMITS } from './upstream-limits';

// The binary and multipart exchanges the media adapters use: the same limits, timeouts,
// cancellation and error mapping as postJson, against a real local server.

type Route = (request: IncomingMessage, body: Buffer, response: ServerResponse) => void;

let server: Server;
let base: string;
const routes = new Map<string, Route>();

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (piece: Buffer) => chunks.push(piece));
    request.on('end', () => {
      response.on('error', () => undefined);
      routes.get(request.url ?? '')?.(request, Buffer.concat(chunks), response);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterEach(() => {
  routes.clear();
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const common = (path: string) => ({ provider: 'test', url: `${base}${path}`, headers: { authorization: 'Token k' }, timeoutMs: 2_000 });
const audio = Buffer.from([0, 1, 2, 0xff, 0xfe, 13, 10, 45, 45]);

describe('postBytes', () => {
  it('sends the bytes as they are with their content type, and parses the JSON answer', async () => {
    let seen: { headers: IncomingMessage['headers']; body: Buffer } | undefined;
    routes.set('/listen?model=m', (request, body, response) => {
      seen = { headers: request.headers, body };
      response.writeHead(200, { 'content-type': 'application/json' });
      response.end('{"ok":true}');
    });
    expect(await postBytes({ ...common('/listen?model=m'), body: audio, contentType: 'audio/wav' })).toEqual({ ok: true });
    expect(seen!.body.equals(audio)).toBe(true);
    expect(seen!.headers).toMatchObject({ 'content-type': 'audio/wav', accept: 'application/json', authorization: 'Token k', 'content-length': String(audio.length) });
  });

  it('maps an error status, a refused connection and a timeout like postJson', async () => {
    routes.set('/bad', (_request, _body, response) => {
      response.writeHead(400, { 'content-type': 'application/json' });
      response.end('{"err_code":"Bad Request","err_msg":"corrupt audio"}');
    });
    await expect(postBytes({ ...common('/bad'), body: audio, contentType: 'audio/wav' })).rejects.toMatchObject({ status: 400, upstreamMessage: 'corrupt audio' });
    await expect(postBytes({ ...common('/x'), url: 'http://127.0.0.1:1/x', body: audio, contentType: 'audio/wav' })).rejects.toBeInstanceOf(UpstreamUnavailableError);
    routes.set('/silent', () => undefined);
    await expect(postBytes({ ...common('/silent'), timeoutMs: 200, body: audio, contentType: 'audio/wav' })).rejects.toBeInstanceOf(UpstreamTimeoutError);
  });
});

describe('postMultipart', () => {
  it('sends fields (a list repeats its name) and files that the platform parser reads back exactly', async () => {
    let form: FormData | undefined;
    let type = '';
    let headers: IncomingMessage['headers'] = {};
    routes.set('/upload', (request, body, response) => {
      type = String(request.headers['content-type']);
      headers = request.headers;
      expect(Number(headers['content-length'])).toBe(body.length);
      void new Response(body, { headers: { 'content-type': type } }).formData().then((parsed) => {
        form = parsed;
        response.writeHead(200, { 'content-type': 'application/json' });
        response.end('{"text":"hi"}');
      });
    });
    const answer = await postMultipart({
      ...common('/upload'),
      fields: { model: 'whisper-1', 'timestamp_granularities[]': ['word', 'segment'], language: undefined, prompt: 'say "hi"\r\n' },
      files: [{ field: 'file', filename: 'a "b".wav', contentType: 'audio/wav', data: audio }],
    });
    expect(answer).toEqual({ text: 'hi' });
    expect(type).toMatch(/^multipart\/form-data; boundary=----igw[0-9a-f]{24}$/);
    // Its length announced, not chunked: not every upstream takes a chunked upload.
    expect(headers['transfer-encoding']).toBeUndefined();
    expect(form!.get('model')).toBe('whisper-1');
    expect(form!.getAll('timestamp_granularities[]')).toEqual(['word', 'segment']);
    expect(form!.has('language')).toBe(false);
    expect(form!.get('prompt')).toBe('say "hi"\r\n');
    const file = form!.get('file') as File;
    expect(file.type).toBe('audio/wav');
    expect(Buffer.from(await file.arrayBuffer()).equals(audio)).toBe(true);
  });

  it('uses a fresh boundary each time', () => {
    expect(encodeMultipart({}, []).contentType).not.toBe(encodeMultipart({}, []).contentType);
  });

  it("sends a file's own bytes as one of its parts: an upload holds the audio once, not a copy of it", () => {
    const fetched = Buffer.from(new ArrayBuffer(64 * 1024));
    fetched.fill(7);
    const { parts } = encodeMultipart({ model: 'whisper-1' }, [{ field: 'file', filename: 'a.mp3', contentType: 'audio/mpeg', data: fetched }]);
    expect(parts.filter((part) => part.buffer === fetched.buffer)).toEqual([fetched]);
    expect(parts.reduce((total, part) => total + part.length, 0) - fetched.length).toBeLessThan(1_024);
  });
});

describe('postJsonForBytes', () => {
  it('returns the answer bytes and their content type', async () => {
    const wav = Buffer.from('RIFF\x00\x00\x00\x00WAVE', 'latin1');
    routes.set('/speech', (request, body, response) => {
      expect(JSON.parse(body.toString('utf8'))).toEqual({ text: 'hi' });
      expect(request.headers.accept).toBe('audio/*');
      response.writeHead(200, { 'content-type': 'audio/wav; codec=1' });
      response.end(wav);
    });
    const spoken = await postJsonForBytes({ ...common('/speech'), body: { text: 'hi' } }, 'audio/*');
    expect(spoken.contentType).toBe('audio/wav');
    expect(spoken.body.equals(wav)).toBe(true);

    routes.set('/image.png', (_request, _body, response) => {
      response.writeHead(200, { 'Content-Type': 'IMAGE/PNG' });
      response.end(Buffer.from([0x89, 0x50]));
    });
    expect(await postJsonForBytes({ ...common('/image.png'), body: {} })).toEqual({ body: Buffer.from([0x89, 0x50]), contentType: 'image/png' });
  });

  it('refuses an answer past maxResponseBytes and closes the connection', async () => {
    routes.set('/endless', (_request, _body, response) => {
      response.writeHead(200, { 'content-type': 'audio/wav' });
      const piece = Buffer.alloc(16 * 1024);
      const write = () => {
        while (!response.destroyed && response.write(piece));
        if (!response.destroyed) response.once('drain', write);
      };
      write();
    });
    const limits = { ...DEFAULT_UPSTREAM_LIMITS, maxResponseBytes: 64 * 1024 };
    const failed = postJsonForBytes({ ...common('/endless'), body: { text: 'hi' }, limits });
    await expect(failed).rejects.toBeInstanceOf(UpstreamLimitExceededError);
    await expect(failed).rejects.toMatchObject({ upstreamCharged: true });
  });

  it('stops when the caller aborts, with an AbortError', async () => {
    let arrived!: () => void;
    const reached = new Promise<void>((resolve) => (arrived = resolve));
    // Never answers: the call can only end by the abort.
    routes.set('/slow', () => arrived());
    const controller = new AbortController();
    const pending = postJsonForBytes({ ...common('/slow'), body: {}, signal: controller.signal });
    await reached;
    controller.abort();
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('passes an error status on with its reason', async () => {
    routes.set('/gone', (_request, _body, response) => {
      response.writeHead(404, { 'content-type': 'application/xml' });
      response.end('<Error>BlobNotFound</Error>');
    });
    await expect(postJsonForBytes({ ...common('/gone'), body: {} })).rejects.toEqual(expect.any(UpstreamHttpError));
    await expect(postJsonForBytes({ ...common('/gone'), body: {} })).rejects.toMatchObject({ status: 404, upstreamMessage: '<Error>BlobNotFound</Error>' });
  });
});
