// The adapters are tested against the repository's emulator, started in-process (as e2e/ does).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startEmulator, type RunningEmulator } from '../../../tools/emulator/src/emulator';
import type { ProviderTarget } from './provider.types';
import type { ProviderKind } from './provider-definition';
import { providerKind } from './registry';
import { Cancellation } from './transport/cancellation';

let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
});

afterAll(async () => {
  await emulator.close();
});

/** Polls until the check passes, for at most `timeoutMs`. */
async function within(timeoutMs: number, check: () => boolean): Promise<boolean> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) return false;
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
  return true;
}

// A client that stops a stream stops the upstream: the gateway aborts the call's signal, which
// every chat adapter must hand to the upstream request itself, whatever its wire format.
describe.each<[ProviderKind, string, string]>([
  ['openai', '/v1', 'gpt-4o-mini'],
  ['azure-openai', '', 'my-deployment'],
  ['anthropic', '', 'claude-test'],
  ['google', '/v1beta', 'gemini-test'],
])('%s: a stream aborted mid-way', (kind, basePath, model) => {
  it('closes its upstream connection at once', async () => {
    const marker = `${model}@endless-stream@chunk-delay=100`;
    const target: ProviderTarget = { provider: kind, model: marker, baseUrl: `${emulator.url}${basePath}`, apiKey: 'key' };
    const signal = new Cancellation();
    const batches = await providerKind(kind).chat.stream(target, { model: marker, messages: [{ role: 'user', content: 'go on forever' }] }, { timeoutMs: 10_000, signal });
    const iterator = batches[Symbol.asyncIterator]();
    expect((await iterator.next()).done).toBe(false);
    const recorded = emulator.requests.findLast((request) => decodeURIComponent(request.path).includes(marker) || JSON.stringify(request.body ?? '').includes(marker))!;
    expect(recorded.closedEarly).toBe(false);

    signal.abort();
    await expect(iterator.next()).rejects.toBeDefined();
    expect(await within(1_000, () => recorded.closedEarly)).toBe(true);
  });
});
