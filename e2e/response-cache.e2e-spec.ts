import { mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse, stringify } from 'yaml';
import { creditsToMicro } from '@igw/domain';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call } from './support/http';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/**
 * The response cache, opt-in per account or key, on the run's backend (Redis when the run has
 * REDIS_URL, else PostgreSQL): a repeated request is answered from it, billed as a hit at the
 * model's cache price, and every request that could get another answer is a miss.
 */
interface Completion {
  id: string;
  created: number;
  model: string;
  choices: Array<{ message: { content: string }; finish_reason: string }>;
  usage: { prompt_tokens: number; completion_tokens: number };
  meta: { usage: { credits_used: number; usd_spent: number } };
}
interface LedgerRow {
  requestId: string;
  credits: string;
  cache?: 'hit' | 'miss' | null;
  cacheSavedUsd?: string | null;
}

/** The answer is stored after it leaves (never on the request's time): a moment for the write before the repeat. */
const stored = () => new Promise((resolve) => setTimeout(resolve, 300));

/** Retries `attempt` (its assertions) until it passes, for what billing applies after the answer (the ledger, the balance). */
async function until<T>(attempt: () => Promise<T>, timeoutMs = 10_000): Promise<T> {
  const started = Date.now();
  for (;;) {
    try {
      return await attempt();
    } catch (error) {
      if (Date.now() - started > timeoutMs) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

const ask = (content: string, extra: Record<string, unknown> = {}) => ({ model: 'mini', max_tokens: 20, messages: [{ role: 'user', content }], ...extra });

async function catalogueWithCacheRules(): Promise<string> {
  const base = parse(await readFile(path.join(__dirname, 'fixtures/chat-catalogue.yaml'), 'utf8')) as { models: Array<Record<string, unknown>> };
  const mini = base.models.find((model) => model.id === 'test/mini')!;
  base.models.push(
    { ...mini, id: 'test/never-cached', aliases: ['never-cached'], responseCache: { allowed: false } },
    { ...mini, id: 'test/half-price-hits', aliases: ['half-price-hits'], responseCache: { hitPriceShare: 0.5 } },
  );
  const file = path.join(await mkdtemp(path.join(tmpdir(), 'igw-cache-')), 'catalogue.yaml');
  await writeFile(file, stringify(base, { aliasDuplicateObjects: false }));
  return file;
}

describe('the response cache', () => {
  let emulator: RunningEmulator;
  let app: StandaloneHarness;
  const admin = <T>(route: string, init: { method?: string; body?: unknown } = {}) => call<T>(`${app.billing}/admin/v1${route}`, { ...init, token: app.adminToken });
  const chat = <T = Completion>(key: string, body: unknown, headers: Record<string, string> = {}) => call<T>(`${app.gateway}/v1/chat/completions`, { token: key, body, headers });
  const upstreamCalls = () => emulator.requests.filter((request) => request.path.endsWith('/chat/completions')).length;

  /** An account with `cache` and a key of it (with its own `keyCache`, when given). */
  async function cachedAccount(cache: Record<string, unknown> | null, keyCache?: Record<string, unknown>): Promise<{ accountId: string; keyId: string; key: string }> {
    const account = await admin<{ id: string }>('/accounts', { body: { credits: 1_000, plan: 'paid', ...(cache ? { cache } : {}) } });
    expect(account.status).toBe(201);
    const key = await admin<{ id: string; key: string }>(`/accounts/${account.body.id}/keys`, { body: keyCache ? { cache: keyCache } : {} });
    expect(key.status).toBe(201);
    return { accountId: account.body.id, keyId: key.body.id, key: key.body.key };
  }

  const ledger = async (accountId: string) => (await admin<{ data: LedgerRow[] }>(`/accounts/${accountId}/usage?kind=usage&limit=100`)).body.data;

  beforeAll(async () => {
    emulator = await startEmulator();
    app = await startStandaloneHarness({ CATALOGUE_FILE: await catalogueWithCacheRules(), OPENAI_API_KEY: 'k', OPENAI_BASE_URL: `${emulator.url}/v1`, RATE_LIMIT_RPM: '100000' });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await emulator?.close();
  });

  it('answers a repeated request from the cache: the first answer with its own id, a free hit on the ledger, the balance exact', async () => {
    const { accountId, key } = await cachedAccount({ enabled: true, ttlSeconds: 600 });
    const before = upstreamCalls();
    const first = await chat(key, ask('What is the capital of France?'));
    expect(first.status).toBe(200);
    expect(first.headers.get('x-gateway-cache')).toBe('miss');
    await stored();
    const second = await chat(key, ask('What is the capital of France?'));
    expect(second.headers.get('x-gateway-cache')).toBe('hit');
    expect(upstreamCalls() - before).toBe(1);
    expect(Number(second.headers.get('age'))).toBeGreaterThanOrEqual(0);
    expect(second.body.choices).toEqual(first.body.choices);
    expect(second.body.usage).toEqual(first.body.usage);
    expect(second.body.id).not.toBe(first.body.id);
    expect(second.body.model).toBe('test/mini');
    expect(second.body.meta.usage.credits_used).toBe(0);
    expect(first.body.meta.usage.credits_used).toBeGreaterThan(0);

    const rows = await until(async () => {
      const found = await ledger(accountId);
      expect(found.length).toBeGreaterThanOrEqual(2);
      return found;
    });
    const hits = rows.filter((row) => row.cache === 'hit');
    const misses = rows.filter((row) => row.cache === 'miss');
    expect(misses).toHaveLength(1);
    expect(hits.length).toBeGreaterThanOrEqual(1);
    expect(creditsToMicro(hits[0].credits.replace('-', ''))).toBe(0n);
    expect(Number(hits[0].cacheSavedUsd)).toBeCloseTo(first.body.meta.usage.usd_spent, 9);
    const balance = await until(async () => {
      const account = await admin<{ balance: string }>(`/accounts/${accountId}`);
      const spent = rows.reduce((sum, row) => sum + creditsToMicro(row.credits.replace('-', '')), 0n);
      expect(creditsToMicro(account.body.balance)).toBe(creditsToMicro(1_000) - spent);
      return account.body.balance;
    });
    expect(balance).toBeDefined();
  });

  it('misses on anything that can change the answer: another account, temperature or tool list', async () => {
    const one = await cachedAccount({ enabled: true });
    const other = await cachedAccount({ enabled: true });
    const question = ask('Name three primary colours.');
    await chat(one.key, question);
    await stored();
    expect((await chat(one.key, question)).headers.get('x-gateway-cache')).toBe('hit');
    expect((await chat(other.key, question)).headers.get('x-gateway-cache')).toBe('miss');
    expect((await chat(one.key, { ...question, temperature: 0.7 })).headers.get('x-gateway-cache')).toBe('miss');
    const tools = [{ type: 'function', function: { name: 'lookup', parameters: { type: 'object', properties: {} } } }];
    expect((await chat(one.key, { ...question, tools })).headers.get('x-gateway-cache')).toBe('miss');
  });

  it('follows Cache-Control: no-store neither reads nor writes, no-cache writes without reading, max-age bounds the age', async () => {
    const { key } = await cachedAccount({ enabled: true });
    const question = ask('Spell the word cache backwards.');
    const before = upstreamCalls();
    expect((await chat(key, question, { 'cache-control': 'no-store' })).headers.get('x-gateway-cache')).toBe('bypass');
    expect((await chat(key, question, { 'cache-control': 'no-store' })).headers.get('x-gateway-cache')).toBe('bypass');
    expect(upstreamCalls() - before).toBe(2);
    expect((await chat(key, question, { 'cache-control': 'no-cache' })).headers.get('x-gateway-cache')).toBe('miss');
    await stored();
    expect((await chat(key, question)).headers.get('x-gateway-cache')).toBe('hit');
    expect((await chat(key, question, { 'cache-control': 'no-cache' })).headers.get('x-gateway-cache')).toBe('miss');
    expect(upstreamCalls() - before).toBe(4);
    await new Promise((resolve) => setTimeout(resolve, 1_100));
    expect((await chat(key, question, { 'cache-control': 'max-age=0' })).headers.get('x-gateway-cache')).toBe('miss');
  });

  it('serves a stream from the cache with every chunk and the usage chunk, and a stream and a whole answer from each other', async () => {
    const { key } = await cachedAccount({ enabled: true });
    const streamed = async (content: string) => {
      const response = await fetch(`${app.gateway}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(ask(content, { stream: true, stream_options: { include_usage: true } })),
      });
      const text = await response.text();
      const chunks = text
        .split('\n\n')
        .filter((event) => event.startsWith('data: {'))
        .map((event) => JSON.parse(event.slice(6)) as { id: string; choices: Array<{ delta: { content?: string } ; finish_reason: string | null }>; usage?: { completion_tokens: number }; meta?: unknown });
      return { cache: response.headers.get('x-gateway-cache'), chunks, done: text.trimEnd().endsWith('data: [DONE]') };
    };
    const live = await streamed('Count from one to five.');
    expect(live.cache).toBe('miss');
    await stored();
    const replayed = await streamed('Count from one to five.');
    expect(replayed.cache).toBe('hit');
    expect(replayed.done).toBe(true);
    const shape = (chunks: typeof live.chunks) => chunks.map((chunk) => ({ choices: chunk.choices, usage: chunk.usage }));
    expect(shape(replayed.chunks)).toEqual(shape(live.chunks));
    expect(new Set(replayed.chunks.map((chunk) => chunk.id)).size).toBe(1);
    expect(replayed.chunks[0].id).not.toBe(live.chunks[0].id);
    expect(replayed.chunks.at(-1)!.meta).toEqual({ usage: { credits_used: 0, usd_spent: 0 } });

    const whole = await chat(key, ask('Count from one to five.'));
    expect(whole.headers.get('x-gateway-cache')).toBe('hit');
    expect(whole.body.choices[0].message.content).toBe(live.chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join(''));

    await chat(key, ask('Name a prime number.'));
    await stored();
    const fromWhole = await streamed('Name a prime number.');
    expect(fromWhole.cache).toBe('hit');
    expect(fromWhole.chunks.map((chunk) => chunk.choices[0]?.delta.content ?? '').join('')).toBe((await chat(key, ask('Name a prime number.'))).body.choices[0].message.content);
    expect(fromWhole.chunks.at(-1)!.usage).toBeDefined();
  });

  it('says nothing for a key whose cache is off, bypasses a model the catalogue keeps out, and charges the catalogue share of a hit', async () => {
    const off = await cachedAccount(null);
    const answer = await chat(off.key, ask('Is the cache on?'));
    expect(answer.status).toBe(200);
    expect(answer.headers.get('x-gateway-cache')).toBeNull();
    const keyOff = await cachedAccount({ enabled: true }, { enabled: false });
    expect((await chat(keyOff.key, ask('Is the cache on?'))).headers.get('x-gateway-cache')).toBeNull();

    const { key } = await cachedAccount({ enabled: true });
    expect((await chat(key, { ...ask('Never twice.'), model: 'never-cached' })).headers.get('x-gateway-cache')).toBe('bypass');
    expect((await chat(key, { ...ask('Never twice.'), model: 'never-cached' })).headers.get('x-gateway-cache')).toBe('bypass');

    const first = await chat(key, { ...ask('Half price, please.'), model: 'half-price-hits' });
    await stored();
    const hit = await chat(key, { ...ask('Half price, please.'), model: 'half-price-hits' });
    expect(hit.headers.get('x-gateway-cache')).toBe('hit');
    expect(creditsToMicro(String(hit.body.meta.usage.credits_used)) * 2n - creditsToMicro(String(first.body.meta.usage.credits_used))).toBeGreaterThanOrEqual(-1n);
    expect(creditsToMicro(String(hit.body.meta.usage.credits_used)) * 2n - creditsToMicro(String(first.body.meta.usage.credits_used))).toBeLessThanOrEqual(1n);
  });

  it('serves embeddings from the cache in either encoding', async () => {
    const { key } = await cachedAccount({ enabled: true });
    const embed = (encoding_format: string) => call<{ data: Array<{ embedding: number[] | string }>; usage: { prompt_tokens: number }; meta: { usage: { credits_used: number } } }>(`${app.gateway}/v1/embeddings`, { token: key, body: { model: 'embed', input: ['cache me', 'and me'], encoding_format } });
    const first = await embed('float');
    expect(first.headers.get('x-gateway-cache')).toBe('miss');
    await stored();
    const before = emulator.requests.length;
    const again = await embed('float');
    expect(again.headers.get('x-gateway-cache')).toBe('hit');
    expect(again.body.data).toEqual(first.body.data);
    expect(again.body.usage).toEqual(first.body.usage);
    expect(again.body.meta.usage.credits_used).toBe(0);
    const encoded = await embed('base64');
    expect(encoded.headers.get('x-gateway-cache')).toBe('hit');
    const bytes = Buffer.from(encoded.body.data[0].embedding as string, 'base64');
    const decoded = new Float32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    expect(Array.from(decoded)).toEqual((first.body.data[0].embedding as number[]).map((value) => Math.fround(value)));
    expect(emulator.requests.length).toBe(before);
  });

  it('keeps a key-scoped entry to its key, and forgets entries on DELETE /admin/v1/cache', async () => {
    const { accountId, key } = await cachedAccount({ enabled: true, scope: 'key' });
    const sibling = await admin<{ id: string; key: string }>(`/accounts/${accountId}/keys`, { body: {} });
    const question = ask('Which key asked?');
    await chat(key, question);
    await stored();
    expect((await chat(key, question)).headers.get('x-gateway-cache')).toBe('hit');
    expect((await chat(sibling.body.key, question)).headers.get('x-gateway-cache')).toBe('miss');

    expect((await admin('/cache', { method: 'DELETE' })).status).toBe(400);
    const removed = await admin<{ removed: number }>(`/cache?account=${accountId}&model=test/mini`, { method: 'DELETE' });
    expect(removed.status).toBe(200);
    expect(removed.body.removed).toBeGreaterThanOrEqual(1);
    expect((await chat(key, question)).headers.get('x-gateway-cache')).toBe('miss');
  });
});
