import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { ErrorMessages } from '@igw/contracts';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { makeMp3 } from '../tools/emulator/src/media/mp3';
import { call, expectErrorBody } from './support/http';
import { ledgerBeforeMarker } from './support/ledger-marker';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness, type UsageEntry } from './support/standalone-harness';

interface Transcription {
  metadata: { request_id: string; created: string; duration: number; channels: number; model: string };
  results: { channels: Array<{ alternatives: Array<{ transcript: string; confidence?: number; words?: Array<Record<string, unknown>> }>; detected_language?: string }> };
  meta: { usage: { credits_used: number; usd_spent: number; audio_seconds: number } };
}

/** A second of audio costs $0.0001 (media-catalogue.yaml): 200 credits. */
const CREDITS_PER_SECOND = 200;
const SAMPLE_TRANSCRIPT = 'The quick brown fox jumps over the lazy dog.';
const MAX_BYTES = 400_000;
/**
 * The gateway holds at most this much fetched media at once; one key's requests at most half,
 * raised to one file of MAX_BYTES (MEDIA_IN_FLIGHT_KEY_SHARE's default): 400,000.
 */
const IN_FLIGHT_MAX_BYTES = 750_000;

/**
 * POST /stt against the standalone gateway: OpenAI transcriptions and Deepgram played by the
 * emulator. The gateway fetches audio from exactly one allowlisted host:port, a media server of
 * this test on 127.0.0.1 that relays the emulator's /media files and also redirects, stalls and
 * serves oversized files (the emulator does neither). Every forbidden target is another
 * loopback port: the emulator's own, and a trap server that counts what reaches it.
 */
describe('speech to text (POST /stt)', () => {
  let emulator: RunningEmulator;
  let app: StandaloneHarness;
  let media: Server;
  let trap: Server;
  let mediaUrl: string;
  let trapUrl: string;
  let trapHits = 0;
  const mediaHits: string[] = [];
  /** How many fetches of /slow.wav have ended, answered or given up. */
  let slowClosed = 0;
  /** /held.mp3 sends all but its last 50,000 bytes (250,000), then waits for this. */
  let finishHeld: Promise<void> = Promise.resolve();
  /** How many fetches of /held.mp3 got those first bytes. */
  let heldSent = 0;

  const listen = async (server: Server) => {
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  };

  beforeAll(async () => {
    emulator = await startEmulator();
    const relay = async (emulatorPath: string) => Buffer.from(await (await fetch(`${emulator.url}${emulatorPath}`)).arrayBuffer());
    const sample = await relay('/media/sample.wav');
    const fiveSeconds = await relay('/media/tone.wav?seconds=5');
    const tenSeconds = await relay('/media/tone.wav?seconds=10');
    // 300 KB: a provider that estimates its length from the size at 128 kbit/s hears under 19 s.
    const fiveMinutes = makeMp3(300);
    trap = createServer((_request, response) => {
      trapHits++;
      response.writeHead(200, { 'content-type': 'audio/wav' });
      response.end(sample);
    });
    trapUrl = await listen(trap);
    media = createServer((request, response) => {
      const route = request.url ?? '/';
      mediaHits.push(route);
      const send = (bytes: Buffer, type = 'audio/wav') => {
        response.writeHead(200, { 'content-type': type, 'content-length': String(bytes.length) });
        response.end(bytes);
      };
      if (route === '/sample.wav') return send(sample);
      if (route === '/five-seconds.wav') return send(fiveSeconds);
      if (route === '/ten-seconds.wav') return send(tenSeconds);
      if (route === '/five-minutes.mp3') return send(fiveMinutes, 'audio/mpeg');
      // The same MP3 labelled as something else: its length is read from its bytes.
      if (route === '/five-minutes.bin') return send(fiveMinutes, 'application/octet-stream');
      if (route === '/held.mp3') {
        response.writeHead(200, { 'content-type': 'audio/mpeg', 'content-length': String(fiveMinutes.length) });
        response.write(fiveMinutes.subarray(0, fiveMinutes.length - 50_000), () => heldSent++);
        void finishHeld.then(() => response.end(fiveMinutes.subarray(fiveMinutes.length - 50_000)));
        return;
      }
      // 3 s at 128 kbit/s, in no format the gateway reads: its length is estimated.
      if (route === '/speech.mp3') return send(Buffer.concat([Buffer.from('EMULATED mp3 AUDIO\n'), Buffer.alloc(48_000 - 19)]), 'audio/mpeg');
      if (route === '/redirect-here') {
        response.writeHead(302, { location: '/sample.wav' });
        return response.end();
      }
      if (route === '/redirect-to-trap') {
        response.writeHead(302, { location: `${trapUrl}/sample.wav` });
        return response.end();
      }
      if (route === '/big-unannounced') {
        // No content-length: the cap is enforced while reading.
        response.writeHead(200, { 'content-type': 'audio/wav' });
        return response.end(tenSeconds);
      }
      if (route === '/slow.wav') {
        const timer = setTimeout(() => send(sample), 5_000);
        response.on('close', () => {
          clearTimeout(timer);
          slowClosed++;
        });
        return;
      }
      if (route === '/empty.wav') return send(Buffer.alloc(0));
      response.writeHead(404);
      response.end();
    });
    mediaUrl = await listen(media);
    app = await startStandaloneHarness({
      ...emulatedProviders(emulator.url),
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/media-catalogue.yaml'),
      UPSTREAM_TIMEOUT_MS: '5000',
      RATE_LIMIT_RPM: '100000',
      MEDIA_FETCH_ALLOWLIST: new URL(mediaUrl).host,
      MEDIA_FETCH_MAX_BYTES: String(MAX_BYTES),
      // Long enough for /held.mp3 to wait while the test fills the budget; /slow.wav takes longer.
      MEDIA_FETCH_TIMEOUT_MS: '3000',
      MEDIA_IN_FLIGHT_MAX_BYTES: String(IN_FLIGHT_MAX_BYTES),
      STT_MAX_AUDIO_SECONDS: '600',
    });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await emulator?.close();
    await new Promise((resolve) => media?.close(resolve));
    await new Promise((resolve) => trap?.close(resolve));
  });

  const url = () => `${app.gateway}/stt`;
  const ledger = (account: string): Promise<UsageEntry[]> => app.usageEntries(account, 50);
  const ledgerHas = (account: string, count: number) => eventually(async () => (await ledger(account)).length === count, 20_000, 50);
  const transcribe = (key: string, body: Record<string, unknown>) => call<Transcription>(url(), { token: key, body });
  const upstreamCalls = () => emulator.requests.filter((request) => request.path.includes('/audio/transcriptions') || request.path.startsWith('/v1/listen')).length;

  it('fetches the audio, transcribes it with OpenAI and answers Deepgram-style, billed per second', async () => {
    const { accountId, key } = await app.paidKey(1_000_000);
    const answer = await transcribe(key, { model: 'whisper', url: `${mediaUrl}/sample.wav`, language: 'en', prompt: 'fox, dog' });
    expect(answer.status).toBe(200);
    const requestId = answer.headers.get('x-request-id');
    expect(answer.body.metadata).toEqual({ request_id: requestId, created: expect.any(String), duration: 2, channels: 1, model: 'test/whisper' });
    const [channel] = answer.body.results.channels;
    expect(channel.alternatives[0].transcript).toBe(SAMPLE_TRANSCRIPT);
    expect(channel.alternatives[0].words!.map((word) => word.word)).toEqual(['The', 'quick', 'brown', 'fox', 'jumps', 'over', 'the', 'lazy', 'dog.']);
    expect(channel.alternatives[0].words![0]).toEqual({ word: 'The', start: expect.any(Number), end: expect.any(Number) });
    expect(answer.body.meta.usage).toEqual({ credits_used: 2 * CREDITS_PER_SECOND, usd_spent: 0.0002, audio_seconds: 2 });
    const upload = emulator.requests.at(-1)!;
    expect(upload.body).toMatchObject({ model: 'whisper-1', language: 'en', prompt: 'fox, dog' });
    expect(upload.files).toEqual([expect.objectContaining({ field: 'file', filename: 'audio.wav', contentType: 'audio/wav' })]);
    await ledgerHas(accountId, 1);
    const [entry] = await ledger(accountId);
    expect(entry).toMatchObject({ requestId, model: 'test/whisper', endpoint: 'stt', units: { audio_seconds: 2 }, credits: String(2 * CREDITS_PER_SECOND) });
  });

  it('transcribes through Deepgram, leaves words out on request and follows redirects within the allowlist', async () => {
    const { key } = await app.paidKey(1_000_000);
    const answer = await transcribe(key, { model: 'nova', url: `${mediaUrl}/redirect-here`, words: false });
    expect(answer.status).toBe(200);
    expect(answer.body.results.channels[0].alternatives[0]).toEqual({ transcript: SAMPLE_TRANSCRIPT, confidence: 0.99 });
    expect(answer.body.metadata.duration).toBe(2);
    expect(answer.body.meta.usage.audio_seconds).toBe(2);
    expect(emulator.requests.at(-1)!.path).toMatch(/^\/v1\/listen\?model=nova-3&smart_format=true/);
  });

  it("bills audio whose provider reports no length by the file's own length, else estimates it from the size", async () => {
    const { accountId, key } = await app.paidKey(1_000_000);
    const wav = await transcribe(key, { model: 'test/transcribe', url: `${mediaUrl}/five-seconds.wav` });
    expect(wav.status).toBe(200);
    expect(wav.body.metadata.duration).toBe(5);
    expect(wav.body.meta.usage.audio_seconds).toBe(5);
    const mp3 = await transcribe(key, { model: 'test/transcribe', url: `${mediaUrl}/speech.mp3` });
    expect(mp3.status).toBe(200);
    // 48,000 bytes at 16,000 bytes a second.
    expect(mp3.body.metadata.duration).toBe(3);
    expect(mp3.body.meta.usage).toEqual({ credits_used: 3 * CREDITS_PER_SECOND, usd_spent: 0.0003, audio_seconds: 3 });
    expect(emulator.requests.at(-1)!.files).toEqual([expect.objectContaining({ filename: 'audio.mp3', contentType: 'audio/mpeg' })]);
    await ledgerHas(accountId, 2);
    expect((await ledger(accountId)).map((entry) => entry.units)).toEqual([{ audio_seconds: 3 }, { audio_seconds: 5 }]);
  });

  it.each([
    [{ model: undefined }, /^Body validation error! model: Expected a non-empty string\. Received nothing$/],
    [{ url: undefined }, /^Body validation error! url: Expected a non-empty string\. Received nothing$/],
    [{ url: '' }, /^Body validation error! url: Expected a non-empty string\. Received ''$/],
    [{ url: 42 }, /^Body validation error! url: Expected a non-empty string\. Received number 42$/],
    [{ url: `http://127.0.0.1/${'a'.repeat(2048)}` }, /^Body validation error! url: Expected at most 2048 characters\. Received 2065 characters$/],
    [{ language: 'english' }, /^Body validation error! language: Expected a language code such as 'en' or 'pt-BR'\. Received 'english'$/],
    [{ prompt: 'p'.repeat(1001) }, /^Body validation error! prompt: Expected at most 1000 characters\. Received 1001 characters$/],
    [{ words: 'yes' }, /^Body validation error! words: Expected a boolean\. Received string 'yes'$/],
    [{ max_duration_seconds: 0 }, /^Body validation error! max_duration_seconds: Expected an integer of at least 1\. Received 0$/],
    [{ max_duration_seconds: 1.5 }, /^Body validation error! max_duration_seconds: Expected an integer\. Received 1\.5$/],
    [{ max_duration_seconds: 601 }, /^Body validation error! max_duration_seconds: Expected an integer from 1 to 600\. Received 601$/],
    [{ provider: 'deepgram' }, /^Body validation error! provider: Expected one of 'auto', 'fallback', 'openai'\. Received 'deepgram'$/],
    [{ model: 'chatty' }, /^Body validation error! model: 'test\/chat' is an openai\/chat-completions model, not a speech-to-text model\.$/],
  ])('refuses a bad field with a 400 naming it, before any fetch or upstream call (%#)', async (change, message) => {
    const { key } = await app.paidKey(1_000_000);
    const [fetched, upstream] = [mediaHits.length, upstreamCalls()];
    expectErrorBody(await transcribe(key, { model: 'whisper', url: `${mediaUrl}/sample.wav`, ...change }), 400, '/stt', message);
    expect([mediaHits.length, upstreamCalls()]).toEqual([fetched, upstream]);
  });

  it.each([
    ['a URL naming another loopback port', () => `${trapUrl}/sample.wav`, /^Body validation error! url: names a loopback address, which the gateway does not fetch$/],
    ["the emulator's own port", () => `${emulator.url}/media/sample.wav`, /^Body validation error! url: names a loopback address, which the gateway does not fetch$/],
    ['IPv6 loopback', () => `http://[::1]:${new URL(trapUrl).port}/sample.wav`, /^Body validation error! url: names a loopback address, which the gateway does not fetch$/],
    ['localhost by name', () => `http://localhost:${new URL(trapUrl).port}/sample.wav`, /^Body validation error! url: has a host name that resolves to a loopback address, which the gateway does not fetch$/],
    ['a redirect to another loopback port', () => `${mediaUrl}/redirect-to-trap`, /^Body validation error! url: redirects to a URL that names a loopback address, which the gateway does not fetch$/],
    ['another scheme', () => 'file:///etc/passwd', /^Body validation error! url: is not an http or https URL \(got file\)$/],
    ['credentials in the URL', () => `http://user:secret@${new URL(mediaUrl).host}/sample.wav`, /^Body validation error! url: carries a user name or password$/],
    ['not a URL', () => 'sample.wav', /^Body validation error! url: is not a valid absolute URL$/],
    ['an announced oversized file', () => `${mediaUrl}/ten-seconds.wav`, /^Body validation error! url: points to a file larger than the gateway's limit of /],
    ['an unannounced oversized file', () => `${mediaUrl}/big-unannounced`, /^Body validation error! url: points to a file larger than the gateway's limit of /],
    ['a server slower than the limit', () => `${mediaUrl}/slow.wav`, /^Body validation error! url: could not be fetched within the gateway's limit of /],
    ['a missing file', () => `${mediaUrl}/missing.wav`, /^Body validation error! url: could not be fetched: the server answered 404$/],
    ['an empty file', () => `${mediaUrl}/empty.wav`, /^Body validation error! url: answered with an empty file$/],
  ])('refuses %s with a 400, transcribing and billing nothing', async (_name, target, message) => {
    const { accountId, key } = await app.paidKey(1_000_000);
    const [trapped, upstream] = [trapHits, upstreamCalls()];
    expectErrorBody(await transcribe(key, { model: 'whisper', url: target() }), 400, '/stt', message);
    expect([trapHits, upstreamCalls()]).toEqual([trapped, upstream]);
    const { entries, markerCredits } = await ledgerBeforeMarker(app, accountId, key, 'test/chat');
    expect(entries).toHaveLength(0);
    expect(await app.balance(key)).toBeCloseTo(1_000_000 - markerCredits, 6);
  });

  it('refuses a WAV longer than max_duration_seconds before transcribing it', async () => {
    const { key } = await app.paidKey(1_000_000);
    const upstream = upstreamCalls();
    const refused = await transcribe(key, { model: 'whisper', url: `${mediaUrl}/five-seconds.wav`, max_duration_seconds: 4 });
    expectErrorBody(refused, 400, '/stt', /^Body validation error! url: the audio lasts 5 s, longer than the 4 s this request may transcribe/);
    expect(upstreamCalls()).toBe(upstream);
  });

  it.each(['/five-minutes.mp3', '/five-minutes.bin'])(
    'refuses a five-minute MP3 (%s) sent with max_duration_seconds 1 before transcribing it, billing nothing',
    async (file) => {
      const { accountId, key } = await app.paidKey(1_000_000);
      const upstream = upstreamCalls();
      const refused = await transcribe(key, { model: 'whisper', url: `${mediaUrl}${file}`, max_duration_seconds: 1 });
      expectErrorBody(refused, 400, '/stt', /^Body validation error! url: the audio lasts 300 s, longer than the 1 s this request may transcribe/);
      expect(upstreamCalls()).toBe(upstream);
      const { entries, markerCredits } = await ledgerBeforeMarker(app, accountId, key, 'test/chat');
      expect(entries).toHaveLength(0);
      expect(await app.balance(key)).toBeCloseTo(1_000_000 - markerCredits, 6);
    },
  );

  it('bills a five-minute MP3 within the limit for its real length, though the provider heard less', async () => {
    const { accountId, key } = await app.paidKey(1_000_000);
    const answer = await transcribe(key, { model: 'whisper', url: `${mediaUrl}/five-minutes.mp3` });
    expect(answer.status).toBe(200);
    // The emulated Whisper estimates 300,000 bytes at 128 kbit/s: 18.75 s.
    expect(emulator.requests.at(-1)!.files).toEqual([expect.objectContaining({ filename: 'audio.mp3', bytes: 300_000 })]);
    expect(answer.body.metadata.duration).toBe(300);
    expect(answer.body.meta.usage).toEqual({ credits_used: 300 * CREDITS_PER_SECOND, usd_spent: 0.03, audio_seconds: 300 });
    await ledgerHas(accountId, 1);
    expect((await ledger(accountId))[0].units).toEqual({ audio_seconds: 300 });
  });

  it("bills audio whose length cannot be read by the provider's figure, capped at the hold", async () => {
    // 48,000 bytes in no format the gateway reads, held at 1 s; the provider hears 3 s.
    const { accountId, key } = await app.paidKey(1_000_000);
    const answer = await transcribe(key, { model: 'whisper', url: `${mediaUrl}/speech.mp3`, max_duration_seconds: 1 });
    expect(answer.status).toBe(200);
    expect(answer.body.metadata.duration).toBe(3);
    expect(answer.body.meta.usage).toEqual({ credits_used: CREDITS_PER_SECOND, usd_spent: 0.0001, audio_seconds: 1 });
    await ledgerHas(accountId, 1);
    expect((await ledger(accountId))[0].units).toEqual({ audio_seconds: 1 });
    await eventually(async () => (await app.balance(key)) === 1_000_000 - CREDITS_PER_SECOND, 20_000, 50);
  });

  it('never bills past what the bytes of unreadable audio can carry at 2 kbit/s, nor past STT_MAX_AUDIO_SECONDS, whatever the provider reports', async () => {
    // The provider reports 5,000 s for every upload.
    const { accountId, key } = await app.paidKey(1_000_000);
    // Unreadable, 48,000 bytes: at 250 bytes a second, at most 192 s.
    const unreadable = await transcribe(key, { model: 'test/stt-overstates', url: `${mediaUrl}/speech.mp3` });
    expect(unreadable.status).toBe(200);
    expect(unreadable.body.meta.usage).toEqual({ credits_used: 192 * CREDITS_PER_SECOND, usd_spent: 0.0192, audio_seconds: 192 });
    // The same file with a lower max_duration_seconds: that is the bound.
    const lower = await transcribe(key, { model: 'test/stt-overstates', url: `${mediaUrl}/speech.mp3`, max_duration_seconds: 100 });
    expect(lower.body.meta.usage.audio_seconds).toBe(100);
    // A WAV read as 5 s: the longer figure counts, up to STT_MAX_AUDIO_SECONDS (600 here).
    const readable = await transcribe(key, { model: 'test/stt-overstates', url: `${mediaUrl}/five-seconds.wav` });
    expect(readable.status).toBe(200);
    expect(readable.body.meta.usage).toEqual({ credits_used: 600 * CREDITS_PER_SECOND, usd_spent: 0.06, audio_seconds: 600 });
    await ledgerHas(accountId, 3);
    expect((await ledger(accountId)).map((entry) => entry.units)).toEqual([{ audio_seconds: 600 }, { audio_seconds: 100 }, { audio_seconds: 192 }]);
    await eventually(async () => (await app.balance(key)) === 1_000_000 - (192 + 100 + 600) * CREDITS_PER_SECOND, 20_000, 50);
  });

  it('refuses audio past the media the gateway may hold at once with 503 and retry-after, billing nothing, until the holders are done', async () => {
    const holders = [await app.paidKey(1_000_000), await app.paidKey(1_000_000)];
    const { accountId, key } = await app.paidKey(1_000_000);
    let finish!: () => void;
    finishHeld = new Promise<void>((resolve) => (finish = resolve));
    heldSent = 0;
    const held = holders.map((holder) => transcribe(holder.key, { model: 'whisper', url: `${mediaUrl}/held.mp3` }));
    await eventually(async () => heldSent === 2, 10_000, 10);
    // Once the gateway has read both held files' 250,000 bytes, 300,000 more do not fit in 750,000.
    let answered = 0;
    let refused: Awaited<ReturnType<typeof transcribe>> | undefined;
    await eventually(
      async () => {
        const attempt = await transcribe(key, { model: 'whisper', url: `${mediaUrl}/five-minutes.mp3` });
        if (attempt.status === 200) answered++;
        else refused = attempt;
        return refused !== undefined;
      },
      10_000,
      10,
    );
    expectErrorBody(refused!, 503, '/stt', /^Service Unavailable: the audio at url could not be fetched now: the gateway holds as much fetched media as it may at once; try again shortly\.$/);
    expect(refused!.headers.get('retry-after')).toBe('1');
    finish();
    expect((await Promise.all(held)).map((answer) => answer.status)).toEqual([200, 200]);
    // The held requests gave their bytes back when they were over: the same request now goes through.
    const after = await transcribe(key, { model: 'whisper', url: `${mediaUrl}/five-minutes.mp3` });
    expect(after.status).toBe(200);
    // It ended after every other request of the key: once it is billed, so is anything they billed.
    await eventually(async () => (await ledger(accountId)).some((entry) => entry.requestId === after.headers.get('x-request-id')), 20_000, 50);
    expect(await ledger(accountId)).toHaveLength(answered + 1);
  });

  it("refuses a key past its share of the media the gateway may hold with 429 and retry-after, while another key's fetch goes through", async () => {
    const flooding = await app.paidKey(1_000_000);
    const other = await app.paidKey(1_000_000);
    let finish!: () => void;
    finishHeld = new Promise<void>((resolve) => (finish = resolve));
    heldSent = 0;
    const held = transcribe(flooding.key, { model: 'whisper', url: `${mediaUrl}/held.mp3` });
    await eventually(async () => heldSent === 1, 10_000, 10);
    // Once the gateway has read the held file's 250,000 bytes, 300,000 more of the same key pass its
    // 400,000, though the process, at 550,000 of 750,000, has room.
    let answered = 0;
    let refused: Awaited<ReturnType<typeof transcribe>> | undefined;
    await eventually(
      async () => {
        const attempt = await transcribe(flooding.key, { model: 'whisper', url: `${mediaUrl}/five-minutes.mp3` });
        if (attempt.status === 200) answered++;
        else refused = attempt;
        return refused !== undefined;
      },
      10_000,
      10,
    );
    expectErrorBody(
      refused!,
      429,
      '/stt',
      /^Too Many Requests: this API key's requests hold 400000 bytes of fetched media, as much as one key may at once \(MEDIA_IN_FLIGHT_KEY_SHARE\); retry when one of them is over\.$/,
    );
    expect(refused!.headers.get('retry-after')).toBe('1');
    expect((refused!.body as unknown as { error: { type: string; code: string } }).error).toMatchObject({ type: 'rate_limit_error', code: 'rate_limit_exceeded' });
    // The other key's file of the same size fits in what the flooding key left.
    const meanwhile = await transcribe(other.key, { model: 'whisper', url: `${mediaUrl}/five-minutes.mp3` });
    expect(meanwhile.status).toBe(200);
    finish();
    expect((await held).status).toBe(200);
    const after = await transcribe(flooding.key, { model: 'whisper', url: `${mediaUrl}/five-minutes.mp3` });
    expect(after.status).toBe(200);
    // The refused request billed nothing: the key's ledger holds the held one, the answered ones and the last.
    await eventually(async () => (await ledger(flooding.accountId)).some((entry) => entry.requestId === after.headers.get('x-request-id')), 20_000, 50);
    expect(await ledger(flooding.accountId)).toHaveLength(answered + 2);
  });

  it('counts a request whose fetch is refused after the download against the key\'s rate, as any request', async () => {
    const { accountId, key: paid } = await app.paidKey(1_000_000);
    const limited = await call<{ key: string }>(`${app.billing}/admin/v1/accounts/${accountId}/keys`, { token: app.adminToken, body: { rpm: 3 } });
    const key = limited.body.key;
    // The four requests must fall in one minute window (windows are aligned to the clock's minutes).
    if (Date.now() % 60_000 > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - (Date.now() % 60_000) + 100));
    // Downloaded, then refused: too large, and empty.
    expectErrorBody(await transcribe(key, { model: 'whisper', url: `${mediaUrl}/big-unannounced` }), 400, '/stt', /^Body validation error! url: points to a file larger than/);
    expectErrorBody(await transcribe(key, { model: 'whisper', url: `${mediaUrl}/empty.wav` }), 400, '/stt', /^Body validation error! url: answered with an empty file$/);
    expectErrorBody(await transcribe(key, { model: 'whisper', url: `${mediaUrl}/big-unannounced` }), 400, '/stt', /^Body validation error! url: points to a file larger than/);
    const fetched = mediaHits.length;
    const limitedOut = await transcribe(key, { model: 'whisper', url: `${mediaUrl}/sample.wav` });
    expectErrorBody(limitedOut, 429, '/stt', /^Too Many Requests: this API key's rule allows 3 requests per minute; it resets in \d+ s\.$/);
    expect(Number(limitedOut.headers.get('retry-after'))).toBeGreaterThan(0);
    // Refused at admission: the gateway fetched nothing for it.
    expect(mediaHits.length).toBe(fetched);
    // Another key of the account has its own rate.
    expect((await transcribe(paid, { model: 'whisper', url: `${mediaUrl}/sample.wav` })).status).toBe(200);
  });

  it('holds max_duration_seconds of audio, which must fit before anything is fetched (403)', async () => {
    // 100,000 credits: 600 s hold 120,000; 10 s hold 2,000.
    const { accountId, key } = await app.paidKey(100_000);
    const fetched = mediaHits.length;
    const refused = await transcribe(key, { model: 'whisper', url: `${mediaUrl}/sample.wav` });
    expectErrorBody(refused, 403, '/stt');
    expect((refused.body as unknown as { message: string }).message).toBe(ErrorMessages.creditsExhausted);
    expect(mediaHits.length).toBe(fetched);
    const answered = await transcribe(key, { model: 'whisper', url: `${mediaUrl}/sample.wav`, max_duration_seconds: 10 });
    expect(answered.status).toBe(200);
    await ledgerHas(accountId, 1);
    await eventually(async () => (await app.balance(key)) === 100_000 - 2 * CREDITS_PER_SECOND, 20_000, 50);
  });

  it('answers 404 for an unknown model and 401 without a key', async () => {
    const { key } = await app.paidKey(1_000);
    expectErrorBody(await transcribe(key, { model: 'nope', url: `${mediaUrl}/sample.wav` }), 404, '/stt');
    expectErrorBody(await call(url(), { body: { model: 'whisper', url: `${mediaUrl}/sample.wav` } }), 401, '/stt');
  });

  it('bills nothing for a client that leaves while the audio is being fetched', async () => {
    const { accountId, key } = await app.paidKey(1_000_000);
    const [fetched, upstream] = [mediaHits.length, upstreamCalls()];
    const controller = new AbortController();
    const pending = fetch(url(), {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'whisper', url: `${mediaUrl}/slow.wav` }),
      signal: controller.signal,
    });
    pending.catch(() => undefined);
    const closed = slowClosed;
    await eventually(async () => mediaHits.length > fetched, 10_000, 10);
    controller.abort();
    // The gateway gave the fetch up: the audio never came, so nothing can go upstream after this.
    await eventually(async () => slowClosed > closed, 10_000, 10);
    expect(upstreamCalls()).toBe(upstream);
    expect((await ledgerBeforeMarker(app, accountId, key, 'test/chat')).entries).toHaveLength(0);
  });

  it('bills a client that leaves once the audio went upstream, exactly once', async () => {
    const { accountId, key } = await app.paidKey(1_000_000);
    const upstream = emulator.requests.length;
    const controller = new AbortController();
    const pending = fetch(url(), {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/stt-slow', url: `${mediaUrl}/sample.wav` }),
      signal: controller.signal,
    });
    pending.catch(() => undefined);
    const upstreamCall = () => emulator.requests.slice(upstream).find((request) => (request.body as { model?: string })?.model === 'whisper-1@delay=1500');
    await eventually(async () => upstreamCall() !== undefined, 10_000, 10);
    controller.abort();
    // Once the upstream call is over and billed, nothing is left that could bill it again.
    await eventually(async () => upstreamCall()!.ended, 10_000, 10);
    await ledgerHas(accountId, 1);
    const { entries } = await ledgerBeforeMarker(app, accountId, key, 'test/chat');
    expect(entries).toHaveLength(1);
    expect(entries[0].units).toEqual({ audio_seconds: 2 });
  });
});
