import { createHmac } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest } from 'node:http';
import { tmpdir } from 'node:os';
import path from 'node:path';
import OpenAI, { toFile } from 'openai';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { makePng } from '../tools/emulator/src/media/png';
import { makeWav, readWav, SAMPLE_TEXT } from '../tools/emulator/src/media/wav';
import { call, expectErrorBody } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness, type UsageEntry } from './support/standalone-harness';

/** media-catalogue.yaml at 2,000,000 credits per USD: a character 20 credits, a second of audio 200, a 1024x1024 GPT Image at auto quality 60,000. */
const CREDITS_PER_CHARACTER = 20;
const CREDITS_PER_SECOND = 200;
const IMAGE_CREDITS = 60_000;
/** Stable Image Core: $0.03 an image, whatever its size. */
const STABILITY_CREDITS = 60_000;
const MAX_BYTES = 200_000;
const URL_SECRET = 'e2e-signing-key-for-image-links-0123456789';

interface ErrorBody {
  error: { message: string; type: string; param: string | null; code: string | null };
  message: string;
}

/**
 * OpenAI's audio and image-edit routes through the official `openai` SDK against the standalone
 * gateway (the emulator plays OpenAI, Deepgram and Stability): speech, transcriptions of a real
 * local file in every response_format, translations, image edits with a mask, and image links
 * (the upstream's, or the gateway's signed ones). Each billed call is checked in the ledger and
 * the balance; hostile uploads are bounded and bill nothing.
 */
describe("OpenAI's audio and image-edit routes, with the openai SDK", () => {
  let emulator: RunningEmulator;
  let app: StandaloneHarness;
  let folder: string;
  const sample = makeWav({ seconds: 2, text: SAMPLE_TEXT, frequency: 330 });

  beforeAll(async () => {
    emulator = await startEmulator();
    folder = await mkdtemp(path.join(tmpdir(), 'igw-openai-audio-'));
    app = await startStandaloneHarness({
      ...emulatedProviders(emulator.url),
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/media-catalogue.yaml'),
      RATE_LIMIT_RPM: '100000',
      MEDIA_FETCH_MAX_BYTES: String(MAX_BYTES),
      MEDIA_URL_SECRET: URL_SECRET,
      STT_MAX_AUDIO_SECONDS: '600',
    });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await emulator?.close();
    if (folder) await rm(folder, { recursive: true, force: true });
  });

  const clientOf = (key: string) => new OpenAI({ apiKey: key, baseURL: `${app.gateway}/v1`, maxRetries: 0 });
  const ledger = (account: string): Promise<UsageEntry[]> => app.usageEntries(account, 50);
  const ledgerHas = (account: string, count: number) => eventually(async () => (await ledger(account)).length === count, 20_000, 50);
  const upstreamCalls = (route: string) => emulator.requests.filter((request) => request.path.includes(route)).length;

  describe('audio.speech.create', () => {
    it('answers the audio bytes in the format asked for, billed per character as /tts', async () => {
      const { accountId, key } = await app.paidKey(1_000_000);
      const input = 'Hello from the gateway.';
      const response = await clientOf(key).audio.speech.create({ model: 'tts', input, voice: 'nova', response_format: 'wav', speed: 1.5, instructions: 'Calm and slow.' });
      expect(response.headers.get('content-type')).toBe('audio/wav');
      const audio = Buffer.from(await response.arrayBuffer());
      expect(readWav(audio)?.text).toBe(input);
      const credits = input.length * CREDITS_PER_CHARACTER;
      expect(Number(response.headers.get('x-credits-used'))).toBe(credits);
      expect(Number(response.headers.get('x-usd-spent'))).toBe((input.length * 10) / 1e6);
      expect(emulator.requests.at(-1)!.body).toEqual({ model: 'tts-1', input, voice: 'nova', response_format: 'wav', speed: 1.5, instructions: 'Calm and slow.' });

      // OpenAI's default format: mp3.
      const mp3 = await clientOf(key).audio.speech.create({ model: 'tts', input: 'Hi', voice: 'alloy' });
      expect(mp3.headers.get('content-type')).toBe('audio/mpeg');
      expect((await mp3.arrayBuffer()).byteLength).toBeGreaterThan(0);

      await ledgerHas(accountId, 2);
      expect((await ledger(accountId)).map((entry) => [entry.endpoint, entry.model, entry.units, entry.credits])).toEqual([
        ['tts', 'test/tts', { characters: 2 }, String(2 * CREDITS_PER_CHARACTER)],
        ['tts', 'test/tts', { characters: input.length }, String(credits)],
      ]);
      expect(await app.balance(key)).toBe(1_000_000 - credits - 2 * CREDITS_PER_CHARACTER);
    });

    it('refuses instructions on a source that cannot take them, and streamed audio, before any upstream call', async () => {
      const { key } = await app.paidKey(1_000_000);
      const before = upstreamCalls('/speak') + upstreamCalls('/audio/speech');
      await expect(clientOf(key).audio.speech.create({ model: 'aura', input: 'Hi', voice: 'orion', instructions: 'Whisper.' })).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining("instructions: no source of 'test/aura' takes speaking instructions"),
      });
      await expect(clientOf(key).audio.speech.create({ model: 'tts', input: 'Hi', voice: 'alloy', stream_format: 'sse' })).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining("stream_format: Expected 'audio' (the audio bytes in the answer): speech as server-sent events ('sse') is not served. Received 'sse'"),
      });
      expect(upstreamCalls('/speak') + upstreamCalls('/audio/speech')).toBe(before);
    });
  });

  describe('audio.transcriptions.create and audio.translations.create', () => {
    it('transcribes a local file in every response_format, each billed by the length read from its bytes', async () => {
      const { accountId, key } = await app.paidKey(1_000_000);
      const client = clientOf(key);
      const file = path.join(folder, 'sample.wav');
      await writeFile(file, sample);

      const json = await client.audio.transcriptions.create({ model: 'whisper', file: createReadStream(file), language: 'en', prompt: 'fox', temperature: 0.2 }).withResponse();
      expect(json.data).toEqual({ text: SAMPLE_TEXT, usage: { type: 'duration', seconds: 2 } });
      expect(Number(json.response.headers.get('x-credits-used'))).toBe(2 * CREDITS_PER_SECOND);
      const upload = emulator.requests.at(-1)!;
      expect(upload.body).toMatchObject({ model: 'whisper-1', language: 'en', prompt: 'fox', temperature: '0.2' });
      expect(upload.files).toEqual([expect.objectContaining({ field: 'file', filename: 'sample.wav' })]);

      const text = await client.audio.transcriptions.create({ model: 'whisper', file: await toFile(sample, 'sample.wav'), response_format: 'text' }).withResponse();
      expect(text.data).toBe(`${SAMPLE_TEXT}\n`);
      expect(text.response.headers.get('content-type')).toMatch(/^text\/plain/);
      const srt = await client.audio.transcriptions.create({ model: 'whisper', file: await toFile(sample, 'sample.wav'), response_format: 'srt' });
      expect(srt).toBe(`1\n00:00:00,000 --> 00:00:02,000\n${SAMPLE_TEXT}\n\n`);
      const vtt = await client.audio.transcriptions.create({ model: 'whisper', file: await toFile(sample, 'sample.wav'), response_format: 'vtt' });
      expect(vtt).toBe(`WEBVTT\n\n00:00:00.000 --> 00:00:02.000\n${SAMPLE_TEXT}\n\n`);
      const verbose = await client.audio.transcriptions.create({ model: 'whisper', file: await toFile(sample, 'sample.wav'), response_format: 'verbose_json', timestamp_granularities: ['word', 'segment'] });
      expect(verbose).toMatchObject({ task: 'transcribe', language: 'english', duration: 2, text: SAMPLE_TEXT, usage: { type: 'duration', seconds: 2 } });
      expect(verbose.words!.map((word) => word.word)).toEqual(SAMPLE_TEXT.split(' '));
      expect(verbose.segments).toEqual([expect.objectContaining({ id: 0, start: 0, end: 2, text: ` ${SAMPLE_TEXT}` })]);
      // A model that answers tokens, not seconds (GPT-4o transcribe): billed by the WAV's own length; verbose_json still served.
      const tokens = await client.audio.transcriptions.create({ model: 'test/transcribe', file: await toFile(sample, 'sample.wav'), response_format: 'verbose_json' });
      expect(tokens).toMatchObject({ text: SAMPLE_TEXT, duration: 2, segments: [{ id: 0, start: 0, end: 2, text: SAMPLE_TEXT }] });

      await ledgerHas(accountId, 6);
      const entries = await ledger(accountId);
      expect(entries.map((entry) => [entry.endpoint, entry.units, entry.credits])).toEqual(Array.from({ length: 6 }, () => ['stt', { audio_seconds: 2 }, String(2 * CREDITS_PER_SECOND)]));
      expect(await app.balance(key)).toBe(1_000_000 - 6 * 2 * CREDITS_PER_SECOND);
    });

    it('translates with Whisper, and refuses models whose sources cannot translate with a 400 naming the model', async () => {
      const { accountId, key } = await app.paidKey(1_000_000);
      const client = clientOf(key);
      const translated = await client.audio.translations.create({ model: 'whisper', file: await toFile(sample, 'speech.wav'), response_format: 'verbose_json' });
      expect(translated).toMatchObject({ task: 'translate', language: 'english', text: SAMPLE_TEXT, duration: 2 });
      expect(emulator.requests.at(-1)!.path).toBe('/v1/audio/translations');
      const before = upstreamCalls('/audio/translations') + upstreamCalls('/v1/listen');
      await expect(client.audio.translations.create({ model: 'nova', file: await toFile(sample, 'speech.wav') })).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining("model: 'test/nova' cannot translate speech: Deepgram has no translation API"),
      });
      await expect(client.audio.translations.create({ model: 'test/transcribe', file: await toFile(sample, 'speech.wav') })).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining('gpt-4o-mini-transcribe does not translate'),
      });
      expect(upstreamCalls('/audio/translations') + upstreamCalls('/v1/listen')).toBe(before);
      await ledgerHas(accountId, 1);
      expect((await ledger(accountId))[0]).toMatchObject({ endpoint: 'stt', model: 'test/whisper', units: { audio_seconds: 2 } });
      expect(await app.balance(key)).toBe(1_000_000 - 2 * CREDITS_PER_SECOND);
    });
  });

  describe('hostile uploads', () => {
    it('answers 413 to an upload over MEDIA_FETCH_MAX_BYTES, declared or streamed, before anything is sent, billing nothing', async () => {
      const { accountId, key } = await app.paidKey(1_000_000);
      const big = makeWav({ seconds: 5 });
      expect(big.length).toBeGreaterThan(MAX_BYTES);
      const before = upstreamCalls('/audio/transcriptions');
      await expect(clientOf(key).audio.transcriptions.create({ model: 'whisper', file: await toFile(big, 'long.wav') })).rejects.toMatchObject({
        status: 413,
        message: expect.stringContaining("Payload Too Large: the uploaded files are larger than the gateway's limit of"),
      });
      // Streamed without a length: refused once the bytes pass the limit, the connection closed.
      const long = makeWav({ seconds: 20 });
      const streamed = await chunkedUpload(`${app.gateway}/v1/audio/transcriptions`, key, long);
      expect(streamed.status).toBe(413);
      expect(JSON.parse(streamed.body).error.message).toMatch(/^Payload Too Large/);
      expect(streamed.bytesSent).toBeLessThan(long.length / 2);
      expect(upstreamCalls('/audio/transcriptions')).toBe(before);
      // The gateway still takes a file of the largest size from the same key: the refused ones gave their room back.
      const fits = await clientOf(key).audio.transcriptions.create({ model: 'whisper', file: await toFile(makeWav({ seconds: 4 }), 'fits.wav') });
      expect(fits.text).toContain('Emulated transcript of 4 seconds');
      await ledgerHas(accountId, 1);
      expect((await ledger(accountId)).map((entry) => entry.units)).toEqual([{ audio_seconds: 4 }]);
    });

    it("passes on the upstream's refusal of a file that is not audio, and a form without a file is the client's 400; nothing billed", async () => {
      const { accountId, key } = await app.paidKey(1_000_000);
      await expect(clientOf(key).audio.transcriptions.create({ model: 'whisper', file: await toFile(Buffer.from('just some notes\n'), 'notes.txt') })).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining('Invalid file format'),
      });
      await expect(clientOf(key).audio.transcriptions.create({ model: 'whisper', file: await toFile(Buffer.from('RIFF\x00\x00\x00\x00WAVEjunk'), 'broken.wav') })).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining('Audio file might be corrupted'),
      });
      const form = new FormData();
      form.append('model', 'whisper');
      const noFile = await fetch(`${app.gateway}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: form });
      expectErrorBody({ status: noFile.status, headers: noFile.headers, body: await noFile.json() }, 400, '/v1/audio/transcriptions', /^Body validation error! file: Expected an audio file in the form's file field\. Received nothing$/);
      const json = await call(`${app.gateway}/v1/audio/transcriptions`, { token: key, body: { model: 'whisper' } });
      expectErrorBody(json, 400, '/v1/audio/transcriptions', /multipart\/form-data/);
      const wrongFormat = new FormData();
      wrongFormat.append('model', 'whisper');
      wrongFormat.append('response_format', 'xml');
      wrongFormat.append('temperature', 'hot');
      wrongFormat.append('file', new Blob([sample]), 'sample.wav');
      const refused = await fetch(`${app.gateway}/v1/audio/transcriptions`, { method: 'POST', headers: { authorization: `Bearer ${key}` }, body: wrongFormat });
      const body = (await refused.json()) as ErrorBody;
      expect(refused.status).toBe(400);
      expect(body.message).toContain("response_format: Expected one of 'json', 'text', 'srt', 'vtt', 'verbose_json'. Received 'xml'");
      expect(body.message).toContain("temperature: Expected a number. Received string 'hot'");
      // Nothing was transcribed: the account was never charged.
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await ledger(accountId)).toEqual([]);
      expect(await app.balance(key)).toBe(1_000_000);
    });

    it('bills nothing for a client that leaves mid-upload, and sends nothing upstream', async () => {
      const { accountId, key } = await app.paidKey(1_000_000);
      const before = upstreamCalls('/audio/transcriptions');
      const boundary = 'igw-e2e-boundary';
      const head = Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="model"\r\n\r\nwhisper\r\n--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.wav"\r\ncontent-type: audio/wav\r\n\r\n`);
      await new Promise<void>((resolve) => {
        const upload = httpRequest(`${app.gateway}/v1/audio/transcriptions`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'content-length': String(head.length + sample.length + 100) },
        });
        upload.on('error', () => resolve());
        upload.write(Buffer.concat([head, sample.subarray(0, 40_000)]), () => {
          setTimeout(() => {
            upload.destroy();
            resolve();
          }, 200);
        });
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(upstreamCalls('/audio/transcriptions')).toBe(before);
      expect(await ledger(accountId)).toEqual([]);
      expect(await app.balance(key)).toBe(1_000_000);
    });
  });

  describe('images.edit and response_format url', () => {
    const image = makePng(1024, 1024, 7);
    const mask = makePng(1024, 1024, 0);

    it('edits an image with a mask (OpenAI, Stability inpaint), billed per image as the catalogue prices the model', async () => {
      const { accountId, key } = await app.paidKey(1_000_000);
      const edited = await clientOf(key).images.edit({ model: 'image', image: await toFile(image, 'photo.png', { type: 'image/png' }), mask: await toFile(mask, 'mask.png', { type: 'image/png' }), prompt: 'Add a red hat', size: '1024x1024' });
      const bytes = Buffer.from(edited.data![0].b64_json!, 'base64');
      expect(bytes.readUInt32BE(0)).toBe(0x89504e47);
      expect([bytes.readUInt32BE(16), bytes.readUInt32BE(20)]).toEqual([1024, 1024]);
      const upstream = emulator.requests.at(-1)!;
      expect(upstream.path).toBe('/v1/images/edits');
      expect(upstream.body).toMatchObject({ model: 'gpt-image-1', prompt: 'Add a red hat', size: '1024x1024', quality: 'auto' });
      expect(upstream.files!.map((file) => [file.field, file.filename, file.contentType])).toEqual([
        ['image', 'photo.png', 'image/png'],
        ['mask', 'mask.png', 'image/png'],
      ]);
      // Two images at once go as image[].
      await clientOf(key).images.edit({ model: 'image', image: [await toFile(image, 'a.png', { type: 'image/png' }), await toFile(image, 'b.png', { type: 'image/png' })], prompt: 'Merge them' });
      expect(emulator.requests.at(-1)!.files!.map((file) => file.field)).toEqual(['image[]', 'image[]']);
      // Stability inpaints: the image and mask go to its edit route, the answer is the image's size.
      const inpainted = await clientOf(key).images.edit({ model: 'stability', image: await toFile(makePng(512, 512, 1), 'photo.png', { type: 'image/png' }), mask: await toFile(makePng(512, 512, 0), 'mask.png', { type: 'image/png' }), prompt: 'A door' });
      const inpaintedBytes = Buffer.from(inpainted.data![0].b64_json!, 'base64');
      expect([inpaintedBytes.readUInt32BE(16), inpaintedBytes.readUInt32BE(20)]).toEqual([512, 512]);
      expect(emulator.requests.at(-1)!.path).toBe('/v2beta/stable-image/edit/inpaint');
      expect(emulator.requests.at(-1)!.files!.map((file) => file.field)).toEqual(['image', 'mask']);
      await ledgerHas(accountId, 3);
      expect((await ledger(accountId)).map((entry) => [entry.endpoint, entry.model, entry.units, entry.credits])).toEqual([
        ['images.edits', 'test/stability', { images: 1 }, String(STABILITY_CREDITS)],
        ['images.edits', 'test/image', { images: 1 }, String(IMAGE_CREDITS)],
        ['images.edits', 'test/image', { images: 1 }, String(IMAGE_CREDITS)],
      ]);
      expect(await app.balance(key)).toBe(1_000_000 - 2 * IMAGE_CREDITS - STABILITY_CREDITS);
    });

    it('refuses models whose sources cannot edit, and files that are not images, with a 400 naming them', async () => {
      const { accountId, key } = await app.paidKey(1_000_000);
      const client = clientOf(key);
      const png = await toFile(image, 'photo.png', { type: 'image/png' });
      await expect(client.images.edit({ model: 'dalle', image: png, prompt: 'x' })).rejects.toMatchObject({ status: 400, message: expect.stringContaining("model: 'test/dalle' cannot edit images: dall-e-3 has no image edit API") });
      await expect(client.images.edit({ model: 'stability', image: [png, png], prompt: 'x' })).rejects.toMatchObject({ status: 400, message: expect.stringContaining('Stability edits one image at a time') });
      await expect(client.images.edit({ model: 'image', image: await toFile(Buffer.from('not an image'), 'photo.png'), prompt: 'x' })).rejects.toMatchObject({
        status: 400,
        message: expect.stringContaining("image: 'photo.png' is not a PNG, JPEG or WebP image"),
      });
      await new Promise((resolve) => setTimeout(resolve, 300));
      expect(await ledger(accountId)).toEqual([]);
    });

    it("answers links: the upstream's own for DALL·E 3, else a signed gateway link that works for an hour and refuses any change", async () => {
      const { accountId, key } = await app.paidKey(1_000_000);
      const client = clientOf(key);
      const dalle = await client.images.generate({ model: 'dalle', prompt: 'a link please', response_format: 'url' });
      expect(dalle.data![0].url).toMatch(new RegExp(`^${emulator.url}/media/images/1024x1024/\\d+\\.png$`));
      expect(dalle.data![0].revised_prompt).toBe('a link please');
      expect(emulator.requests.at(-1)!.body).toMatchObject({ model: 'dall-e-3', response_format: 'url' });

      const hosted = await client.images.generate({ model: 'image', prompt: 'a lighthouse', size: '1024x1024', quality: 'low', response_format: 'url' });
      const link = new URL(hosted.data![0].url!);
      expect(link.origin).toBe(app.gateway);
      expect(link.pathname).toMatch(/^\/v1\/images\/hosted\/[0-9a-f]{32}$/);
      expect(Number(link.searchParams.get('expires')) - Date.now() / 1000).toBeGreaterThan(3590);
      expect(emulator.requests.at(-1)!.body).not.toHaveProperty('response_format');
      const fetched = await fetch(link);
      expect(fetched.status).toBe(200);
      expect(fetched.headers.get('content-type')).toBe('image/png');
      const bytes = Buffer.from(await fetched.arrayBuffer());
      expect([bytes.readUInt32BE(16), bytes.readUInt32BE(20)]).toEqual([1024, 1024]);

      const tampered = new URL(link);
      tampered.searchParams.set('signature', `${link.searchParams.get('signature')!.slice(0, -2)}AA`);
      const forged = await call(tampered.toString());
      expectErrorBody(forged, 403, tampered.pathname, /^Forbidden: this image link is not one the gateway signed/);
      const extended = new URL(link);
      extended.searchParams.set('expires', String(Number(link.searchParams.get('expires')) + 3600));
      expect((await call(extended.toString())).status).toBe(403);
      // Signed as the gateway signs, but an hour past: gone.
      const id = link.pathname.split('/').at(-1)!;
      const past = Math.floor(Date.now() / 1000) - 1;
      const expired = await call(`${app.gateway}/v1/images/hosted/${id}?expires=${past}&signature=${createHmac('sha256', URL_SECRET).update(`${id}.${past}`).digest('base64url')}`);
      expectErrorBody(expired, 404, link.pathname, /^Not Found: this image link expired/);

      await ledgerHas(accountId, 2);
      expect((await ledger(accountId)).map((entry) => [entry.model, entry.units])).toEqual([
        ['test/image', { images: 1 }],
        ['test/dalle', { images: 1 }],
      ]);
    });
  });
});

/** POSTs `audio` as a multipart form in chunks, without a length: what the server answers and how much was written before it did. */
function chunkedUpload(url: string, key: string, audio: Buffer): Promise<{ status: number; body: string; bytesSent: number }> {
  const boundary = 'igw-e2e-chunked';
  const head = Buffer.from(`--${boundary}\r\ncontent-disposition: form-data; name="model"\r\n\r\nwhisper\r\n--${boundary}\r\ncontent-disposition: form-data; name="file"; filename="a.wav"\r\ncontent-type: audio/wav\r\n\r\n`);
  const body = Buffer.concat([head, audio, Buffer.from(`\r\n--${boundary}--\r\n`)]);
  return new Promise((resolve, reject) => {
    let sent = 0;
    let answered = false;
    const upload = httpRequest(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': `multipart/form-data; boundary=${boundary}`, 'transfer-encoding': 'chunked' } });
    upload.on('response', (response) => {
      answered = true;
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8'), bytesSent: sent }));
    });
    upload.on('error', (error) => {
      if (!answered) reject(error);
    });
    const sendNext = () => {
      if (answered || sent >= body.length) return;
      const piece = body.subarray(sent, sent + 16_384);
      sent += piece.length;
      upload.write(piece, () => setTimeout(sendNext, 2));
    };
    sendNext();
  });
}
