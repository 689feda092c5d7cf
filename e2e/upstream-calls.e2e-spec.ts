import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { countTokens, estimateChatPromptTokens } from '@igw/tokenizer';
import { eventually } from '@igw/testing';
import { call, expectErrorBody } from './support/http';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/** One request the local upstream received: its model, when it closed, and the texts it streamed. */
interface UpstreamCall {
  model: string;
  /** When the connection closed (the gateway ended the call, or the answer was over). */
  closedAt?: number;
  streamed: string[];
}

/** Milliseconds between two words of the endless stream. */
const WORD_EVERY_MS = 250;

/**
 * A provider speaking OpenAI's wire format, each model a behaviour: `endless` streams a word
 * every WORD_EVERY_MS and never ends, `silent` and `hung` take the request and never answer,
 * anything else answers at once (a chat completion, or embeddings on /embeddings).
 */
async function startLocalUpstream(): Promise<{ url: string; calls: UpstreamCall[]; arrived: () => number; close: () => Promise<void> }> {
  const calls: UpstreamCall[] = [];
  let arrived = 0;
  const server: Server = createServer((request, response) => {
    // Counted as soon as the head arrives: a request cancelled while its body is sent still reached the provider.
    arrived++;
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { model: string; input?: unknown[] };
      const record: UpstreamCall = { model: body.model, streamed: [] };
      calls.push(record);
      let timer: NodeJS.Timeout | undefined;
      response.on('close', () => {
        record.closedAt ??= Date.now();
        clearInterval(timer);
      });
      if (body.model === 'silent' || body.model === 'hung') return;
      if (body.model === 'endless') {
        response.writeHead(200, { 'content-type': 'text/event-stream' });
        const sendWord = () => {
          const word = `word${record.streamed.length} `;
          record.streamed.push(word);
          const chunk = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1, model: 'endless', choices: [{ index: 0, delta: { content: word }, finish_reason: null }] };
          response.write(`data: ${JSON.stringify(chunk)}\n\n`);
        };
        sendWord();
        timer = setInterval(sendWord, WORD_EVERY_MS);
        return;
      }
      response.writeHead(200, { 'content-type': 'application/json' });
      if (request.url?.endsWith('/embeddings')) {
        const data = (body.input ?? []).map((_input, index) => ({ object: 'embedding', index, embedding: [0.1, 0.2] }));
        response.end(JSON.stringify({ object: 'list', data, model: body.model, usage: { prompt_tokens: 5, total_tokens: 5 } }));
        return;
      }
      response.end(
        JSON.stringify({
          id: 'chatcmpl-2',
          object: 'chat.completion',
          created: 1,
          model: body.model,
          choices: [{ index: 0, message: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }],
          usage: { prompt_tokens: 5, completion_tokens: 1, total_tokens: 6 },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    calls,
    arrived: () => arrived,
    close: () => {
      server.closeAllConnections();
      return new Promise((resolve) => server.close(() => resolve()));
    },
  };
}

/**
 * What an upstream call costs when it does not end as asked, against the standalone app and a
 * local upstream: a stream whose client leaves stops at once and is billed for what was
 * generated; a prompt over the context never reaches the upstream; a call that times out bills
 * its prompt and tries no other source. Prices (upstream-calls-catalogue.yaml): an input token
 * 2 credits, an output token 8.
 */
describe('upstream calls that do not end as asked', () => {
  let upstream: Awaited<ReturnType<typeof startLocalUpstream>>;
  let harness: StandaloneHarness;

  beforeAll(async () => {
    upstream = await startLocalUpstream();
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/upstream-calls-catalogue.yaml'),
      OPENAI_API_KEY: 'openai-key',
      OPENAI_BASE_URL: `${upstream.url}/v1`,
      GROQ_API_KEY: 'groq-key',
      GROQ_BASE_URL: `${upstream.url}/v1`,
      // Long: a call that ran on after its client left would still be open when the tests look.
      UPSTREAM_TIMEOUT_MS: '30000',
    });
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await upstream?.close();
  });

  const callsTo = (model: string) => upstream.calls.filter((recorded) => recorded.model === model);
  const ledgerHas = (accountId: string, count: number) => eventually(async () => (await harness.usageEntries(accountId, 10)).length === count, 20_000, 50);
  const streamRequest = (key: string, body: Record<string, unknown>, signal: AbortSignal) =>
    fetch(`${harness.gateway}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ ...body, stream: true }),
      signal,
    });
  /** Waits for the upstream connection of `recorded` to close, and says how long after `since` it did. */
  const closedWithin = async (recorded: UpstreamCall, since: number) => {
    await eventually(async () => recorded.closedAt !== undefined, 5_000, 10);
    return recorded.closedAt! - since;
  };

  describe('a prompt over the context never leaves the gateway', () => {
    /** 100 KB of about 20,000 tokens: more than the 2,000-token context, which only a count (in the workers) shows. */
    const tooLongOnceCounted = 'word '.repeat(20_000);
    /** 40 KB, over the context in bytes, yet about 330 tokens: it must be counted, and fits. */
    const fitsOnceCounted = `hello${' '.repeat(40_000)}world`;

    it('refuses chat and embeddings inputs that only a count shows too long, and no request reaches the upstream', async () => {
      const { key } = await harness.paidKey(10_000_000);
      const before = upstream.arrived();
      for (const stream of [false, true]) {
        const refused = await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { model: 'test/narrow', stream, messages: [{ role: 'user', content: tooLongOnceCounted }] } });
        expectErrorBody(refused, 400, '/v1/chat/completions', /^Body validation error! messages: the prompt is (about|at least) \d+ tokens, more than the 2000-token context of test\/narrow\.$/);
      }
      const refusedEmbeddings = await call(`${harness.gateway}/v1/embeddings`, { token: key, body: { model: 'test/narrow-embed', input: ['short', tooLongOnceCounted] } });
      expectErrorBody(
        refusedEmbeddings,
        400,
        '/v1/embeddings',
        /^Body validation error! input\[1\]: Expected at most 2000 tokens per input \(the context of test\/narrow-embed\)\. Received (about|at least) \d+ tokens$/,
      );
      // A call started beside the count would have arrived by the time a short request's answer does.
      expect((await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { model: 'test/narrow', messages: [{ role: 'user', content: 'hi' }] } })).status).toBe(200);
      expect(upstream.arrived() - before).toBe(1);
    });

    it('counts tool schemas toward the context: a short message with a long tool schema is refused before it is sent', async () => {
      const { key } = await harness.paidKey(10_000_000);
      const before = upstream.arrived();
      const tools = [{ type: 'function', function: { name: 'lookup', description: tooLongOnceCounted, parameters: { type: 'object', properties: {} } } }];
      const refused = await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { model: 'test/narrow', tools, messages: [{ role: 'user', content: 'hi' }] } });
      expectErrorBody(refused, 400, '/v1/chat/completions', /^Body validation error! messages: the prompt is (about|at least) \d+ tokens, more than the 2000-token context of test\/narrow\.$/);
      expect(upstream.arrived() - before).toBe(0);
    });

    it('sends a prompt that had to be counted and fits', async () => {
      const { key } = await harness.paidKey(10_000_000);
      const [chat, embeddings] = await Promise.all([
        call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { model: 'test/narrow', messages: [{ role: 'user', content: fitsOnceCounted }] } }),
        call(`${harness.gateway}/v1/embeddings`, { token: key, body: { model: 'test/narrow-embed', input: fitsOnceCounted } }),
      ]);
      expect(chat.status).toBe(200);
      expect(embeddings.status).toBe(200);
    });
  });

  describe('a client that stops a stream stops the upstream', () => {
    it('mid-stream: the upstream connection closes within a second, the prompt and the words streamed are billed, the hold is given back', async () => {
      // The hold of one endless stream (1,000 output tokens, 8,000 credits and its prompt) leaves too little for another.
      const { accountId, key } = await harness.paidKey(12_000);
      const body = { model: 'test/endless', max_tokens: 1000, messages: [{ role: 'user', content: 'tell me everything, I will stop you' }] };
      const controller = new AbortController();
      const response = await streamRequest(key, body, controller.signal);
      expect(response.status).toBe(200);
      const reader = response.body!.getReader();
      let received = '';
      while ((received.match(/"content":"word/g) ?? []).length < 3) received += new TextDecoder().decode((await reader.read()).value);
      const [recorded] = callsTo('endless').slice(-1);
      const leftAt = Date.now();
      controller.abort();
      expect(await closedWithin(recorded, leftAt)).toBeLessThan(1_000);
      expect(recorded.streamed.length).toBeGreaterThanOrEqual(3);

      await ledgerHas(accountId, 1);
      const [billed] = await harness.usageEntries(accountId, 10);
      // Billed what the gateway had read: at least what reached the client, at most what the
      // upstream wrote (words in flight when the client left may never have been read).
      const shown = [...received.matchAll(/"content":"([^"]*)"/g)].map((match) => match[1]).join('');
      const units = billed.units!;
      expect(units.input_tokens).toBe(estimateChatPromptTokens(body));
      expect(units.output_tokens).toBeGreaterThanOrEqual(countTokens(shown));
      expect(units.output_tokens).toBeLessThanOrEqual(countTokens(recorded.streamed.join('')));
      // The hold went back with the bill: a request holding as much is admitted now.
      const next = await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { ...body, model: 'test/narrow', max_tokens: 500 } });
      expect(next.status).toBe(200);
    });

    it('while the stream opens, after the prompt was sent: the upstream connection closes within a second and the prompt is billed', async () => {
      const { accountId, key } = await harness.paidKey(1_000_000);
      const body = { model: 'test/silent', messages: [{ role: 'user', content: 'answer me, or do not' }] };
      const seen = callsTo('silent').length;
      const controller = new AbortController();
      streamRequest(key, body, controller.signal).catch(() => undefined);
      await eventually(async () => callsTo('silent').length > seen, 10_000, 10);
      const [recorded] = callsTo('silent').slice(-1);
      const leftAt = Date.now();
      controller.abort();
      expect(await closedWithin(recorded, leftAt)).toBeLessThan(1_000);
      await ledgerHas(accountId, 1);
      const [billed] = await harness.usageEntries(accountId, 10);
      expect(billed.units).toEqual({ input_tokens: estimateChatPromptTokens(body), output_tokens: 0 });
    });
  });

  describe('a timed-out upstream call', () => {
    it("answers 504 at the model's own timeout, bills the prompt, and tries no other source", async () => {
      const { accountId, key } = await harness.paidKey(1_000_000);
      const body = { model: 'test/hung', messages: [{ role: 'user', content: 'take your time' }] };
      const started = Date.now();
      expectErrorBody(await call(`${harness.gateway}/v1/chat/completions`, { token: key, body }), 504, '/v1/chat/completions', /^Gateway Timeout/);
      // routing.timeoutSeconds (1 s), not UPSTREAM_TIMEOUT_MS (30 s).
      expect(Date.now() - started).toBeLessThan(10_000);
      // A timeout cools its deployment briefly, sending the next requests to its sibling: wait that out to meet it again.
      await new Promise((resolve) => setTimeout(resolve, 1_100));
      const streamed = await call(`${harness.gateway}/v1/chat/completions`, { token: key, body: { ...body, stream: true } });
      expectErrorBody(streamed, 504, '/v1/chat/completions', /^Gateway Timeout/);
      expect(callsTo('hung')).toHaveLength(2);
      expect(callsTo('second')).toHaveLength(0);
      await ledgerHas(accountId, 2);
      for (const billed of await harness.usageEntries(accountId, 10)) expect(billed.units).toEqual({ input_tokens: estimateChatPromptTokens(body), output_tokens: 0 });
    });
  });
});
