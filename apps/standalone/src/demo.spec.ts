import { startEmulator, type RunningEmulator } from '@igw/emulator';
import { connectionsOfEnvironment, findProvider, planRoute, providerKind } from '@igw/providers';
import { emulatedProviders } from './demo';

// Demo mode plays every provider without a key of its own through the emulator: the media
// providers too, each at the address where the emulator speaks its format.

let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
});

afterAll(async () => {
  await emulator.close();
});

describe('emulatedProviders', () => {
  it('points Deepgram and Stability at the emulator, and keeps a provider that has its own key', () => {
    const { providers, emulated } = emulatedProviders({ DEEPGRAM_API_KEY: 'real-key' }, 'http://127.0.0.1:9');
    expect(emulated).toEqual(expect.arrayContaining(['openai', 'stability']));
    expect(emulated).not.toContain('deepgram');
    expect(providers).toMatchObject({ STABILITY_API_KEY: 'emulator', STABILITY_BASE_URL: 'http://127.0.0.1:9', DEEPGRAM_API_KEY: 'real-key' });
    expect(providers.DEEPGRAM_BASE_URL).toBeUndefined();
  });

  it('gives addresses where the media adapters reach the emulator', async () => {
    const { providers } = emulatedProviders({}, emulator.url);
    const plan = planRoute(
      [
        { provider: 'deepgram', model: 'aura-2' },
        { provider: 'openai', model: 'whisper-1' },
        { provider: 'stability', model: 'core' },
      ],
      connectionsOfEnvironment(providers),
    );
    expect(plan.missing).toEqual([]);
    const [deepgram, openai, stability] = plan.targets;
    const options = { timeoutMs: 10_000 };
    const spoken = await providerKind(deepgram.definition.kind).speech!.synthesize(deepgram, { model: 'aura-2', text: 'Demo mode works.' }, options);
    const heard = await providerKind(openai.definition.kind).transcription!.transcribe(openai, { model: 'whisper-1', audio: spoken.audio, contentType: spoken.contentType }, options);
    expect(heard.transcript).toBe('Demo mode works.');
    const image = await providerKind(stability.definition.kind).images!.generate(stability, { model: 'core', prompt: 'demo' }, options);
    expect(image.images[0]).toMatchObject({ mimeType: 'image/png', width: 1024, height: 1024 });
    expect(findProvider('deepgram')!.emulatorPath).toBe('');
  });
});
