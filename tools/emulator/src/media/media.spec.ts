import { startEmulator, type RunningEmulator } from '../emulator';
import { makePng } from './png';
import { hear } from './transcribe';
import { makeWav, readWav, SAMPLE_TEXT, speechSeconds, wavOf } from './wav';

// The emulator's media (./index.ts): WAVs it makes and reads, PNGs, and the GET routes that
// serve them without a key (a provider's download URL needs none).

const KEY = 'sk-media';
let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, apiKey: KEY });
});

afterAll(async () => {
  await emulator.close();
});

async function get(path: string): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const response = await fetch(`${emulator.url}${path}`);
  return { status: response.status, type: response.headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()) };
}

describe('WAV files', () => {
  it('are valid RIFF/WAVE: sizes in the header match the bytes, and the duration and text read back', () => {
    const wav = makeWav({ seconds: 1.5, sampleRate: 16_000, text: 'Round trip, é.' });
    expect(wav.toString('ascii', 0, 4)).toBe('RIFF');
    expect(wav.readUInt32LE(4)).toBe(wav.length - 8);
    expect(wav.toString('ascii', 8, 16)).toBe('WAVEfmt ');
    expect(wav.readUInt16LE(20)).toBe(1); // PCM
    expect(wav.readUInt32LE(24)).toBe(16_000);
    expect(readWav(wav)).toEqual({ seconds: 1.5, sampleRate: 16_000, channels: 1, text: 'Round trip, é.' });
    const data = wav.indexOf('data');
    expect(wav.readUInt32LE(data + 4)).toBe(1.5 * 16_000 * 2);
  });

  it('are heard as their duration and words; other audio is estimated, broken WAVs and empty uploads refused', () => {
    const spoken = hear(wavOf(Buffer.alloc(48_000), 24_000, 'one two three'));
    expect(spoken).toEqual({ seconds: 1, text: 'one two three', words: [{ word: 'one', start: 0, end: 0.333 }, { word: 'two', start: 0.333, end: 0.667 }, { word: 'three', start: 0.667, end: 1 }] });
    expect(hear(makeWav({ seconds: 2.5 }))).toMatchObject({ seconds: 2.5, text: 'Emulated transcript of 2.5 seconds of audio.' });
    expect(hear(Buffer.alloc(32_000, 1))).toMatchObject({ seconds: 2 });
    expect(hear(Buffer.from('RIFF\0\0\0\0WAVEjunk'))).toEqual({ problem: expect.stringMatching(/RIFF/) });
    expect(hear(Buffer.alloc(0))).toEqual({ problem: 'the audio is empty' });
  });

  it('last 0.0625 s per character of speech, divided by the speed', () => {
    expect(speechSeconds('x'.repeat(32))).toBe(2);
    expect(speechSeconds('x'.repeat(32), 2)).toBe(1);
    expect(speechSeconds('')).toBe(0.1);
  });
});

describe('GET /media routes', () => {
  it('serves the sample WAV, whose text is the sample sentence, without an API key', async () => {
    const sample = await get('/media/sample.wav');
    expect(sample.status).toBe(200);
    expect(sample.type).toBe('audio/wav');
    expect(readWav(sample.bytes)).toMatchObject({ seconds: 2, text: SAMPLE_TEXT });
  });

  it('serves a tone of the seconds asked, and refuses seconds out of range', async () => {
    const tone = await get('/media/tone.wav?seconds=3.5');
    expect(readWav(tone.bytes)).toEqual({ seconds: 3.5, sampleRate: 24_000, channels: 1 });
    expect((await get('/media/tone.wav')).bytes.length).toBe(44 + 48_000);
    for (const seconds of ['0', '-1', '601', 'abc']) {
      const refused = await get(`/media/tone.wav?seconds=${seconds}`);
      expect(refused.status).toBe(400);
      expect(JSON.parse(refused.bytes.toString('utf8'))).toEqual({ error: { message: expect.stringContaining('seconds') } });
    }
  });

  it('serves generated images as valid PNGs of their size', async () => {
    const image = await get('/media/images/640x480/12345.png');
    expect(image.status).toBe(200);
    expect(image.type).toBe('image/png');
    expect(image.bytes.equals(makePng(640, 480, 12345))).toBe(true);
    expect(image.bytes.toString('ascii', 12, 16)).toBe('IHDR');
    expect([image.bytes.readUInt32BE(16), image.bytes.readUInt32BE(20)]).toEqual([640, 480]);
    expect(image.bytes.length).toBeLessThan(4096);
    expect((await get('/media/images/2049x10/1.png')).status).toBe(404);
    expect((await fetch(`${emulator.url}/media/nothing-here`, { headers: { authorization: `Bearer ${KEY}` } })).status).toBe(404);
  });

  it('honours the control headers (a status, a delay) like every route', async () => {
    const response = await fetch(`${emulator.url}/media/sample.wav`, { headers: { 'x-emulator-status': '503' } });
    expect(response.status).toBe(503);
  });
});
