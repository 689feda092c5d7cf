import path from 'node:path';
import { ErrorMessages } from '@igw/contracts';
import { countTokens, creditsToMicro, estimateChatPromptTokens } from '@igw/domain';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, eventually, expectErrorBody } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness, type UsageEntry } from './support/standalone-harness';

/**
 * Credit holds and billing under hostile and careless use, against the standalone app with
 * the emulator as every upstream: a hold covers `n` choices and the paid extras a request
 * turns on, and must fit in what is left; a client that leaves once the prompt went upstream
 * is billed what the upstream reports (or, when it reports nothing, a tokenizer estimate).
 * Prices (money-catalogue.yaml): an input token 2 credits, an output token 8, a search 20,000.
 */
describe('credit holds and abandoned requests', () => {
  let emulator: RunningEmulator;
  let app: StandaloneHarness;

  beforeAll(async () => {
    emulator = await startEmulator();
    app = await startStandaloneHarness({
      ...emulatedProviders(emulator.url),
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/money-catalogue.yaml'),
      RATE_LIMIT_RPM: '100000',
      RATE_LIMIT_CONCURRENCY: '1000',
    });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await emulator?.close();
  });

  const chat = (key: string, body: Record<string, unknown>) => call<Record<string, unknown>>(`${app.gateway}/v1/chat/completions`, { token: key, body });
  const upstreamCalls = (marker: string) => emulator.requests.filter((request) => JSON.stringify(request.body ?? {}).includes(marker));
  const ledger = async (accountId: string): Promise<UsageEntry[]> => app.usageEntries(accountId, 50);
  const ledgerHas = (accountId: string, count: number) => eventually(async () => (await ledger(accountId)).length === count, 20_000, 50);
  /** Waits a little longer and checks nothing else arrived: billed exactly once. */
  const stillHas = async (accountId: string, count: number) => {
    await new Promise((resolve) => setTimeout(resolve, 700));
    expect(await ledger(accountId)).toHaveLength(count);
  };

  /** Sends a request and drops the connection as soon as the emulator has it (the upstream call began). */
  async function leaveOnceUpstream(url: string, key: string, body: Record<string, unknown>, marker: string, readFirst = false): Promise<void> {
    const seen = upstreamCalls(marker).length;
    const controller = new AbortController();
    const response = fetch(url, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
      signal: controller.signal,
    });
    response.catch(() => undefined);
    if (readFirst) {
      // A stream: read its first events, then leave.
      const reader = (await response).body!.getReader();
      let text = '';
      while ((text.match(/data: /g) ?? []).length < 3) text += new TextDecoder().decode((await reader.read()).value);
    } else {
      await eventually(async () => upstreamCalls(marker).length > seen, 10_000, 10);
    }
    controller.abort();
  }

  describe('the hold covers n choices and must fit', () => {
    it('refuses n × the output ceiling over the balance with the spec\'s 403, before any upstream call', async () => {
      // $0.01: 20,000 credits. 64 choices of up to 1,000 tokens may cost 512,000.
      const { key } = await app.paidKey(20_000);
      const marker = 'sixty-four choices please';
      const refused = await chat(key, { model: 'mini', n: 64, max_tokens: 1000, messages: [{ role: 'user', content: marker }] });
      expectErrorBody(refused, 403, '/v1/chat/completions');
      expect(refused.body.message).toBe(ErrorMessages.creditsExhausted);
      expect(upstreamCalls(marker)).toHaveLength(0);
      // One choice of the same size fits (8,000 credits at most) and is served.
      expect((await chat(key, { model: 'mini', max_tokens: 1000, messages: [{ role: 'user', content: marker }] })).status).toBe(200);
    });

    it('never lets n = 128 drive a balance below zero', async () => {
      const { accountId, key } = await app.paidKey(1_000);
      const marker = 'one hundred and twenty-eight answers';
      const answers = await Promise.all(
        Array.from({ length: 6 }, () => chat(key, { model: 'mini', n: 128, max_tokens: 20, messages: [{ role: 'user', content: `${marker}, each a long story` }] })),
      );
      expect(answers.map((answer) => answer.status)).toEqual([403, 403, 403, 403, 403, 403]);
      expect(upstreamCalls(marker)).toHaveLength(0);
      // Two short choices fit (2 × 5 × 8 + the body's bytes × 2 < 1,000) and cost what they used.
      const small = await chat(key, { model: 'mini', n: 2, max_tokens: 5, messages: [{ role: 'user', content: marker }] });
      expect(small.status).toBe(200);
      await ledgerHas(accountId, 1);
      const spent = (small.body.meta as { usage: { credits_used: number } }).usage.credits_used;
      expect(await app.balance(key)).toBeCloseTo(1_000 - spent, 6);
      expect(await app.balance(key)).toBeGreaterThanOrEqual(0);
    });
  });

  describe('token counting waits for admission', () => {
    it('answers a key without credits 403, not 400, for a huge one-word prompt (chat and embeddings)', async () => {
      const { key } = await app.paidKey(0);
      const word = 'a'.repeat(200_000);
      const refusedChat = await chat(key, { model: 'test/tight', messages: [{ role: 'user', content: word }] });
      expectErrorBody(refusedChat, 403, '/v1/chat/completions');
      const refusedEmbeddings = await call<Record<string, unknown>>(`${app.gateway}/v1/embeddings`, { token: key, body: { model: 'test/embed', input: word } });
      expectErrorBody(refusedEmbeddings, 403, '/v1/embeddings');
    });

    it('still tells a key that can pay that the prompt does not fit the context', async () => {
      const { accountId, key } = await app.paidKey(10_000_000);
      const tooLong = await chat(key, { model: 'test/tight', messages: [{ role: 'user', content: 'word '.repeat(2_000) }] });
      expectErrorBody(tooLong, 400, '/v1/chat/completions', /50-token context/);
      // Refused after admission: its hold went back and nothing was billed.
      await stillHas(accountId, 0);
      expect(await app.balance(key)).toBe(10_000_000);
    });
  });

  describe('a client that leaves once the prompt went upstream is billed', () => {
    it('non-streamed: the ledger gets exactly the upstream\'s usage, once', async () => {
      const { accountId, key } = await app.paidKey(1_000_000);
      const messages = [{ role: 'user', content: 'I will not wait for this answer' }];
      const reference = await chat(key, { model: 'test/slow-answer', messages });
      const usage = reference.body.usage as { prompt_tokens: number; completion_tokens: number };
      await leaveOnceUpstream(`${app.gateway}/v1/chat/completions`, key, { model: 'test/slow-answer', messages }, 'slow-answer');
      await ledgerHas(accountId, 2);
      await stillHas(accountId, 2);
      const [abandoned] = await ledger(accountId);
      expect(abandoned.units).toEqual({ input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens });
      // The upstream call ran to its end instead of being cut off.
      expect(emulator.requests.filter((request) => (request.body as { model?: string }).model === 'slow-answer@delay=1500').at(-1)!.closedEarly).toBe(false);
    });

    it('streamed: the upstream stream is read on and its own usage billed', async () => {
      const { accountId, key } = await app.paidKey(1_000_000);
      const messages = [{ role: 'user', content: 'stream me a reply of many words that I will not read to the end' }];
      const reference = await chat(key, { model: 'test/slow-stream', messages });
      const usage = reference.body.usage as { prompt_tokens: number; completion_tokens: number };
      await leaveOnceUpstream(`${app.gateway}/v1/chat/completions`, key, { model: 'test/slow-stream', messages, stream: true }, 'slow-stream', true);
      await ledgerHas(accountId, 2);
      await stillHas(accountId, 2);
      const [abandoned] = await ledger(accountId);
      expect(abandoned.units).toEqual({ input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens });
    }, 30_000);

    it('streamed with hidden reasoning: the reasoning tokens the upstream reports are billed too', async () => {
      const { accountId, key } = await app.paidKey(1_000_000);
      const body = { model: 'test/slow-claude', max_tokens: 2000, reasoning: { effort: 'low', exclude: true }, messages: [{ role: 'user', content: 'think first, then answer me at length' }] };
      const reference = await chat(key, body);
      const usage = reference.body.usage as { prompt_tokens: number; completion_tokens: number };
      // The thinking is hidden from the client, yet counted in the upstream's output tokens.
      expect((reference.body.choices as Array<{ message: Record<string, unknown> }>)[0].message).not.toHaveProperty('reasoning_content');
      await leaveOnceUpstream(`${app.gateway}/v1/chat/completions`, key, { ...body, stream: true }, 'claude-test@chunk-delay', true);
      await ledgerHas(accountId, 2);
      await stillHas(accountId, 2);
      const [abandoned] = await ledger(accountId);
      expect(abandoned.units).toEqual({ input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens });
    }, 30_000);

    it('streamed without usage: a tokenizer count of the whole prompt, tool schemas included, and of everything generated', async () => {
      const { accountId, key } = await app.paidKey(1_000_000);
      const messages = [{ role: 'user', content: 'count my tools and the whole reply even though I leave early' }];
      const tools = [{ type: 'function', function: { name: 'lookup_order', description: 'Finds an order by its number', parameters: { type: 'object', properties: { number: { type: 'string' } } } } }];
      const reference = await chat(key, { model: 'test/quiet-stream', messages, tools });
      const content = (reference.body.choices as Array<{ message: { content: string } }>)[0].message.content;
      await leaveOnceUpstream(`${app.gateway}/v1/chat/completions`, key, { model: 'test/quiet-stream', messages, tools, stream: true }, 'quiet-stream', true);
      await ledgerHas(accountId, 2);
      const [abandoned, answered] = await ledger(accountId);
      const prompt = estimateChatPromptTokens({ messages, tools });
      expect(prompt).toBeGreaterThan(estimateChatPromptTokens({ messages }) + 20);
      expect(answered.units).toEqual({ input_tokens: prompt, output_tokens: countTokens(content) });
      // The abandoned stream was read to its end: the same count.
      expect(abandoned.units).toEqual({ input_tokens: prompt, output_tokens: countTokens(content) });
    }, 30_000);

    it('embeddings: the upstream\'s count is billed', async () => {
      const { accountId, key } = await app.paidKey(1_000_000);
      const body = { model: 'test/slow-embed', input: ['first text to embed', 'second text to embed'] };
      const reference = await call<{ usage: { prompt_tokens: number } }>(`${app.gateway}/v1/embeddings`, { token: key, body });
      await leaveOnceUpstream(`${app.gateway}/v1/embeddings`, key, body, 'text-embedding-3-small@delay=1500');
      await ledgerHas(accountId, 2);
      await stillHas(accountId, 2);
      const [abandoned] = await ledger(accountId);
      expect(abandoned.units).toEqual({ input_tokens: reference.body.usage.prompt_tokens });
    });
  });

  describe('web search', () => {
    it('holds the most searches the request can run and charges each search at the catalogue price', async () => {
      // Enough for the tokens and one search (20,000), not for the default ten searches (200,000).
      const { accountId, key } = await app.paidKey(100_000);
      const messages = [{ role: 'user', content: 'search the web for the population of Paris' }];
      const refused = await chat(key, { model: 'test/claude', max_tokens: 100, enable_search: true, messages });
      expectErrorBody(refused, 403, '/v1/chat/completions');
      expect(refused.body.message).toBe(ErrorMessages.creditsExhausted);

      const answered = await chat(key, { model: 'test/claude', max_tokens: 100, enable_search: true, search_options: { search_strategy: 'turbo' }, messages });
      expect(answered.status).toBe(200);
      const usage = answered.body.usage as Record<string, number>;
      expect(usage).not.toHaveProperty('web_search_calls');
      const meta = (answered.body.meta as { usage: { credits_used: number; web_search_calls?: number } }).usage;
      expect(meta.web_search_calls).toBe(1);
      const expectedMicro = creditsToMicro(String(usage.prompt_tokens * 2 + usage.completion_tokens * 8 + 20_000));
      expect(creditsToMicro(String(meta.credits_used))).toBe(expectedMicro);
      await ledgerHas(accountId, 1);
      const [entry] = await ledger(accountId);
      expect(entry.units).toEqual({ input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens, web_search_calls: 1 });
      // The ledger records a debit.
      expect(creditsToMicro(String(entry.credits))).toBe(-expectedMicro);
    });
  });
});
