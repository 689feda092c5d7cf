import path from 'node:path';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody } from './support/http';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/** Short, so a stream of a few seconds outlives it several times over. */
const HOLD_LAPSE_MS = 600;
const STREAMED_WORDS = 10;

/**
 * A request's concurrency slot and credit hold lapse on their own (so a replica that dies
 * leaves nothing held for ever), yet a stream that runs longer than that keeps them: it renews
 * them while it runs. With one slot per key, a second request during a long stream is refused
 * however long the stream has run, and admitted once it has ended. Runs with the limits in
 * Redis or in the process, whichever the test run uses.
 */
describe('a stream that runs longer than a hold lives', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/long-stream-catalogue.yaml'),
      OPENAI_API_KEY: 'k',
      OPENAI_BASE_URL: `${emulator.url}/v1`,
      RATE_LIMIT_CONCURRENCY: '1',
      REQUEST_HOLD_LAPSE_MS: String(HOLD_LAPSE_MS),
    });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  it('keeps its slot until it ends, then gives it back', async () => {
    const { key } = await harness.paidKey(100_000);
    const quick = () => call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { model: 'mini', messages: [{ role: 'user', content: 'hello' }] } });
    const response = await fetch(`${harness.gateway}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'test/long', stream: true, max_tokens: STREAMED_WORDS, messages: [{ role: 'user', content: 'tell me a long story' }] }),
    });
    expect(response.status).toBe(200);
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    let text = '';
    const events = () => text.split('\n\n').filter((event) => event.startsWith('data: ')).length;
    // Each event comes 250 ms after the last: after six, the stream has run past its hold's first lapse twice.
    while (events() < 6) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`the stream ended early: ${text}`);
      text += decoder.decode(value, { stream: true });
    }
    const during = await quick();
    expectErrorBody(during, 429, '/v1/chat/completions', /^Too Many Requests$/);
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value, { stream: true });
    }
    // The stream ran to its end, after the refusal.
    expect(text.trimEnd().endsWith('data: [DONE]')).toBe(true);
    expect(events()).toBeGreaterThan(6);
    await eventually(async () => (await quick()).status === 200, 5_000, 100);
  }, 60_000);
});
