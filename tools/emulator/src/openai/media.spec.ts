import { startEmulator, type RunningEmulator } from '../emulator';
import { makeWav, readWav, speechSeconds } from '../media/wav';
import { makePng } from '../media/png';

// OpenAI's media routes: /v1/images/generations and /edits, /v1/audio/transcriptions and /translations, /v1/audio/speech.

const KEY = 'sk-openai-media';
const AUTH = { authorization: `Bearer ${KEY}` };
let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0, apiKey: KEY });
});

afterAll(async () => {
  await emulator.close();
});

function postJson(path: string, body: unknown): Promise<Response> {
  return fetch(`${emulator.url}${path}`, { method: 'POST', headers: { ...AUTH, 'content-type': 'application/json' }, body: JSON.stringify(body) });
}

function transcribe(fields: Record<string, string | string[]>, file?: { bytes: Buffer; name: string; type?: string }, route = 'transcriptions'): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) for (const item of Array.isArray(value) ? value : [value]) form.append(name, item);
  if (file) form.append('file', new Blob([file.bytes], { type: file.type ?? 'audio/wav' }), file.name);
  return fetch(`${emulator.url}/v1/audio/${route}`, { method: 'POST', headers: AUTH, body: form });
}

function editImages(fields: Record<string, string>, files: Array<{ field: string; bytes: Buffer; name: string }>): Promise<Response> {
  const form = new FormData();
  for (const [name, value] of Object.entries(fields)) form.append(name, value);
  for (const file of files) form.append(file.field, new Blob([file.bytes], { type: 'image/png' }), file.name);
  return fetch(`${emulator.url}/v1/images/edits`, { method: 'POST', headers: AUTH, body: form });
}

async function speech(body: Record<string, unknown>): Promise<{ status: number; type: string | null; bytes: Buffer }> {
  const response = await postJson('/v1/audio/speech', body);
  return { status: response.status, type: response.headers.get('content-type'), bytes: Buffer.from(await response.arrayBuffer()) };
}

describe('POST /v1/images/generations', () => {
  it('answers GPT Image models with base64 PNGs of the size asked, and token usage', async () => {
    const response = await postJson('/v1/images/generations', { model: 'gpt-image-1', prompt: 'a red fox', n: 2, size: '1536x1024', quality: 'low' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { data: Array<{ b64_json: string }>; size: string; usage: Record<string, unknown> };
    expect(body.data).toHaveLength(2);
    const first = Buffer.from(body.data[0].b64_json, 'base64');
    expect([first.readUInt32BE(16), first.readUInt32BE(20)]).toEqual([1536, 1024]);
    expect(body.data[0].b64_json).not.toBe(body.data[1].b64_json);
    expect(body.size).toBe('1536x1024');
    expect(body.usage).toEqual({ input_tokens: 3, input_tokens_details: { text_tokens: 3, image_tokens: 0 }, output_tokens: 544, total_tokens: 547 });
  });

  it('answers DALL·E with URLs of its own GET route by default, which serve the image', async () => {
    const response = await postJson('/v1/images/generations', { model: 'dall-e-3', prompt: 'a red fox', size: '1024x1792' });
    const body = (await response.json()) as { data: Array<{ url: string; revised_prompt: string }> };
    expect(body.data[0].revised_prompt).toBe('a red fox');
    expect(body.data[0].url).toMatch(new RegExp(`^${emulator.url}/media/images/1024x1792/\\d+\\.png$`));
    const image = Buffer.from(await (await fetch(body.data[0].url)).arrayBuffer());
    expect([image.readUInt32BE(16), image.readUInt32BE(20)]).toEqual([1024, 1792]);
    const inline = (await (await postJson('/v1/images/generations', { model: 'dall-e-3', prompt: 'a red fox', size: '1024x1792', response_format: 'b64_json' })).json()) as {
      data: Array<{ b64_json: string }>;
    };
    expect(Buffer.from(inline.data[0].b64_json, 'base64').equals(image)).toBe(true);
    expect(makePng(1024, 1792, Number(/(\d+)\.png$/.exec(body.data[0].url)![1])).equals(image)).toBe(true);
  });

  it.each([
    [{ model: 'gpt-image-1', prompt: '' }, 'prompt'],
    [{ model: 'gpt-image-1', prompt: 'p', response_format: 'b64_json' }, 'response_format'],
    [{ model: 'gpt-image-1', prompt: 'p', size: '512x512' }, 'size'],
    [{ model: 'dall-e-3', prompt: 'p', n: 2 }, 'n'],
    [{ model: 'flux', prompt: 'p', n: 11 }, 'n'],
    [{ model: 'flux', prompt: 'p', size: '9000x10' }, 'size'],
    [{ model: 'flux', prompt: 'p', steps: 0 }, 'steps'],
    [{ model: 'dall-e-3', prompt: 'p', steps: 4 }, 'steps'],
  ])('refuses %j with a 400 naming %s', async (body, param) => {
    const response = await postJson('/v1/images/generations', body);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { param: string } }).error.param).toBe(param);
  });

  it('takes the control suffixes of the model name', async () => {
    const response = await postJson('/v1/images/generations', { model: 'gpt-image-1@status=429', prompt: 'p' });
    expect(response.status).toBe(429);
    const noUsage = (await (await postJson('/v1/images/generations', { model: 'gpt-image-1@no-usage', prompt: 'p' })).json()) as Record<string, unknown>;
    expect(noUsage.usage).toBeUndefined();
  });
});

describe('POST /v1/audio/transcriptions', () => {
  it("hears the emulator's own speech back: the text, and the duration from the WAV header", async () => {
    const spoken = await speech({ model: 'tts-1', input: 'Hello there, general.', voice: 'alloy', response_format: 'wav' });
    const seconds = speechSeconds('Hello there, general.');
    const response = await transcribe({ model: 'whisper-1', response_format: 'verbose_json', 'timestamp_granularities[]': ['word', 'segment'] }, { bytes: spoken.bytes, name: 'speech.wav' });
    expect(response.status).toBe(200);
    const body = (await response.json()) as Record<string, unknown>;
    expect(body).toMatchObject({ task: 'transcribe', language: 'english', duration: seconds, text: 'Hello there, general.', usage: { type: 'duration', seconds: Math.ceil(seconds) } });
    expect(body.words).toHaveLength(3);
    expect(emulator.requests.at(-1)).toMatchObject({ body: { model: 'whisper-1', response_format: 'verbose_json' }, files: [{ field: 'file', filename: 'speech.wav', bytes: spoken.bytes.length }] });
  });

  it('reports the length @heard-seconds names, whatever the upload holds', async () => {
    const response = await transcribe({ model: 'whisper-1@heard-seconds=5000', response_format: 'verbose_json' }, { bytes: Buffer.alloc(2_500, 1), name: 'a.mp3' });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ duration: 5000, text: 'Emulated transcript of 5000 seconds of audio.', usage: { type: 'duration', seconds: 5000 } });
  });

  it('answers json with token usage for GPT-4o models, and plain text or subtitles when asked', async () => {
    const tone = Buffer.from(await (await fetch(`${emulator.url}/media/tone.wav?seconds=2`)).arrayBuffer());
    const json = (await (await transcribe({ model: 'gpt-4o-transcribe' }, { bytes: tone, name: 'a.wav' })).json()) as Record<string, unknown>;
    expect(json).toEqual({
      text: 'Emulated transcript of 2 seconds of audio.',
      usage: { type: 'tokens', input_tokens: 20, input_token_details: { text_tokens: 0, audio_tokens: 20 }, output_tokens: 7, total_tokens: 27 },
    });
    const text = await transcribe({ model: 'whisper-1', response_format: 'text' }, { bytes: tone, name: 'a.wav' });
    expect(text.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(await text.text()).toBe('Emulated transcript of 2 seconds of audio.\n');
    expect(await (await transcribe({ model: 'whisper-1', response_format: 'srt' }, { bytes: tone, name: 'a.wav' })).text()).toContain('00:00:00,000 --> 00:00:02,000');
  });

  it.each([
    [{ model: 'whisper-1' }, undefined, 'file'],
    [{}, { bytes: Buffer.from('x'), name: 'a.wav' }, 'model'],
    [{ model: 'whisper-1' }, { bytes: Buffer.from('abc'), name: 'a.txt' }, 'file'],
    [{ model: 'whisper-1' }, { bytes: Buffer.from('RIFF0000WAVEbroken'), name: 'a.wav' }, 'file'],
    [{ model: 'gpt-4o-mini-transcribe', response_format: 'verbose_json' }, { bytes: Buffer.alloc(100), name: 'a.mp3' }, 'response_format'],
  ])('refuses %j with %j as a 400 naming %s', async (fields, file, param) => {
    const response = await transcribe(fields as Record<string, string>, file);
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: { param: string } }).error.param).toBe(param);
  });

  it('reads the control suffixes from the form field `model`', async () => {
    const response = await transcribe({ model: 'whisper-1@status=500' }, { bytes: Buffer.alloc(10), name: 'a.mp3' });
    expect(response.status).toBe(500);
    expect(((await response.json()) as { error: { message: string } }).error.message).toMatch(/@status=/);
  });
});

describe('POST /v1/audio/speech', () => {
  it('answers a WAV whose length follows the text and speed, with the text inside', async () => {
    const answer = await speech({ model: 'tts-1', input: 'x'.repeat(64), voice: 'nova', response_format: 'wav', speed: 2 });
    expect(answer.status).toBe(200);
    expect(answer.type).toBe('audio/wav');
    expect(readWav(answer.bytes)).toEqual({ seconds: 2, sampleRate: 24_000, channels: 1, text: 'x'.repeat(64) });
  });

  it('answers MP3 by default, and raw samples for pcm, with their content types', async () => {
    const mp3 = await speech({ model: 'tts-1', input: 'Hi there', voice: 'nova' });
    expect(mp3.type).toBe('audio/mpeg');
    expect(mp3.bytes.toString('ascii', 0, 20)).toBe('EMULATED mp3 AUDIO\n\0');
    const pcm = await speech({ model: 'tts-1', input: 'Hi there', voice: 'nova', response_format: 'pcm' });
    expect(pcm.type).toBe('audio/pcm');
    expect(pcm.bytes.length).toBe(speechSeconds('Hi there') * 24_000 * 2);
  });

  it.each([
    [{ model: 'tts-1', voice: 'nova' }, 'input'],
    [{ model: 'tts-1', input: 'hi' }, 'voice'],
    [{ model: 'tts-1', input: 'x'.repeat(4097), voice: 'nova' }, 'input'],
    [{ model: 'tts-1', input: 'hi', voice: 'nova', response_format: 'ogg' }, 'response_format'],
    [{ model: 'tts-1', input: 'hi', voice: 'nova', speed: 5 }, 'speed'],
  ])('refuses %j with a 400 naming %s', async (body, param) => {
    const answer = await speech(body);
    expect(answer.status).toBe(400);
    expect((JSON.parse(answer.bytes.toString('utf8')) as { error: { param: string } }).error.param).toBe(param);
  });
});

interface OpenAiError {
  error: { message: string; param: string | null };
}

describe('POST /v1/audio/translations', () => {
  const wav = () => ({ bytes: makeWav({ seconds: 1.5, text: 'Bonjour tout le monde' }), name: 'speech.wav' });

  it("answers the English text Whisper heard, with task 'translate'", async () => {
    const verbose = await transcribe({ model: 'whisper-1', response_format: 'verbose_json' }, wav(), 'translations');
    expect(verbose.status).toBe(200);
    expect(await verbose.json()).toMatchObject({ task: 'translate', language: 'english', duration: 1.5, text: 'Bonjour tout le monde' });
    const text = await transcribe({ model: 'whisper-1', response_format: 'text' }, wav(), 'translations');
    expect(await text.text()).toBe('Bonjour tout le monde\n');
  });

  it('refuses models other than Whisper, and the fields translations do not take, as OpenAI does', async () => {
    const other = await transcribe({ model: 'gpt-4o-mini-transcribe' }, wav(), 'translations');
    expect(other.status).toBe(400);
    expect(((await other.json()) as OpenAiError).error).toMatchObject({ param: 'model', message: expect.stringContaining('does not support translations') });
    for (const [name, value] of [['language', 'fr'], ['timestamp_granularities[]', 'word']]) {
      const refused = await transcribe({ model: 'whisper-1', [name]: value }, wav(), 'translations');
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as OpenAiError).error.param).toBe(name);
    }
  });
});

describe('POST /v1/images/edits', () => {
  const image = makePng(512, 512, 3);

  it('edits one image (GPT Image: base64 with usage) or several as image[], the size of the first', async () => {
    const one = await editImages({ model: 'gpt-image-1', prompt: 'add a hat' }, [{ field: 'image', bytes: image, name: 'a.png' }, { field: 'mask', bytes: makePng(512, 512, 0), name: 'mask.png' }]);
    expect(one.status).toBe(200);
    const body = (await one.json()) as { data: Array<{ b64_json: string }> };
    const png = Buffer.from(body.data[0].b64_json, 'base64');
    expect([png.readUInt32BE(16), png.readUInt32BE(20)]).toEqual([512, 512]);
    expect(body).toMatchObject({ size: '512x512', usage: { input_tokens: expect.any(Number), output_tokens: 4160 } });
    const two = await editImages({ model: 'gpt-image-1', prompt: 'add a hat', n: '2' }, [{ field: 'image[]', bytes: image, name: 'a.png' }, { field: 'image[]', bytes: image, name: 'b.png' }]);
    expect(((await two.json()) as { data: unknown[] }).data).toHaveLength(2);
  });

  it('answers DALL·E 2 with URLs by default, and refuses dall-e-3, no image, a non-PNG and a mask of another size', async () => {
    const dalle2 = await editImages({ model: 'dall-e-2', prompt: 'x' }, [{ field: 'image', bytes: image, name: 'a.png' }]);
    expect(((await dalle2.json()) as { data: Array<{ url: string }> }).data[0].url).toMatch(/\/media\/images\/512x512\/\d+\.png$/);
    const refusals: Array<[Record<string, string>, Array<{ field: string; bytes: Buffer; name: string }>, string]> = [
      [{ model: 'dall-e-3', prompt: 'x' }, [{ field: 'image', bytes: image, name: 'a.png' }], 'model'],
      [{ model: 'gpt-image-1', prompt: 'x' }, [], 'image'],
      [{ model: 'gpt-image-1', prompt: 'x' }, [{ field: 'image', bytes: Buffer.from('not a png'), name: 'a.png' }], 'image'],
      [{ model: 'gpt-image-1', prompt: 'x' }, [{ field: 'image', bytes: image, name: 'a.png' }, { field: 'mask', bytes: makePng(256, 256, 0), name: 'm.png' }], 'mask'],
    ];
    for (const [fields, files, param] of refusals) {
      const refused = await editImages(fields, files);
      expect(refused.status).toBe(400);
      expect(((await refused.json()) as OpenAiError).error.param).toBe(param);
    }
  });
});
