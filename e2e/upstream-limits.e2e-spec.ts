import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

const MIB = 1024 * 1024;

/** The gateway process's resident memory, as the kernel counts it. */
async function residentBytes(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const kilobytes = /^VmRSS:\s+(\d+) kB$/m.exec(status);
  if (!kilobytes) throw new Error(`no VmRSS in /proc/${pid}/status`);
  return Number(kilobytes[1]) * 1024;
}

/**
 * Upstreams that answer without bounds (the emulator's hostile controls) against the standalone
 * gateway with small limits: 1 MiB for an answer and for one stream event. Every such answer
 * costs the gateway at most its limit, the upstream connection is closed at once, and the
 * client gets a clean error (or a clean end of its stream, billed for what it was sent).
 */
describe('upstream answers past the gateway limits', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let key: string;
  let accountId: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/upstream-limits-catalogue.yaml'),
      UPSTREAM_MAX_RESPONSE_BYTES: String(MIB),
      UPSTREAM_MAX_EVENT_BYTES: String(MIB),
      UPSTREAM_MAX_ERROR_BYTES: String(16 * 1024),
      ...emulatedProviders(emulator.url),
    });
    ({ key, accountId } = await harness.paidKey(1_000_000));
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  const ask = (model: string, extra: Record<string, unknown> = {}) => ({ model, messages: [{ role: 'user', content: 'hello there' }], ...extra });
  const chat = (model: string, extra: Record<string, unknown> = {}) => call(`${harness.gateway}/v1/chat/completions`, { token: key, body: ask(model, extra) });
  /** The emulator's record of the newest request whose upstream model name contains `marker`. */
  const upstreamRequest = (marker: string) =>
    emulator.requests.findLast((request) => decodeURIComponent(request.path).includes(marker) || JSON.stringify(request.body ?? '').includes(marker));

  /** Streams a chat and returns the `data:` payloads, the request id, and whether `[DONE]` came. */
  async function streamChat(model: string): Promise<{ status: number; requestId: string; events: Array<Record<string, unknown>>; done: boolean }> {
    const response = await fetch(`${harness.gateway}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(ask(model, { stream: true })),
    });
    const text = await response.text();
    const payloads = text
      .split('\n\n')
      .filter((frame) => frame.startsWith('data: '))
      .map((frame) => frame.slice(6));
    const done = payloads.at(-1) === '[DONE]';
    return {
      status: response.status,
      requestId: response.headers.get('x-request-id')!,
      events: payloads.filter((payload) => payload !== '[DONE]').map((payload) => JSON.parse(payload) as Record<string, unknown>),
      done,
    };
  }

  it.each([
    ['OpenAI chat', 'test/huge-openai', '/v1/chat/completions', 'gpt-4o-mini@huge-body'],
    ['Azure chat', 'test/huge-azure', '/v1/chat/completions', 'my-deployment@huge-body'],
    ['Anthropic chat', 'test/huge-anthropic', '/v1/chat/completions', 'claude-test@huge-body'],
    ['Gemini chat', 'test/huge-gemini', '/v1/chat/completions', 'gemini-test@huge-body'],
    ['OpenAI embeddings', 'test/huge-embed', '/v1/embeddings', 'text-embedding-3-small@huge-body'],
    ['Azure embeddings', 'test/huge-embed-azure', '/v1/embeddings', 'my-embedder@huge-body'],
    ['Gemini embeddings', 'test/huge-embed-gemini', '/v1/embeddings', 'gemini-embedding@huge-body'],
  ])('answers 502 to a 384 MiB %s answer, having closed the upstream connection early', async (_label, model, endpoint, marker) => {
    const body = endpoint === '/v1/embeddings' ? { model, input: ['hello there'] } : ask(model);
    const response = await call(`${harness.gateway}${endpoint}`, { token: key, body });
    expectErrorBody(response, 502, endpoint, /^Bad Gateway: the upstream answer from (openai|azure|anthropic|google) exceeded the gateway's limit of 1 MiB$/);
    // Refused once: an answer past the limits is not tried again elsewhere.
    expect(emulator.requests.filter((request) => decodeURIComponent(request.path).includes(marker) || JSON.stringify(request.body ?? '').includes(marker))).toHaveLength(1);
    await eventually(async () => upstreamRequest(marker)?.closedEarly === true, 5_000);
  });

  it('keeps its memory while refusing huge answers', async () => {
    const pid = harness.process.child.pid!;
    expect((await chat('test/mini')).status).toBe(200);
    const before = await residentBytes(pid);
    for (let round = 0; round < 3; round++) {
      const answers = await Promise.all(['test/huge-openai', 'test/huge-anthropic', 'test/huge-gemini'].map((model) => chat(model)));
      expect(answers.map((answer) => answer.status)).toEqual([502, 502, 502]);
    }
    const grown = (await residentBytes(pid)) - before;
    // Nine answers of 384 MiB went by; reading even one of them would have taken more than this.
    expect(grown).toBeLessThan(128 * MIB);
    expect((await chat('test/mini')).status).toBe(200);
  });

  it.each([
    ['OpenAI', 'test/endless-openai', 'gpt-4o-mini@endless-stream'],
    ['Anthropic', 'test/endless-anthropic', 'claude-test@endless-stream'],
    ['Gemini', 'test/endless-gemini', 'gemini-test@endless-stream'],
  ])('ends an endless %s stream at its model\'s maxStreamSeconds with an error event, billing what was sent', async (_label, model, marker) => {
    const stream = await streamChat(model);
    expect(stream.status).toBe(200);
    expect(stream.done).toBe(false);
    const last = stream.events.at(-1)!;
    expect(last).toEqual({ error: { message: expect.stringMatching(/^Bad Gateway: the upstream stream from (openai|anthropic|google) ran past the gateway's limit of 2 s$/), type: 'upstream_error' } });
    const content = stream.events.slice(0, -1).map((event) => (event.choices as Array<{ delta: { content?: string } }>)[0]?.delta.content ?? '').join('');
    expect(content).toMatch(/^(more )+$/);
    await eventually(async () => upstreamRequest(marker)?.closedEarly === true, 5_000);
    // The ledger bills the stream for the words it delivered (counted, as the upstream never said).
    let billed: { units: Record<string, number> | null } | undefined;
    await eventually(async () => {
      billed = (await harness.usageEntries(accountId, 50)).find((entry) => entry.requestId === stream.requestId);
      return billed !== undefined;
    }, 10_000);
    expect(billed!.units!.output_tokens).toBeGreaterThan(0);
    expect(billed!.units!.input_tokens).toBeGreaterThan(0);
  });

  it('ends a stream cleanly at a line past the event limit, having delivered the events before it', async () => {
    const stream = await streamChat('test/giant-line');
    expect(stream.status).toBe(200);
    expect(stream.done).toBe(false);
    expect(stream.events).toHaveLength(2);
    expect((stream.events[0].choices as Array<{ delta: { content?: string } }>)[0].delta.content).toBe('more ');
    expect(stream.events[1]).toEqual({
      error: { message: "Bad Gateway: the upstream stream from openai sent an event past the gateway's limit of 1 MiB", type: 'upstream_error' },
    });
    await eventually(async () => upstreamRequest('gpt-4o-mini@huge-line')?.closedEarly === true, 5_000);
    let billed: { units: Record<string, number> | null } | undefined;
    await eventually(async () => {
      billed = (await harness.usageEntries(accountId, 50)).find((entry) => entry.requestId === stream.requestId);
      return billed !== undefined;
    }, 10_000);
    expect(billed!.units!.output_tokens).toBeGreaterThan(0);
  });

  it('reads only the start of an error body that never ends, streamed or not', async () => {
    const refused = await chat('test/endless-error');
    expectErrorBody(refused, 502, '/v1/chat/completions', /^Bad Gateway: the upstream provider openai failed \(503\)\.$/);
    await eventually(async () => upstreamRequest('gpt-4o-mini@status=503@endless-error')?.closedEarly === true, 5_000);
    const streamed = await chat('test/endless-error', { stream: true });
    expectErrorBody(streamed, 502, '/v1/chat/completions', /^Bad Gateway: the upstream provider openai failed \(503\)\.$/);
  });
});
