import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import path from 'node:path';
import { createPostgresBackend, Queue, withBackend } from 'bullmq';
import { ErrorMessages } from '@igw/contracts';
import { QueueName, redisConnectionOptions } from '@igw/messaging';
import type { ScratchDatabase } from '@igw/persistence';
import { createTestDatabase, uniqueQueuePrefix } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody, type JsonResponse } from './support/http';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/**
 * A client floods the gateway with made-up keys (issue: 503s, a queue at billing, an unbounded
 * cache). Every answer must be 401 or 429 with the spec's body, billing must see a bounded
 * number of look-ups, and a key created meanwhile must work at once for another client.
 */
const MISS_BURST = 10;
const MISSES_PER_MINUTE = 60;
const WELL_FORMED_FLOOD = 300;
const MALFORMED_FLOOD = 100;
const CONCURRENCY = 8;

describe('API-key floods, end to end (standalone)', () => {
  let emulator: RunningEmulator;
  let harness: StandaloneHarness;
  let database: ScratchDatabase;
  let rpcQueue: Queue;

  beforeAll(async () => {
    emulator = await startEmulator();
    // A database (and Redis prefix) of the test's own, so the test can count the jobs on billing's queue.
    database = await createTestDatabase();
    const prefix = uniqueQueuePrefix();
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/chat-catalogue.yaml'),
      OPENAI_API_KEY: 'k',
      OPENAI_BASE_URL: `${emulator.url}/v1`,
      DATABASE_URL: database.url,
      ...(process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL, QUEUE_PREFIX: prefix } : {}),
      KEY_LOOKUP_MISS_BURST: String(MISS_BURST),
      KEY_LOOKUP_MISSES_PER_MINUTE: String(MISSES_PER_MINUTE),
    });
    rpcQueue = process.env.REDIS_URL
      ? new Queue(QueueName.BillingRpc, { connection: redisConnectionOptions(process.env.REDIS_URL), prefix })
      : (new (withBackend(createPostgresBackend).Queue)(QueueName.BillingRpc, { connection: { connectionString: database.url, schema: 'bullmq' } }) as unknown as Queue);
  }, 120_000);

  afterAll(async () => {
    await rpcQueue?.close();
    await harness?.stop();
    await emulator?.close();
    await database?.drop();
  });

  /** Look-ups billing has taken from its queue or still has there (completed ones are kept for 60 s, up to 1,000). */
  const billingLookUps = async () => {
    const counts = await rpcQueue.getJobCounts('completed', 'failed', 'active', 'waiting', 'delayed');
    return Object.values(counts).reduce((sum, count) => sum + count, 0);
  };

  const chatBody = { model: 'mini', messages: [{ role: 'user', content: 'hi' }] };

  /** One request of the flood: the chat direct route, the chat route through Express, or embeddings. */
  function flooded(key: string, i: number): Promise<[string, JsonResponse]> {
    const kind = i % 3;
    if (kind === 0) return call(`${harness.gateway}/v1/chat/completions`, { token: key, body: chatBody }).then((r) => ['/v1/chat/completions', r]);
    if (kind === 1) {
      return call(`${harness.gateway}/v1/chat/completions`, { token: key, rawBody: JSON.stringify(chatBody), headers: { 'content-type': 'application/vnd.igw+json' } }).then((r) => [
        '/v1/chat/completions',
        r,
      ]);
    }
    return call(`${harness.gateway}/v1/embeddings`, { token: key, body: { model: 'embed', input: 'x' } }).then((r) => ['/v1/embeddings', r]);
  }

  it('answers every made-up key with 401 or 429, never 503, keeps billing out of it, and serves a new key from another client meanwhile', async () => {
    const malformed = (i: number) =>
      [
        `igw_${randomBytes(31).toString('base64url')}`, // too short
        `sk-${randomBytes(32).toString('base64url')}`, // another prefix
        `igw_${randomBytes(32).toString('base64')}`, // standard base64 (+, /, =)
        `igw_${randomBytes(32).toString('base64url')}${i}`, // too long
      ][i % 4];
    const keys = [
      ...Array.from({ length: WELL_FORMED_FLOOD }, () => ({ key: `igw_${randomBytes(32).toString('base64url')}`, wellFormed: true })),
      ...Array.from({ length: MALFORMED_FLOOD }, (_, i) => ({ key: malformed(i), wellFormed: false })),
    ].sort(() => Math.random() - 0.5);

    const lookUpsBefore = await billingLookUps();
    const started = Date.now();
    const answers: Array<{ wellFormed: boolean; path: string; response: JsonResponse }> = [];
    let next = 0;
    let newKeyAnswer: Promise<JsonResponse> | undefined;
    const flooder = async () => {
      while (next < keys.length) {
        const i = next++;
        // A third of the way in, another client gets a brand-new key and uses it at once.
        if (i === Math.floor(keys.length / 3)) newKeyAnswer = harness.paidKey(1_000).then(({ key }) => postFrom('127.0.0.2', `${harness.gateway}/v1/chat/completions`, key, chatBody));
        const [pathname, response] = await flooded(keys[i].key, i);
        answers.push({ wellFormed: keys[i].wellFormed, path: pathname, response });
      }
    };
    await Promise.all(Array.from({ length: CONCURRENCY }, flooder));
    const floodSeconds = Math.ceil((Date.now() - started) / 1000);

    expect(answers).toHaveLength(keys.length);
    // A key that cannot be ours is refused without a look-up, so never for lack of budget.
    const unexpected = answers.filter(({ wellFormed, response }) => !(response.status === 401 || (wellFormed && response.status === 429)));
    expect(unexpected.map(({ wellFormed, response }) => `${wellFormed ? 'well-formed' : 'malformed'}: ${response.status} ${JSON.stringify(response.body)}`)).toEqual([]);
    for (const { wellFormed, path: pathname, response } of answers) {
      if (!wellFormed || response.status === 401) expectErrorBody(response, 401, pathname, new RegExp(`^${literal(ErrorMessages.invalidApiKey)}$`));
      else {
        expectErrorBody(response, 429, pathname, /^Too Many Requests$/);
        expect(Number(response.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
      }
    }
    const statuses = countBy(answers.map(({ response }) => response.status));
    expect(Object.keys(statuses).sort()).toEqual(['401', '429']);

    const created = await newKeyAnswer!;
    expect(created.status).toBe(200);

    // The flooder's look-ups: its burst, what the budget earned back during the flood, and the new key's one.
    const lookUps = (await billingLookUps()) - lookUpsBefore;
    expect(lookUps).toBeGreaterThanOrEqual(MISS_BURST);
    expect(lookUps).toBeLessThanOrEqual(MISS_BURST + floodSeconds * (MISSES_PER_MINUTE / 60) + 1);
  });

  it('billing refuses a key that cannot be ours on its own endpoint too, with the spec body', async () => {
    for (const key of ['igw_not-a-real-key', `igw_${randomBytes(32).toString('base64')}`, `sk-${randomBytes(32).toString('base64url')}`]) {
      expectErrorBody(await call(`${harness.billing}/v1/billing/balance`, { token: key }), 401, '/v1/billing/balance', /valid API key is required/);
    }
    const { key } = await harness.paidKey(7);
    expect(await harness.balance(key)).toBe(7);
  });
});

/** POSTs JSON from a given local address, as another client machine would. */
function postFrom(localAddress: string, url: string, token: string, body: unknown): Promise<JsonResponse> {
  const payload = JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const request = httpRequest(
      url,
      { method: 'POST', localAddress, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload) } },
      (response) => {
        const chunks: Buffer[] = [];
        response.on('data', (chunk: Buffer) => chunks.push(chunk));
        response.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          const headers = new Headers();
          for (const [name, value] of Object.entries(response.headers)) if (typeof value === 'string') headers.set(name, value);
          resolve({ status: response.statusCode ?? 0, headers, body: text ? JSON.parse(text) : undefined });
        });
      },
    );
    request.on('error', reject);
    request.end(payload);
  });
}

function countBy(values: number[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const value of values) counts[value] = (counts[value] ?? 0) + 1;
  return counts;
}

function literal(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
