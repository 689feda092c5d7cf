// The media adapters against the emulator, each provider in its own wire format and auth
// scheme: round trips (speech the emulator made, transcribed back to its text), image URLs
// fetched into bytes, and the emulator's control suffixes surfacing as the errors the fallback
// chain acts on. It lives here because the emulator may not import the providers lib.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startEmulator, type RunningEmulator } from '../../../tools/emulator/src/emulator';
import { isRetriableUpstreamError } from './fallback';
import { audioDurationSeconds } from './media/audio-facts';
import type { ProviderTarget } from './provider.types';
import { findProvider, providerKind } from './registry';
import { UpstreamHttpError, UpstreamLimitExceededError } from './upstream.errors';

const KEY = 'media-key';
const OPTIONS = { timeoutMs: 10_000 };
let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, apiKey: KEY });
});

afterAll(async () => {
  await emulator.close();
});

/** A target as planRoute builds it, at the provider's emulator path. */
function target(provider: string, model: string): ProviderTarget {
  return { provider, model, baseUrl: `${emulator.url}${findProvider(provider)!.emulatorPath}`, apiKey: KEY };
}

const kind = (provider: string) => findProvider(provider)!.kind;
const speechOf = (provider: string) => providerKind(kind(provider)).speech!;
const transcriptionOf = (provider: string) => providerKind(kind(provider)).transcription!;
const imagesOf = (provider: string) => providerKind(kind(provider)).images!;

describe('speech and transcription round trips', () => {
  const text = 'The gateway speaks, and then it listens.';

  it.each([
    ['openai', 'tts-1', 'deepgram', 'nova-3'],
    ['deepgram', 'aura-2', 'openai', 'whisper-1'],
    ['deepgram', 'aura-2-luna-en', 'openai', 'gpt-4o-transcribe'],
  ])('%s %s speaks a WAV that %s %s transcribes back to the same text and length', async (speaker, voiceModel, listener, listenModel) => {
    const spoken = await speechOf(speaker).synthesize(target(speaker, voiceModel), { model: voiceModel, text }, OPTIONS);
    expect(spoken).toMatchObject({ contentType: 'audio/wav', format: 'wav', characters: text.length });
    const seconds = (await audioDurationSeconds(spoken.audio))!;
    expect(seconds).toBeCloseTo(text.length * 0.0625, 6);

    const heard = await transcriptionOf(listener).transcribe(target(listener, listenModel), { model: listenModel, audio: spoken.audio, contentType: spoken.contentType }, OPTIONS);
    expect(heard.transcript).toBe(text);
    // GPT-4o transcribe reports no duration: the gateway bills the length it read from the audio.
    if (listenModel === 'gpt-4o-transcribe') expect(heard.durationSeconds).toBeUndefined();
    else expect(heard.durationSeconds).toBeCloseTo(seconds, 6);
    expect(heard.words?.map((word) => word.punctuatedWord ?? word.word).join(' ')).toBe(listenModel === 'gpt-4o-transcribe' ? undefined : text);
  });

  it('Azure OpenAI speaks and transcribes through its deployments, with api-version and the api-key header', async () => {
    const spoken = await speechOf('azure').synthesize(target('azure', 'tts-prod'), { model: 'tts-prod', text }, OPTIONS);
    expect(emulator.requests.at(-1)).toMatchObject({ path: '/openai/deployments/tts-prod/audio/speech?api-version=2024-10-21', headers: { 'api-key': KEY } });
    const heard = await transcriptionOf('azure').transcribe(target('azure', 'whisper'), { model: 'whisper', audio: spoken.audio, contentType: 'audio/wav' }, OPTIONS);
    expect(heard).toMatchObject({ transcript: text, durationSeconds: expect.closeTo(text.length * 0.0625, 6) });
    expect(emulator.requests.at(-1)).toMatchObject({ path: '/openai/deployments/whisper/audio/transcriptions?api-version=2024-10-21', body: { model: 'whisper', response_format: 'verbose_json' } });
  });

  it('names the Aura voice inside the model, and sends Deepgram its key as a Token', async () => {
    await speechOf('deepgram').synthesize(target('deepgram', 'aura-2'), { model: 'aura-2', text: 'Hi', voice: 'orion', format: 'mp3' }, OPTIONS);
    const sent = emulator.requests.at(-1)!;
    expect(sent.path).toBe('/v1/speak?model=aura-2-orion-en&encoding=mp3');
    expect(sent.headers.authorization).toBe(`Token ${KEY}`);
  });

  it('transcribes the sample file the emulator serves', async () => {
    const sample = Buffer.from(await (await fetch(`${emulator.url}/media/sample.wav`)).arrayBuffer());
    const heard = await transcriptionOf('deepgram').transcribe(target('deepgram', 'nova-3'), { model: 'nova-3', audio: sample, contentType: 'audio/wav' }, OPTIONS);
    expect(heard).toMatchObject({ transcript: 'The quick brown fox jumps over the lazy dog.', durationSeconds: 2, confidence: 0.99 });
    expect(heard.raw).toMatchObject({ metadata: { duration: 2, channels: 1 } });
  });

  it.each(['wav', 'mp3', 'opus', 'flac', 'aac', 'pcm'] as const)('OpenAI and Deepgram both answer %s with its content type', async (format) => {
    for (const [provider, model] of [
      ['openai', 'tts-1'],
      ['deepgram', 'aura-2'],
    ]) {
      const spoken = await speechOf(provider).synthesize(target(provider, model), { model, text: 'Hello', format }, OPTIONS);
      expect(spoken.format).toBe(format);
      expect(spoken.contentType).toMatch(/^audio\//);
      expect(spoken.audio.length).toBeGreaterThan(0);
    }
  });
});

describe('image generation', () => {
  it('OpenAI GPT Image answers base64 PNGs of the size asked, with token usage', async () => {
    const result = await imagesOf('openai').generate(target('openai', 'gpt-image-1'), { model: 'gpt-image-1', prompt: 'a fox', n: 2, size: '1024x1536', quality: 'medium' }, OPTIONS);
    expect(result.images).toHaveLength(2);
    expect(result.images[0]).toMatchObject({ mimeType: 'image/png', width: 1024, height: 1536 });
    expect(result.usage).toEqual({ images: 2, width: 1024, height: 1536, megapixels: (2 * 1024 * 1536) / 1e6, inputTokens: 2, outputTokens: 2112 });
  });

  it('a server that answers by URL leaves the bytes to the gateway, which fetches them under the media address policy', async () => {
    // An OpenAI-compatible server defaulting to URLs (the adapter asks b64_json of DALL·E only).
    const flux = target('together', 'flux-schnell');
    const result = await imagesOf('together').generate(flux, { model: 'flux-schnell', prompt: 'a fox', size: '512x768', steps: 4, options: { response_format: 'url' } }, OPTIONS);
    expect(result.usage).toEqual({ images: 1, width: 512, height: 768, megapixels: (512 * 768) / 1e6, steps: 4 });
    expect(result.images[0].base64).toBeUndefined();
    expect(result.images[0].url).toMatch(/\/media\/images\/512x768\/\d+\.png$/);
  });

  it('Azure OpenAI generates through its deployment', async () => {
    const result = await imagesOf('azure').generate(target('azure', 'gpt-image-1'), { model: 'gpt-image-1', prompt: 'a fox', size: '1024x1024' }, OPTIONS);
    expect(result.images[0]).toMatchObject({ mimeType: 'image/png', width: 1024, height: 1024 });
    expect(emulator.requests.at(-1)!.path).toBe('/openai/deployments/gpt-image-1/images/generations?api-version=2024-10-21');
  });

  it('Stability answers one image per call, sized by the aspect ratio nearest the size asked', async () => {
    const result = await imagesOf('stability').generate(target('stability', 'ultra'), { model: 'ultra', prompt: 'a fox', n: 2, size: '1920x1080', seed: 7 }, OPTIONS);
    expect(result.images.map((image) => [image.width, image.height, image.seed, image.finishReason])).toEqual([
      [1344, 768, 7, 'SUCCESS'],
      [1344, 768, 8, 'SUCCESS'],
    ]);
    expect(result.usage).toEqual({ images: 2, width: 1344, height: 768, megapixels: (2 * 1344 * 768) / 1e6 });
    const filtered = await imagesOf('stability').generate(target('stability', 'core'), { model: 'core', prompt: 'emulate content filter' }, OPTIONS);
    expect(filtered.images[0].finishReason).toBe('CONTENT_FILTERED');
  });
});

describe('failures the fallback chain acts on', () => {
  it.each([
    ['openai images', () => imagesOf('openai').generate(target('openai', 'gpt-image-1@status=503'), { model: 'gpt-image-1@status=503', prompt: 'p' }, OPTIONS)],
    ['stability images', () => imagesOf('stability').generate(target('stability', 'core@status=503'), { model: 'core@status=503', prompt: 'p' }, OPTIONS)],
    [
      'openai transcription',
      () => transcriptionOf('openai').transcribe(target('openai', 'whisper-1@status=503'), { model: 'whisper-1@status=503', audio: Buffer.alloc(10), contentType: 'audio/mpeg' }, OPTIONS),
    ],
    [
      'deepgram transcription',
      () => transcriptionOf('deepgram').transcribe(target('deepgram', 'nova-3@status=503'), { model: 'nova-3@status=503', audio: Buffer.alloc(10), contentType: 'audio/mpeg' }, OPTIONS),
    ],
    ['openai speech', () => speechOf('openai').synthesize(target('openai', 'tts-1@status=503'), { model: 'tts-1@status=503', text: 'hi' }, OPTIONS)],
    ['deepgram speech', () => speechOf('deepgram').synthesize(target('deepgram', 'aura-2-thalia-en@status=503'), { model: 'aura-2-thalia-en@status=503', text: 'hi' }, OPTIONS)],
  ])('%s: an emulated 503 is a retriable UpstreamHttpError with the reason', async (_name, call) => {
    const failure = await call().catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UpstreamHttpError);
    expect(failure).toMatchObject({ status: 503, upstreamMessage: expect.stringContaining('@status=') });
    expect(isRetriableUpstreamError(failure)).toBe(true);
  });

  it("a request the provider refuses is not retried: the client's fault, with the provider's reason", async () => {
    const failure = await transcriptionOf('deepgram')
      .transcribe(target('deepgram', 'nova-3'), { model: 'nova-3', audio: Buffer.from('RIFF....WAVEjunk'), contentType: 'audio/wav' }, OPTIONS)
      .catch((error: unknown) => error);
    expect(failure).toMatchObject({ status: 400, upstreamMessage: expect.stringContaining('corrupt or unsupported data') });
    expect(isRetriableUpstreamError(failure)).toBe(false);
  });

  it('a wrong key is a 401 in every format', async () => {
    const wrong = (provider: string, model: string) => ({ ...target(provider, model), apiKey: 'wrong' });
    await expect(imagesOf('stability').generate(wrong('stability', 'core'), { model: 'core', prompt: 'p' }, OPTIONS)).rejects.toMatchObject({ status: 401 });
    await expect(speechOf('deepgram').synthesize(wrong('deepgram', 'aura-2'), { model: 'aura-2', text: 'p' }, OPTIONS)).rejects.toMatchObject({ status: 401 });
    await expect(speechOf('openai').synthesize(wrong('openai', 'tts-1'), { model: 'tts-1', text: 'p' }, OPTIONS)).rejects.toMatchObject({ status: 401 });
  });

  it('speech past the response limit is cut, never read whole, and marked charged', async () => {
    const limited = { ...target('openai', 'tts-1'), limits: { maxResponseBytes: 64 * 1024, maxErrorBytes: 1024, maxEventBytes: 1024, maxStreamMs: 10_000 } };
    const failure = await speechOf('openai')
      .synthesize(limited, { model: 'tts-1', text: 'x'.repeat(2000) }, OPTIONS)
      .catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(UpstreamLimitExceededError);
    expect(failure).toMatchObject({ upstreamCharged: true });
    expect(isRetriableUpstreamError(failure)).toBe(false);
  });
});
