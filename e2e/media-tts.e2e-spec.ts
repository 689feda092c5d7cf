import path from 'node:path';
import { ErrorMessages } from '@igw/contracts';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { readWav, speechSeconds } from '../tools/emulator/src/media/wav';
import { call, expectErrorBody } from './support/http';
import { ledgerBeforeMarker } from './support/ledger-marker';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness, type UsageEntry } from './support/standalone-harness';

/** A character costs $10 per million (media-catalogue.yaml): 20 credits at 2,000,000 credits per USD. */
const CREDITS_PER_CHARACTER = 20;

/** POST /tts against the standalone gateway, the OpenAI and Deepgram speech APIs played by the emulator. */
describe('text to speech (POST /tts)', () => {
  let emulator: RunningEmulator;
  let app: StandaloneHarness;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    app = await startStandaloneHarness({
      ...emulatedProviders(emulator.url),
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/media-catalogue.yaml'),
      UPSTREAM_TIMEOUT_MS: '5000',
    });
    ({ key, accountId } = await app.paidKey(1_000_000));
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await emulator?.close();
  });

  const url = () => `${app.gateway}/tts`;
  const ledger = (account: string): Promise<UsageEntry[]> => app.usageEntries(account, 50);
  const ledgerHas = (account: string, count: number) => eventually(async () => (await ledger(account)).length === count, 20_000, 50);

  /** A raw POST /tts: the audio bytes and the headers. */
  async function speak(body: Record<string, unknown>, token = key) {
    const response = await fetch(url(), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
    return { status: response.status, headers: response.headers, bytes: Buffer.from(await response.arrayBuffer()) };
  }

  it('answers a WAV by default, billed per character, its cost in headers and in the ledger', async () => {
    const text = 'Your order has shipped. ✈';
    const answer = await speak({ model: 'tts', text });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('audio/wav');
    expect(Number(answer.headers.get('content-length'))).toBe(answer.bytes.length);
    const wav = readWav(answer.bytes)!;
    expect(wav).toBeDefined();
    expect(wav.seconds).toBeCloseTo(speechSeconds(text), 2);
    // 25 code points, though the plane emoji is 1 of them.
    const characters = [...text].length;
    expect(characters).toBe(25);
    expect(answer.headers.get('x-characters')).toBe(String(characters));
    expect(answer.headers.get('x-model')).toBe('test/tts');
    expect(Number(answer.headers.get('x-credits-used'))).toBe(characters * CREDITS_PER_CHARACTER);
    expect(Number(answer.headers.get('x-usd-spent'))).toBe((characters * 10) / 1e6);
    const requestId = answer.headers.get('x-request-id');
    expect(requestId).toBeTruthy();
    // The OpenAI speech API was asked for WAV with the default voice.
    expect(emulator.requests.at(-1)!.body).toEqual({ model: 'tts-1', input: text, voice: 'alloy', response_format: 'wav' });
    await ledgerHas(accountId, 1);
    const [entry] = await ledger(accountId);
    expect(entry).toMatchObject({ requestId, model: 'test/tts', endpoint: 'tts', units: { characters }, credits: String(characters * CREDITS_PER_CHARACTER) });
    expect(await app.balance(key)).toBe(1_000_000 - characters * CREDITS_PER_CHARACTER);
  });

  it('passes voice, format (or encoding) and speed, and answers the format\'s content type', async () => {
    const mp3 = await speak({ model: 'tts', text: 'fast and loud', voice: 'nova', format: 'mp3', speed: 1.5 });
    expect(mp3.status).toBe(200);
    expect(mp3.headers.get('content-type')).toBe('audio/mpeg');
    expect(emulator.requests.at(-1)!.body).toEqual({ model: 'tts-1', input: 'fast and loud', voice: 'nova', response_format: 'mp3', speed: 1.5 });
    const flac = await speak({ model: 'tts', text: 'encoded', encoding: 'flac' });
    expect(flac.headers.get('content-type')).toBe('audio/flac');
    expect((emulator.requests.at(-1)!.body as Record<string, unknown>).response_format).toBe('flac');
    expect((await speak({ model: 'tts', text: 'both', format: 'opus', encoding: 'opus' })).headers.get('content-type')).toBe('audio/opus');
  });

  it('speaks through Deepgram Aura, the voice in the model name', async () => {
    const answer = await speak({ model: 'aura', text: 'Hello from Aura', voice: 'orion' });
    expect(answer.status).toBe(200);
    expect(answer.headers.get('content-type')).toBe('audio/wav');
    expect(readWav(answer.bytes)).toBeDefined();
    const upstream = emulator.requests.at(-1)!;
    expect(upstream.path).toBe('/v1/speak?model=aura-2-orion-en&encoding=linear16&container=wav');
    expect(upstream.body).toEqual({ text: 'Hello from Aura' });
    expect(Number(answer.headers.get('x-credits-used'))).toBe(15 * CREDITS_PER_CHARACTER);
  });

  it('falls back to the next source when the first answers 500, billing once', async () => {
    const { accountId: account, key: fallbackKey } = await app.paidKey(10_000);
    const answer = await speak({ model: 'test/tts-fallback', text: 'second time lucky' }, fallbackKey);
    expect(answer.status).toBe(200);
    const models = emulator.requests.slice(-2).map((request) => (request.body as { model: string }).model);
    expect(models).toEqual(['broken@status=500', 'tts-1']);
    await ledgerHas(account, 1);
    expect((await ledger(account))[0].units).toEqual({ characters: 17 });
  });

  it.each([
    [{ model: undefined }, /^Body validation error! model: Expected a non-empty string\. Received nothing$/],
    [{ model: 7 }, /^Body validation error! model: Expected a non-empty string\. Received number 7$/],
    [{ text: undefined }, /^Body validation error! text: Expected a non-empty string\. Received nothing$/],
    [{ text: '' }, /^Body validation error! text: Expected a non-empty string\. Received ''$/],
    [{ text: ['a'] }, /^Body validation error! text: Expected a non-empty string\. Received array$/],
    [{ text: 'x'.repeat(4097) }, /^Body validation error! text: Expected at most 4096 characters\. Received 4097 characters$/],
    [{ voice: '../admin' }, /^Body validation error! voice: Expected 1-64 letters, digits, underscores, dashes or dots, starting with a letter or digit\. Received '\.\.\/admin'$/],
    [{ voice: 5 }, /^Body validation error! voice: Expected a string\. Received number 5$/],
    [{ format: 'ogg' }, /^Body validation error! format: Expected one of 'wav', 'mp3', 'opus', 'flac', 'aac', 'pcm'\. Received 'ogg'$/],
    [{ encoding: 'linear16' }, /^Body validation error! encoding: Expected one of 'wav', 'mp3', 'opus', 'flac', 'aac', 'pcm'\. Received 'linear16'$/],
    [{ format: 'wav', encoding: 'mp3' }, /^Body validation error! encoding: Expected the same value as format \('wav'\), or only one of the two\. Received 'mp3'$/],
    [{ speed: 0.1 }, /^Body validation error! speed: Expected a number from 0\.25 to 4\. Received 0\.1$/],
    [{ speed: '2' }, /^Body validation error! speed: Expected a number\. Received string '2'$/],
    [{ provider: 'nobody' }, /^Body validation error! provider: Expected one of 'auto', 'fallback', 'openai'\. Received 'nobody'$/],
    [{ model: 'chatty' }, /^Body validation error! model: 'test\/chat' is an openai\/chat-completions model, not a text-to-speech model\.$/],
  ])('refuses a bad field with a 400 naming it, before any upstream call (%#)', async (change, message) => {
    const before = emulator.requests.length;
    expectErrorBody(await call(url(), { token: key, body: { model: 'tts', text: 'hello', ...change } }), 400, '/tts', message);
    expect(emulator.requests.length).toBe(before);
  });

  it('takes 4096 characters counted as code points, not UTF-16 units', async () => {
    const { key: emojiKey } = await app.paidKey(1_000_000);
    const answer = await speak({ model: 'tts', text: '😀'.repeat(4096) }, emojiKey);
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-characters')).toBe('4096');
  });

  it('answers 404 for an unknown model, 401 without a key, 503 for a model with no speech source', async () => {
    expectErrorBody(await call(url(), { token: key, body: { model: 'nope', text: 'x' } }), 404, '/tts');
    expectErrorBody(await call(url(), { body: { model: 'tts', text: 'x' } }), 401, '/tts');
    expectErrorBody(await call(url(), { token: key, body: { model: 'test/tts-anthropic', text: 'x' } }), 503, '/tts', /no source of model 'test\/tts-anthropic' offers text-to-speech/);
  });

  it('refuses a text that costs more than the balance with 403, before any upstream call', async () => {
    const { key: poorKey } = await app.paidKey(1_000);
    const before = emulator.requests.length;
    // 51 characters: 1,020 credits.
    const refused = await call(url(), { token: poorKey, body: { model: 'tts', text: 'y'.repeat(51) } });
    expectErrorBody(refused, 403, '/tts');
    expect(refused.body.message).toBe(ErrorMessages.creditsExhausted);
    expect(emulator.requests.length).toBe(before);
    expect((await speak({ model: 'tts', text: 'y'.repeat(50) }, poorKey)).status).toBe(200);
    await eventually(async () => (await app.balance(poorKey)) === 0, 20_000, 50);
  });

  it('bills a client that leaves once the text went upstream, exactly once', async () => {
    const { accountId: account, key: leavingKey } = await app.paidKey(100_000);
    const text = 'I will hang up before you finish';
    const seen = emulator.requests.length;
    const controller = new AbortController();
    const pending = fetch(url(), {
      method: 'POST',
      headers: { authorization: `Bearer ${leavingKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/tts-slow', text }),
      signal: controller.signal,
    });
    pending.catch(() => undefined);
    await eventually(async () => emulator.requests.slice(seen).some((request) => (request.body as { input?: string })?.input === text), 10_000, 10);
    controller.abort();
    const upstreamCall = emulator.requests.slice(seen).find((request) => (request.body as { input?: string })?.input === text)!;
    // Once the upstream call is over and billed, nothing is left that could bill it again.
    await eventually(async () => upstreamCall.ended, 10_000, 10);
    await ledgerHas(account, 1);
    const { entries } = await ledgerBeforeMarker(app, account, leavingKey, 'test/chat');
    expect(entries).toHaveLength(1);
    expect(entries[0].units).toEqual({ characters: text.length });
    // The upstream call ran to its end instead of being cut off.
    expect(upstreamCall.closedEarly).toBe(false);
  });
});

/** The Swagger document of the media endpoints: every path, request field and an example of each. */
describe('media endpoints in the Swagger document', () => {
  let app: StandaloneHarness;

  beforeAll(async () => {
    app = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/media-catalogue.yaml') });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
  });

  it('documents /tts, /images/generations, /v1/images/generations and /stt with described fields and examples', async () => {
    type Schema = { properties: Record<string, { description?: string }>; required?: string[] };
    type Operation = { requestBody: { content: Record<string, { examples?: Record<string, unknown> }> }; responses: Record<string, { content?: Record<string, { example?: unknown; schema?: unknown }>; headers?: Record<string, unknown> }> };
    const doc = await call<{ paths: Record<string, { post: Operation }>; components: { schemas: Record<string, Schema> } }>(`${app.gateway}/docs-json`);
    const { paths, components } = doc.body;
    for (const route of ['/tts', '/images/generations', '/v1/images/generations', '/stt']) {
      const operation = paths[route].post;
      expect(Object.keys(operation.requestBody.content['application/json'].examples ?? {}).length).toBeGreaterThan(0);
      for (const status of ['400', '403', '404']) expect(operation.responses[status]).toBeDefined();
    }
    expect(paths['/images/generations'].post.responses['200'].content!['application/json'].example).toMatchObject({ output: { choices: [{ index: 0 }] } });
    expect(paths['/v1/images/generations'].post.responses['200'].content!['application/json'].example).toHaveProperty('data');
    expect(paths['/stt'].post.responses['200'].content!['application/json'].example).toMatchObject({ results: { channels: [{ alternatives: [{ transcript: expect.any(String) }] }] } });
    expect(Object.keys(paths['/tts'].post.responses['200'].headers!)).toEqual(expect.arrayContaining(['x-credits-used', 'x-usd-spent', 'x-request-id']));
    const requests: Record<string, string[]> = {
      SpeechRequestDto: ['model', 'text'],
      ImageGenerationRequestDto: ['model', 'prompt'],
      TranscriptionRequestDto: ['model', 'url'],
    };
    for (const [name, required] of Object.entries(requests)) {
      const schema = components.schemas[name];
      expect(schema.required).toEqual(expect.arrayContaining(required));
      for (const [field, property] of Object.entries(schema.properties)) expect([field, property.description]).toEqual([field, expect.any(String)]);
    }
    expect(Object.keys(components.schemas.ImageGenerationResultDto.properties)).toEqual(expect.arrayContaining(['created', 'model', 'output', 'data', 'meta']));
    expect(Object.keys(components.schemas.TranscriptionResultDto.properties)).toEqual(['metadata', 'results', 'meta']);
  });
});
