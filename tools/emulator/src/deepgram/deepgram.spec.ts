import { startEmulator, type RunningEmulator } from '../emulator';
import { makeWav, readWav, speechSeconds } from '../media/wav';

// Deepgram's pre-recorded (/v1/listen) and Aura (/v1/speak) routes.

const KEY = 'dg-key';
const AUTH = { authorization: `Token ${KEY}` };
let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, apiKey: KEY });
});

afterAll(async () => {
  await emulator.close();
});

interface ListenAnswer {
  metadata: { request_id: string; sha256: string; duration: number; channels: number; models: string[]; model_info: Record<string, { arch: string }> };
  results: { channels: Array<{ alternatives: Array<{ transcript: string; confidence: number; words: Array<{ word: string; punctuated_word: string; start: number; end: number }> }> }> };
}

function listen(query: string, audio: Buffer, headers: Record<string, string> = AUTH, type = 'audio/wav'): Promise<Response> {
  return fetch(`${emulator.url}/v1/listen?${query}`, { method: 'POST', headers: { ...headers, 'content-type': type }, body: audio });
}

function speak(query: string, body: unknown): Promise<Response> {
  return fetch(`${emulator.url}/v1/speak?${query}`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

describe('POST /v1/listen', () => {
  it('transcribes the uploaded bytes: duration from the WAV header, the text it carries, word timings', async () => {
    const audio = makeWav({ seconds: 1.5, text: 'Deploy it, now.' });
    const response = await listen('model=nova-3&smart_format=true', audio);
    expect(response.status).toBe(200);
    const body = (await response.json()) as ListenAnswer;
    expect(body.metadata).toMatchObject({ duration: 1.5, channels: 1 });
    expect(body.metadata.model_info[body.metadata.models[0]].arch).toBe('nova-3');
    expect(body.metadata.sha256).toMatch(/^[0-9a-f]{64}$/);
    const best = body.results.channels[0].alternatives[0];
    expect(best.transcript).toBe('Deploy it, now.');
    expect(best.words.map((word) => [word.word, word.punctuated_word])).toEqual([
      ['deploy', 'Deploy'],
      ['it', 'it,'],
      ['now', 'now.'],
    ]);
    expect(best.words.at(-1)!.end).toBe(1.5);
    expect(emulator.requests.at(-1)).toMatchObject({ body: undefined, bodyBytes: audio.length });
  });

  it('gives bare lower-case words without smart_format or punctuate, and estimates the length of other audio', async () => {
    const wav = (await (await listen('model=nova-3', makeWav({ seconds: 1, text: 'Hello, World.' }))).json()) as ListenAnswer;
    expect(wav.results.channels[0].alternatives[0].transcript).toBe('hello world');
    const mp3 = (await (await listen('model=nova-3', Buffer.alloc(48_000, 7), AUTH, 'audio/mpeg')).json()) as ListenAnswer;
    expect(mp3.metadata.duration).toBe(3);
  });

  it("refuses empty or broken audio, a remote URL, and a wrong key, in Deepgram's error shape", async () => {
    const empty = await listen('model=nova-3', Buffer.alloc(0));
    expect(empty.status).toBe(400);
    expect(await empty.json()).toEqual({ err_code: 'Bad Request', err_msg: expect.stringContaining('corrupt or unsupported data'), request_id: expect.any(String) });
    expect((await listen('model=nova-3', Buffer.from('RIFF....WAVEjunk'))).status).toBe(400);
    const remote = await fetch(`${emulator.url}/v1/listen?model=nova-3`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: '{"url":"https://x"}' });
    expect(remote.status).toBe(400);
    const unauthorized = await listen('model=nova-3', makeWav({ seconds: 1 }), { authorization: 'Token wrong' });
    expect(unauthorized.status).toBe(401);
    expect(await unauthorized.json()).toMatchObject({ err_code: 'INVALID_AUTH', err_msg: 'Invalid credentials.' });
  });

  it('reads the control suffixes from the `model` query parameter, encoded or not', async () => {
    const failed = await listen('model=nova-3@status=503', makeWav({ seconds: 1 }));
    expect(failed.status).toBe(503);
    expect(await failed.json()).toMatchObject({ err_code: 'INTERNAL_SERVER_ERROR', err_msg: expect.stringContaining('@status=') });
    expect((await listen('model=nova-3%40status%3D429', makeWav({ seconds: 1 }))).status).toBe(429);
    const ok = (await (await listen('model=nova-3@delay=1', makeWav({ seconds: 1 }))).json()) as ListenAnswer;
    expect(ok.metadata.model_info[ok.metadata.models[0]].arch).toBe('nova-3');
  });
});

describe('POST /v1/speak', () => {
  it('answers linear16 in a wav container as a WAV carrying the text, with the Deepgram headers', async () => {
    const response = await speak('model=aura-2-thalia-en&encoding=linear16&container=wav&sample_rate=16000', { text: 'Good morning.' });
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toBe('audio/wav');
    expect(response.headers.get('dg-model-name')).toBe('aura-2-thalia-en');
    expect(response.headers.get('dg-char-count')).toBe('13');
    const wav = Buffer.from(await response.arrayBuffer());
    expect(readWav(wav)).toEqual({ seconds: speechSeconds('Good morning.'), sampleRate: 16_000, channels: 1, text: 'Good morning.' });
  });

  it('answers MP3 by default and raw samples for container=none', async () => {
    const mp3 = await speak('model=aura-2-thalia-en', { text: 'Hi' });
    expect(mp3.headers.get('content-type')).toBe('audio/mpeg');
    const raw = await speak('model=aura-2-thalia-en&encoding=linear16&container=none', { text: 'Hi' });
    expect(Buffer.from(await raw.arrayBuffer()).length).toBe(speechSeconds('Hi') * 24_000 * 2);
  });

  it('refuses a missing text, text past 2000 characters and an unknown encoding', async () => {
    expect((await speak('model=aura-2-thalia-en', {})).status).toBe(400);
    expect((await speak('model=aura-2-thalia-en', { text: 'x'.repeat(2001) })).status).toBe(413);
    expect((await speak('model=aura-2-thalia-en&encoding=wma', { text: 'hi' })).status).toBe(400);
    expect((await speak('model=aura-2-thalia-en@status=500', { text: 'hi' })).status).toBe(500);
  });
});
