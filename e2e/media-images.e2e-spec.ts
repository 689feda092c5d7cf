import path from 'node:path';
import { OpenAI } from 'openai';
import { ErrorMessages } from '@igw/contracts';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { imageSeed, makePng } from '../tools/emulator/src/media/png';
import { call, expectErrorBody } from './support/http';
import { ledgerBeforeMarker } from './support/ledger-marker';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness, type UsageEntry } from './support/standalone-harness';

interface ImageResult {
  created: number;
  model: string;
  output: { choices: Array<{ index: number; image_base64: string; mime_type: string; revised_prompt?: string; finish_reason?: string; seed?: number }> };
  data?: Array<{ b64_json: string; revised_prompt?: string }>;
  meta: { usage: { credits_used: number; usd_spent: number; images: number; size?: string; steps?: number } };
}

/** USD to credits at the default 2,000,000 credits per USD. */
const credits = (usd: number) => Math.round(usd * 2_000_000);
/** The PNG the emulator paints for a prompt's image `index`, in base64. */
const expectedPng = (prompt: string, width: number, height: number, index = 0) => makePng(width, height, imageSeed(prompt, index)).toString('base64');

/**
 * POST /images/generations (and /v1/images/generations) against the standalone gateway, the
 * OpenAI images API, an OpenAI-compatible diffusion server and Stability played by the emulator.
 * Prices: media-catalogue.yaml.
 */
describe('image generation (POST /images/generations)', () => {
  let emulator: RunningEmulator;
  let app: StandaloneHarness;

  beforeAll(async () => {
    emulator = await startEmulator();
    app = await startStandaloneHarness({
      ...emulatedProviders(emulator.url),
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/media-catalogue.yaml'),
      UPSTREAM_TIMEOUT_MS: '5000',
      RATE_LIMIT_RPM: '100000',
    });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await emulator?.close();
  });

  const url = () => `${app.gateway}/images/generations`;
  const ledger = (account: string): Promise<UsageEntry[]> => app.usageEntries(account, 50);
  const ledgerHas = (account: string, count: number) => eventually(async () => (await ledger(account)).length === count, 20_000, 50);
  const generate = (key: string, body: Record<string, unknown>, at = url()) => call<ImageResult>(at, { token: key, body });

  it('answers base64 PNGs in output.choices, billed at the variant of the size made and the quality asked', async () => {
    const { accountId, key } = await app.paidKey(1_000_000);
    const prompt = 'a lighthouse on a cliff at dusk';
    const answer = await generate(key, { model: 'image', prompt, n: 2, size: '1024x1024', quality: 'low' });
    expect(answer.status).toBe(200);
    expect(answer.body.model).toBe('test/image');
    expect(Math.abs(answer.body.created - Date.now() / 1000)).toBeLessThan(60);
    expect(answer.body.output.choices).toEqual([
      { index: 0, image_base64: expectedPng(prompt, 1024, 1024, 0), mime_type: 'image/png' },
      { index: 1, image_base64: expectedPng(prompt, 1024, 1024, 1), mime_type: 'image/png' },
    ]);
    // The spec path sends each image once: no OpenAI `data` copy.
    expect(answer.body).not.toHaveProperty('data');
    expect(answer.body.meta.usage).toEqual({ credits_used: credits(0.02), usd_spent: 0.02, images: 2, size: '1024x1024' });
    expect(emulator.requests.at(-1)!.body).toEqual({ model: 'gpt-image-1', prompt, n: 2, size: '1024x1024', quality: 'low' });
    await ledgerHas(accountId, 1);
    const [entry] = await ledger(accountId);
    expect(entry).toMatchObject({ requestId: answer.headers.get('x-request-id'), model: 'test/image', endpoint: 'images.generations', units: { images: 2 }, credits: String(credits(0.02)) });
    // The ledger keeps the variant's price, the one charged.
    expect(entry.prices).toEqual([{ unit: 'images', price: 0.01, per: 1 }]);
  });

  it("asks for the model's default quality when none is given, and bills the size the upstream made", async () => {
    const { key } = await app.paidKey(1_000_000);
    const auto = await generate(key, { model: 'image', prompt: 'no size, no quality' });
    expect(auto.status).toBe(200);
    expect(emulator.requests.at(-1)!.body).toEqual({ model: 'gpt-image-1', prompt: 'no size, no quality', quality: 'auto' });
    // GPT Image's `auto` size is 1024x1024: billed at 1024x1024/auto (0.03), not the 0.04 held for 1536x1024.
    expect(auto.body.meta.usage).toMatchObject({ credits_used: credits(0.03), images: 1, size: '1024x1024' });
    const wide = await generate(key, { model: 'image', prompt: 'wide', size: '1536x1024', quality: 'high' });
    expect(wide.body.meta.usage).toMatchObject({ credits_used: credits(0.04), size: '1536x1024' });
    expect(wide.body.output.choices[0].image_base64).toBe(expectedPng('wide', 1536, 1024));

    const dalle = await generate(key, { model: 'dalle', prompt: 'a cat', style: 'natural', user: 'user-7' });
    expect(dalle.status).toBe(200);
    // DALL·E 3's default quality is the first its prices list (standard), sent so the bill matches.
    expect(emulator.requests.at(-1)!.body).toEqual({ model: 'dall-e-3', prompt: 'a cat', quality: 'standard', style: 'natural', user: 'user-7', response_format: 'b64_json' });
    expect(dalle.body.output.choices[0].revised_prompt).toEqual(expect.any(String));
    expect(dalle.body.meta.usage).toMatchObject({ credits_used: credits(0.01), size: '1024x1024' });
  });

  it('generates through Stability (one call per image) with its options', async () => {
    const { accountId, key } = await app.paidKey(1_000_000);
    const before = emulator.requests.length;
    const answer = await generate(key, { model: 'stability', prompt: 'a fox', n: 2, size: '1344x768', negative_prompt: 'blur', seed: 40, style_preset: 'anime', output_format: 'png' });
    expect(answer.status).toBe(200);
    const calls = emulator.requests.slice(before);
    expect(calls.map((request) => request.path)).toEqual(['/v2beta/stable-image/generate/core', '/v2beta/stable-image/generate/core']);
    expect(calls.map((request) => (request.body as Record<string, string>).seed)).toEqual(['40', '41']);
    expect(calls[0].body).toMatchObject({ prompt: 'a fox', negative_prompt: 'blur', aspect_ratio: '16:9', style_preset: 'anime', output_format: 'png' });
    expect(answer.body.output.choices.map((choice) => choice.seed)).toEqual([40, 41]);
    expect(answer.body.output.choices[0].finish_reason).toBe('SUCCESS');
    expect(answer.body.meta.usage).toEqual({ credits_used: credits(0.06), usd_spent: 0.06, images: 2, size: '1344x768' });
    await ledgerHas(accountId, 1);
    expect((await ledger(accountId))[0].units).toEqual({ images: 2 });
  });

  it('bills per image and per step where the catalogue prices steps', async () => {
    const { accountId, key } = await app.paidKey(1_000_000);
    const answer = await generate(key, { model: 'diffusion', prompt: 'quick sketch', n: 2, steps: 4, size: '512x512' });
    expect(answer.status).toBe(200);
    expect(emulator.requests.at(-1)!.body).toMatchObject({ model: 'flux-schnell', steps: 4, n: 2, size: '512x512' });
    // 2 images at 0.001 and 8 steps at 0.0001.
    expect(answer.body.meta.usage).toEqual({ credits_used: credits(0.0028), usd_spent: 0.0028, images: 2, size: '512x512', steps: 8 });
    await ledgerHas(accountId, 1);
    expect((await ledger(accountId))[0].units).toEqual({ images: 2, steps: 8 });
  });

  it("works with the official openai client's images.generate, which reads data[i].b64_json", async () => {
    const { key } = await app.paidKey(1_000_000);
    const client = new OpenAI({ baseURL: `${app.gateway}/v1`, apiKey: key, maxRetries: 0 });
    const prompt = 'an SDK user draws a boat';
    const result = (await client.images.generate({ model: 'image', prompt, size: '1024x1024', quality: 'medium' })) as OpenAI.ImagesResponse & Partial<ImageResult>;
    expect(result.data).toEqual([{ b64_json: expectedPng(prompt, 1024, 1024) }]);
    expect(result.output!.choices[0].image_base64).toBe(result.data![0].b64_json);
    expect(result.meta!.usage.credits_used).toBe(credits(0.02));
    const dalle = await client.images.generate({ model: 'dalle', prompt: 'revise me', response_format: 'b64_json' });
    expect(dalle.data![0].revised_prompt).toEqual(expect.any(String));
    // Links (response_format: 'url'): e2e/openai-audio.e2e-spec.ts.
    await expect(client.images.generate({ model: 'nope', prompt: 'x' })).rejects.toMatchObject({ status: 404 });
  });

  it.each([
    [{ model: undefined }, /^Body validation error! model: Expected a non-empty string\. Received nothing$/],
    [{ prompt: undefined }, /^Body validation error! prompt: Expected a non-empty string\. Received nothing$/],
    [{ prompt: '' }, /^Body validation error! prompt: Expected a non-empty string\. Received ''$/],
    [{ prompt: 'p'.repeat(32_001) }, /^Body validation error! prompt: Expected at most 32000 characters\. Received 32001 characters$/],
    [{ n: 0 }, /^Body validation error! n: Expected an integer from 1 to 10\. Received 0$/],
    [{ n: 11 }, /^Body validation error! n: Expected an integer from 1 to 10\. Received 11$/],
    [{ n: 1.5 }, /^Body validation error! n: Expected an integer\. Received 1\.5$/],
    [{ size: '1024' }, /^Body validation error! size: Expected 'auto' or WIDTHxHEIGHT with sides from 1 to 4096 \(e\.g\. '1024x1024'\)\. Received '1024'$/],
    [{ size: '8192x8192' }, /^Body validation error! size: Expected 'auto' or WIDTHxHEIGHT .* Received '8192x8192'$/],
    [{ size: 1024 }, /^Body validation error! size: Expected 'auto' or WIDTHxHEIGHT .* Received number 1024$/],
    [{ quality: 'ultra' }, /^Body validation error! quality: Expected one of 'auto', 'low', 'medium', 'high', 'standard', 'hd'\. Received 'ultra'$/],
    [{ steps: 0 }, /^Body validation error! steps: Expected an integer from 1 to 150\. Received 0$/],
    [{ steps: 151 }, /^Body validation error! steps: Expected an integer from 1 to 150\. Received 151$/],
    [{ seed: -1 }, /^Body validation error! seed: Expected an integer from 0 to 4294967294\. Received -1$/],
    [{ negative_prompt: 3 }, /^Body validation error! negative_prompt: Expected a string\. Received number 3$/],
    [{ output_format: 'gif' }, /^Body validation error! output_format: Expected one of 'png', 'jpeg', 'webp'\. Received 'gif'$/],
    [{ response_format: 'png' }, /^Body validation error! response_format: Expected one of 'b64_json', 'url'\. Received 'png'$/],
    [{ response_format: 'url' }, /^Body validation error! response_format: 'url' is served on \/v1\/images\/generations \(OpenAI's shape\); this route answers base64 in output\.choices\.$/],
    [{ style: 'bold' }, /^Body validation error! style: Expected one of 'vivid', 'natural'\. Received 'bold'$/],
    [{ background: 'green' }, /^Body validation error! background: Expected one of 'auto', 'transparent', 'opaque'\. Received 'green'$/],
    [{ style_preset: 'Anime Style' }, /^Body validation error! style_preset: Expected 1-64 lower-case letters, digits, '_' or '-'\. Received 'Anime Style'$/],
    [{ user: 1 }, /^Body validation error! user: Expected a string\. Received number 1$/],
    [{ provider: 'stability' }, /^Body validation error! provider: Expected one of 'auto', 'fallback', 'openai'\. Received 'stability'$/],
    [{ model: 'chatty' }, /^Body validation error! model: 'test\/chat' is an openai\/chat-completions model, not an image generation model\.$/],
  ])('refuses a bad field with a 400 naming it, before any upstream call (%#)', async (change, message) => {
    const { key } = await app.paidKey(1_000_000);
    const before = emulator.requests.length;
    expectErrorBody(await generate(key, { model: 'image', prompt: 'x', ...change }), 400, '/images/generations', message);
    expect(emulator.requests.length).toBe(before);
  });

  it('serves /v1/images/generations with the same checks, 404 for an unknown model and 401 without a key', async () => {
    const { key } = await app.paidKey(1_000_000);
    expectErrorBody(await generate(key, { model: 'image', prompt: 'x', n: 0 }, `${app.gateway}/v1/images/generations`), 400, '/v1/images/generations', /^Body validation error! n: /);
    expectErrorBody(await generate(key, { model: 'nope', prompt: 'x' }), 404, '/images/generations');
    expectErrorBody(await call(url(), { body: { model: 'image', prompt: 'x' } }), 401, '/images/generations');
  });

  it('holds n images at the asked variant (or the dearest it may be) and refuses with 403 when that does not fit', async () => {
    // 100,000 credits: two 1536x1024 high images hold 160,000; two low ones 60,000.
    const { accountId, key } = await app.paidKey(100_000);
    const before = emulator.requests.length;
    const refused = await generate(key, { model: 'image', prompt: 'too dear', n: 2, size: '1536x1024', quality: 'high' });
    expectErrorBody(refused, 403, '/images/generations');
    expect((refused.body as unknown as { message: string }).message).toBe(ErrorMessages.creditsExhausted);
    // Without a size, quality high may be made at 1536x1024: the dearest is held.
    expectErrorBody(await generate(key, { model: 'image', prompt: 'too dear', n: 3, quality: 'high' }), 403, '/images/generations');
    expect(emulator.requests.length).toBe(before);
    expect((await generate(key, { model: 'image', prompt: 'cheap', n: 2, size: '1536x1024', quality: 'low' })).status).toBe(200);
    await ledgerHas(accountId, 1);
    await eventually(async () => (await app.balance(key)) === 100_000 - credits(0.03), 20_000, 50);
  });

  it('falls back to the next source when the first answers 500', async () => {
    const { key } = await app.paidKey(1_000_000);
    const answer = await generate(key, { model: 'test/image-fallback', prompt: 'second source' });
    expect(answer.status).toBe(200);
    expect(emulator.requests.slice(-2).map((request) => (request.body as { model: string }).model)).toEqual(['broken@status=500', 'gpt-image-1']);
  });

  it('bills a client that leaves once the prompt went upstream, exactly once', async () => {
    const { accountId, key } = await app.paidKey(1_000_000);
    const prompt = 'I will not wait for my picture';
    const seen = emulator.requests.length;
    const controller = new AbortController();
    const pending = fetch(url(), {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/image-slow', prompt, n: 2 }),
      signal: controller.signal,
    });
    pending.catch(() => undefined);
    await eventually(async () => emulator.requests.slice(seen).some((request) => (request.body as { prompt?: string })?.prompt === prompt), 10_000, 10);
    controller.abort();
    const upstreamCall = emulator.requests.slice(seen).find((request) => (request.body as { prompt?: string })?.prompt === prompt)!;
    // Once the upstream call is over and billed, nothing is left that could bill it again.
    await eventually(async () => upstreamCall.ended, 10_000, 10);
    await ledgerHas(accountId, 1);
    const { entries } = await ledgerBeforeMarker(app, accountId, key, 'test/chat');
    expect(entries).toHaveLength(1);
    expect(entries[0].units).toEqual({ images: 2 });
    expect(entries[0].credits).toBe(String(credits(0.02)));
    expect(upstreamCall.closedEarly).toBe(false);
  });
});
