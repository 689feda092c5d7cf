import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { countTokens, estimateChatPromptTokens } from '@igw/tokenizer';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/** A proxy in front of the emulator that keeps the bytes of the last request body it passed on. */
async function startRecordingProxy(target: string): Promise<{ url: string; lastBody: () => string; close: () => Promise<void> }> {
  let last = '';
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      last = Buffer.concat(chunks).toString('utf8');
      void fetch(`${target}${request.url}`, { method: 'POST', headers: { 'content-type': 'application/json', authorization: String(request.headers.authorization) }, body: last }).then(async (answer) => {
        response.writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' });
        response.end(Buffer.from(await answer.arrayBuffer()));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    lastBody: () => last,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/**
 * Long prompts through the built app: counted by the token counting worker beside short
 * requests, and a gateway whose worker has counted still stops at once.
 */
describe('long prompts, end to end', () => {
  let emulator: RunningEmulator;
  let recorder: Awaited<ReturnType<typeof startRecordingProxy>>;
  let harness: StandaloneHarness;
  let key: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    recorder = await startRecordingProxy(emulator.url);
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/long-prompts-catalogue.yaml'),
      ...emulatedProviders(emulator.url),
      // The recorded model's provider, Groq, speaks OpenAI's format through the proxy.
      GROQ_BASE_URL: `${recorder.url}/v1`,
    });
    key = (await harness.paidKey(1_000_000)).key;
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await recorder?.close();
    await emulator?.close();
  });

  const chat = (content: string, model = 'mini', stream = false) =>
    call<{ meta?: { usage: { credits_used: number } } }>(`${harness.gateway}/v1/chat/completions`, { token: key, body: { model, messages: [{ role: 'user', content }], stream } });
  /** Over 16 KB (counted in the workers) and over the 2000-token context in bytes, yet about 330 tokens: runs of spaces make long tokens. */
  const fitsOnceCounted = `hello${' '.repeat(40_000)}world`;
  /** 100 KB of about 20,000 tokens: more than the context, which only a count shows. */
  const tooLongOnceCounted = 'word '.repeat(20_000);
  const refusal = /^Body validation error! messages: the prompt is (about|at least) \d+ tokens, more than the 2000-token context of test\/(mini|unhurried)\.$/;

  it('answers a prompt that fits once counted, counted before the upstream call, and bills its usage', async () => {
    const before = await harness.balance(key);
    const answer = await chat(fitsOnceCounted);
    expect(answer.status).toBe(200);
    const streamed = await fetch(`${harness.gateway}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mini', messages: [{ role: 'user', content: fitsOnceCounted }], stream: true, stream_options: { include_usage: true } }),
    });
    expect(streamed.status).toBe(200);
    const events = await streamed.text();
    expect(events).toContain('data: [DONE]');
    const streamedCredits = Number(/"credits_used":(\d+)/.exec(events)?.[1]);
    expect(streamedCredits).toBeGreaterThan(0);
    const after = before - answer.body.meta!.usage.credits_used - streamedCredits;
    await eventually(async () => (await harness.balance(key)) === after, 10_000);
  });

  it('refuses a prompt over the context once counted, sends nothing upstream, and bills nothing', async () => {
    const before = await harness.balance(key);
    const sent = emulator.requests.length;
    for (const stream of [false, true]) expectErrorBody(await chat(tooLongOnceCounted, 'unhurried', stream), 400, '/v1/chat/completions', refusal);
    expectErrorBody(await chat(tooLongOnceCounted), 400, '/v1/chat/completions', refusal);
    expect(emulator.requests.slice(sent)).toEqual([]);
    // The ledger applies usage in the background: a charge, had there been one, would show by the time this request's does.
    const shown = await chat('hello');
    await eventually(async () => (await harness.balance(key)) === before - shown.body.meta!.usage.credits_used, 10_000);
  });

  it('counts a long prompt an upstream reports no usage for in the workers, as the tokenizer does', async () => {
    const body = { model: 'quiet', messages: [{ role: 'user' as const, content: 'lorem ipsum dolor sit amet, '.repeat(2_000) }] };
    const answer = await call<{ usage: { prompt_tokens: number; completion_tokens: number }; choices: Array<{ message: { content: string } }> }>(`${harness.gateway}/v1/chat/completions`, { token: key, body });
    expect(answer.status).toBe(200);
    expect(answer.body.usage.prompt_tokens).toBe(estimateChatPromptTokens(body));
    expect(answer.body.usage.completion_tokens).toBe(countTokens(answer.body.choices[0].message.content));
  });

  it('refuses a prompt over the context once counted in the worker; short requests beside it are answered', async () => {
    const [long, ...short] = await Promise.all([chat('word '.repeat(200_000)), ...Array.from({ length: 5 }, () => chat('hello'))]);
    expectErrorBody(long, 400, '/v1/chat/completions', /^Body validation error! messages: the prompt is at least \d+ tokens, more than the 2000-token context of test\/mini\.$/);
    for (const answer of short) expect(answer.status).toBe(200);
  });

  it('sends a long conversation upstream as the client wrote it, and as the gateway read it wherever the two differ', async () => {
    const messages = Array.from({ length: 300 }, (_, index) => ({ role: index % 2 ? 'assistant' : 'user', content: `turn ${index} `.repeat(10) }));
    const send = async (text: string) => {
      const answer = await fetch(`${harness.gateway}/v1/chat/completions`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: text });
      expect(answer.status).toBe(200);
      return recorder.lastBody();
    };
    // Spaced out as the client wrote it: those very bytes reach the upstream.
    const spaced = JSON.stringify({ model: 'recorded', messages }, null, 1);
    const upstream = await send(spaced);
    expect(upstream).toContain(spaced.slice(spaced.indexOf('['), spaced.lastIndexOf(']') + 1));
    expect(JSON.parse(upstream)).toEqual({ model: 'gpt-4o-mini', messages, stream: false });
    // A key written twice and a field the gateway does not forward: the upstream gets what the gateway validated.
    const tricky = JSON.stringify({ model: 'recorded', messages }).replace('{"role":"user","content":"turn 0', '{"role":"user","not_forwarded":1,"content":"not what was checked","content":"turn 0');
    const corrected = await send(tricky);
    expect(corrected).not.toContain('not what was checked');
    expect(corrected).not.toContain('not_forwarded');
    expect(JSON.parse(corrected)).toEqual({ model: 'gpt-4o-mini', messages, stream: false });
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
