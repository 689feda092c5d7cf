import path from 'node:path';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/**
 * Long prompts through the built app: counted by the token counting worker beside short
 * requests, and a gateway whose worker has counted still stops at once.
 */
describe('long prompts, end to end', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let key: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({ CATALOGUE_FILE: path.join(__dirname, 'fixtures/chat-catalogue.yaml'), ...emulatedProviders(emulator.url) });
    key = (await harness.paidKey(1_000_000)).key;
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  const chat = (content: string) => call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { model: 'mini', messages: [{ role: 'user', content }] } });

  it('refuses a prompt over the context once counted in the worker; short requests beside it are answered', async () => {
    const [long, ...short] = await Promise.all([chat('word '.repeat(200_000)), ...Array.from({ length: 5 }, () => chat('hello'))]);
    expectErrorBody(long, 400, '/v1/chat/completions', /^Body validation error! messages: the prompt is at least \d+ tokens, more than the 2000-token context of test\/mini\.$/);
    for (const answer of short) expect(answer.status).toBe(200);
  });

  it('stops on SIGTERM with exit code 0, its counting worker included', async () => {
    expect((await chat('word '.repeat(20_000))).status).toBe(400);
    const { child } = harness.process;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill('SIGTERM');
    // The harness would SIGKILL a process still running after 15 s (exit code null).
    const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
    expect(await exited).toBe(0);
    clearTimeout(timer);
  });
});
