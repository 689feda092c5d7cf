import path from 'node:path';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness, type UsageEntry } from './support/standalone-harness';

const DEPLOYMENT_HEADER = 'x-gateway-deployment';
const PROMPT = 'Which deployment answers this?';

/** The JSON lines of the process's output. */
function jsonLines(output: string): Array<Record<string, unknown>> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * Which deployment served a paid request, told three times over: to the client in
 * `x-gateway-deployment`, to the operator in the access log, to accounting in the ledger row
 * (through the usage event). The standalone app with the emulator playing every provider; the
 * body of each answer is read whole, a stream's to its end, before its ledger row is looked for.
 */
describe('the deployment that served a request: header, access log and ledger agree', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/deployments-catalogue.yaml'),
      ...emulatedProviders(emulator.url),
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'log',
    });
    ({ key, accountId } = await harness.paidKey(1_000_000));
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  /** Posts `body` to `route` and reads the whole answer (a stream to its end). */
  async function post(route: string, body: Record<string, unknown>): Promise<{ status: number; headers: Headers; text: string }> {
    const response = await fetch(`${harness.gateway}${route}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: response.status, headers: response.headers, text: await response.text() };
  }

  async function accessLineOf(requestId: string): Promise<Record<string, unknown>> {
    let line: Record<string, unknown> | undefined;
    await eventually(async () => (line = jsonLines(harness.process.output()).find((entry) => entry.context === 'access' && entry.requestId === requestId)) !== undefined, 10_000);
    return line!;
  }

  async function ledgerRowOf(requestId: string): Promise<UsageEntry> {
    let row: UsageEntry | undefined;
    await eventually(async () => (row = (await harness.usageEntries(accountId, 100)).find((entry) => entry.requestId === requestId)) !== undefined, 20_000, 100);
    return row!;
  }

  const chat = { messages: [{ role: 'user', content: PROMPT }] };
  const served: Array<[string, string, Record<string, unknown>, string]> = [
    ['a whole chat completion', '/v1/chat/completions', { ...chat, model: 'mini' }, 'openai/gpt-4o-mini'],
    ['a streamed chat completion', '/v1/chat/completions', { ...chat, model: 'mini', stream: true, stream_options: { include_usage: true } }, 'openai/gpt-4o-mini'],
    ['embeddings', '/v1/embeddings', { model: 'embed', input: PROMPT }, 'openai/text-embedding-3-small'],
    // The first source answers 500: the deployment named is the one that answered, not the one tried first.
    ['a chat completion its fallback served', '/v1/chat/completions', { ...chat, model: 'test/fallback' }, 'together/healthy'],
    ['a Messages answer', '/v1/messages', { ...chat, model: 'claude', max_tokens: 50 }, 'anthropic/claude-test'],
    ['a streamed Messages answer', '/v1/messages', { ...chat, model: 'claude', max_tokens: 50, stream: true }, 'anthropic/claude-test'],
    ['a Responses answer', '/v1/responses', { model: 'mini', input: PROMPT, store: false }, 'openai/gpt-4o-mini'],
    ['an image', '/v1/images/generations', { model: 'image', prompt: 'a lighthouse', size: '1024x1024', quality: 'low' }, 'openai/gpt-image-1'],
    ['speech', '/tts', { model: 'tts', text: 'Hello there.' }, 'openai/tts-1'],
  ];

  it.each(served)('names it for %s: in the header, the access line and the ledger row', async (_what, route, body, deployment) => {
    const answer = await post(route, body);
    expect(answer.status).toBe(200);
    expect(answer.headers.get(DEPLOYMENT_HEADER)).toBe(deployment);
    const requestId = answer.headers.get('x-request-id')!;
    expect(await accessLineOf(requestId)).toMatchObject({ status: 200, route, deployment });
    expect(await ledgerRowOf(requestId)).toMatchObject({ requestId, deployment });
  }, 30_000);

  it("names none on the gateway's own refusal before any upstream was asked", async () => {
    const before = emulator.requests.length;
    const refused = await post('/v1/chat/completions', { ...chat, model: 'mini', max_tokens: -1 });
    expect(refused.status).toBe(400);
    expect(refused.headers.get(DEPLOYMENT_HEADER)).toBeNull();
    expect(emulator.requests.length).toBe(before);
    const line = await accessLineOf(refused.headers.get('x-request-id')!);
    expect(line).toMatchObject({ status: 400 });
    expect(line.deployment).toBeUndefined();
  });
});
