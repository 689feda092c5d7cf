import type { INestApplication } from '@nestjs/common';
import { MessagingService, QueueName, usageBatchOf, type QueueBackendOptions, type ResponseCacheInvalidation } from '@igw/messaging';
import { RESPONSE_CACHE_DEFAULTS, type ResolvedKey, type UsageEvent } from '@igw/contracts';
import type { ScratchDatabase } from '@igw/persistence';
import { hashApiKey } from '@igw/http';
import { loadEnvironment } from '@igw/config';
import { priceUsage } from '@igw/domain';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { createTestDatabase, dropQueueData, queryRows, testQueueBackend } from '@igw/testing';
import { startBilling } from '../billing.app';
import { reconcileBalances } from '../ledger/reconciliation';

const ADMIN_TOKEN = 'integration-admin-token-cache-0123456789';
const CREDITS_PER_USD = 2_000_000;

interface Account {
  id: string;
  cache: Record<string, unknown> | null;
  updatedAt: string;
}

interface Key {
  id: string;
  key: string;
  cache: Record<string, unknown> | null;
}

describe('billing: the response cache settings, the ledger marks and the invalidation ask', () => {
  let database: ScratchDatabase;
  let app: INestApplication;
  let producer: MessagingService;
  let listener: MessagingService;
  let baseUrl: string;
  let queue: QueueBackendOptions;
  const accountChanges: string[] = [];

  const admin = (urlPath: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${baseUrl}${urlPath}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });

  async function json<T>(response: Response, status: number): Promise<T> {
    const body = (await response.json()) as T;
    if (response.status !== status) throw new Error(`expected ${status}, got ${response.status}: ${JSON.stringify(body)}`);
    return body;
  }

  const createAccount = async (body: Record<string, unknown>) => json<Account>(await admin('/admin/v1/accounts', { method: 'POST', body }), 201);
  const createKey = async (accountId: string, body: Record<string, unknown> = {}) => json<Key>(await admin(`/admin/v1/accounts/${accountId}/keys`, { method: 'POST', body }), 201);
  const resolve = async (key: string): Promise<ResolvedKey | null> => (await producer.request(QueueName.BillingRpc, 'keys.resolve', { keyHash: hashApiKey(key) })).key;

  async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((done) => setTimeout(done, 50));
    }
  }

  beforeAll(async () => {
    database = await createTestDatabase();
    queue = testQueueBackend(database.url);
    const { env, providers } = loadEnvironment({ BILLING_PORT: '0', LOG_LEVEL: 'error', ADMIN_TOKEN });
    app = await startBilling({ env, providers, databaseUrl: database.url, adminToken: ADMIN_TOKEN, queue });
    baseUrl = (await app.getUrl()).replace('[::1]', '127.0.0.1');
    producer = new MessagingService({ serviceName: 'test-producer', backend: queue });
    listener = new MessagingService({ serviceName: 'test-listener', backend: queue });
    await listener.subscribe('billing.account.changed', ({ accountId }) => void accountChanges.push(accountId));
  });

  afterAll(async () => {
    await listener?.onApplicationShutdown();
    await producer?.onApplicationShutdown();
    await app?.close();
    await dropQueueData(queue);
    await database?.drop();
  });

  describe('settings on accounts and keys', () => {
    it('stores an account\'s setting from POST and PATCH, shows it, removes it with null, and announces each change', async () => {
      const account = await createAccount({ name: 'cached', cache: { enabled: true, ttlSeconds: 600 } });
      expect(account.cache).toEqual({ enabled: true, ttlSeconds: 600 });
      expect((await json<Account>(await admin(`/admin/v1/accounts/${account.id}`), 200)).cache).toEqual({ enabled: true, ttlSeconds: 600 });
      expect((await createAccount({ name: 'plain' })).cache).toBeNull();

      const patched = await json<Account>(await admin(`/admin/v1/accounts/${account.id}`, { method: 'PATCH', body: { cache: { enabled: true, maxTtlSeconds: 900, scope: 'key' } } }), 200);
      // Replaced as a whole, like a key's budget.
      expect(patched.cache).toEqual({ enabled: true, maxTtlSeconds: 900, scope: 'key' });
      const [row] = await queryRows<{ cache: unknown }>(database.url, 'SELECT cache FROM billing.accounts WHERE id = $1', [account.id]);
      expect(row.cache).toEqual({ enabled: true, maxTtlSeconds: 900, scope: 'key' });
      await waitFor('billing.account.changed', () => accountChanges.includes(account.id), 10_000);

      accountChanges.length = 0;
      expect((await json<Account>(await admin(`/admin/v1/accounts/${account.id}`, { method: 'PATCH', body: { cache: null } }), 200)).cache).toBeNull();
      await waitFor('billing.account.changed after removal', () => accountChanges.includes(account.id), 10_000);
    });

    it("stores a key's setting from POST and PATCH with its other rules, and announces the change", async () => {
      const account = await createAccount({ name: 'key settings' });
      const key = await createKey(account.id, { name: 'ci', cache: { enabled: false } });
      expect(key.cache).toEqual({ enabled: false });
      accountChanges.length = 0;
      const patched = await json<Key>(await admin(`/admin/v1/keys/${key.id}`, { method: 'PATCH', body: { cache: { scope: 'key', ttlSeconds: 60 } } }), 200);
      expect(patched).toMatchObject({ name: 'ci', cache: { scope: 'key', ttlSeconds: 60 } });
      await waitFor('billing.account.changed', () => accountChanges.includes(account.id), 10_000);
      // A change of another rule keeps it.
      expect((await json<Key>(await admin(`/admin/v1/keys/${key.id}`, { method: 'PATCH', body: { rpm: 5 } }), 200)).cache).toEqual({ scope: 'key', ttlSeconds: 60 });
      const listed = await json<{ data: Key[] }>(await admin(`/admin/v1/accounts/${account.id}/keys`), 200);
      expect(listed.data[0].cache).toEqual({ scope: 'key', ttlSeconds: 60 });
      expect((await json<Key>(await admin(`/admin/v1/keys/${key.id}`, { method: 'PATCH', body: { cache: null } }), 200)).cache).toBeNull();
    });

    it.each<[string, unknown, RegExp]>([
      ['not an object', 'on', /cache: Expected an object \{enabled, ttlSeconds, maxTtlSeconds, scope\} or null\. Received string 'on'/],
      ['an unknown field', { enabled: true, ttl: 5 }, /cache: Expected only enabled, ttlSeconds, maxTtlSeconds and scope\. Received 'ttl'/],
      ['enabled as text', { enabled: 'yes' }, /cache: enabled: Expected a boolean\. Received string 'yes'/],
      ['a ttl of 0', { ttlSeconds: 0 }, /cache: ttlSeconds: Expected an integer from 1 to 2592000\. Received 0/],
      ['a maximum past 30 days', { maxTtlSeconds: 2_592_001 }, /cache: maxTtlSeconds: Expected an integer from 1 to 2592000\. Received 2592001/],
      ['an unknown scope', { scope: 'everyone' }, /cache: scope: Expected one of 'account', 'key'\. Received 'everyone'/],
      ['a ttl above its maximum', { ttlSeconds: 120, maxTtlSeconds: 60 }, /cache: ttlSeconds: Expected at most maxTtlSeconds \(60\)\. Received 120/],
    ])('refuses a setting that is %s with 400 on every route, changing nothing', async (_label, cache, message) => {
      const account = await createAccount({ name: 'refused' });
      const key = await createKey(account.id);
      const refusals = [
        await admin('/admin/v1/accounts', { method: 'POST', body: { name: 'x', cache } }),
        await admin(`/admin/v1/accounts/${account.id}`, { method: 'PATCH', body: { cache } }),
        await admin(`/admin/v1/accounts/${account.id}/keys`, { method: 'POST', body: { cache } }),
        await admin(`/admin/v1/keys/${key.id}`, { method: 'PATCH', body: { cache } }),
      ];
      for (const refused of refusals) {
        const body = await json<{ message: string; statusCode: number }>(refused, 400);
        expect(body.message).toMatch(/^Body validation error! /);
        expect(body.message).toMatch(message);
      }
      expect((await json<Account>(await admin(`/admin/v1/accounts/${account.id}`), 200)).cache).toBeNull();
      expect((await json<Key>(await admin(`/admin/v1/keys/${key.id}`), 200)).cache).toBeNull();
    });
  });

  describe('key resolution', () => {
    it('carries the effective cache when it is on, and nothing when it is off', async () => {
      const account = await createAccount({ name: 'resolution' });
      const key = await createKey(account.id);
      const off = await resolve(key.key);
      expect(off).not.toHaveProperty('cache');

      await admin(`/admin/v1/accounts/${account.id}`, { method: 'PATCH', body: { cache: { enabled: true, maxTtlSeconds: 300 } } });
      expect((await resolve(key.key))?.cache).toEqual({ ttlSeconds: 300, maxTtlSeconds: 300, scope: RESPONSE_CACHE_DEFAULTS.scope });

      await admin(`/admin/v1/keys/${key.id}`, { method: 'PATCH', body: { cache: { ttlSeconds: 120, scope: 'key' } } });
      const keyed = await resolve(key.key);
      expect(keyed?.cache).toEqual({ ttlSeconds: 120, maxTtlSeconds: 300, scope: 'key' });
      expect(keyed?.rules?.cache).toEqual({ ttlSeconds: 120, scope: 'key' });

      await admin(`/admin/v1/keys/${key.id}`, { method: 'PATCH', body: { cache: { enabled: false } } });
      expect(await resolve(key.key)).not.toHaveProperty('cache');

      // A key may turn it on where its account does not.
      const other = await createKey((await createAccount({ name: 'key only' })).id, { cache: { enabled: true } });
      expect((await resolve(other.key))?.cache).toEqual({ ...RESPONSE_CACHE_DEFAULTS });
    });
  });

  describe('the ledger', () => {
    const fullPrices = [
      { unit: 'input_tokens', price: 2, per: 1_000_000 },
      { unit: 'output_tokens', price: 8, per: 1_000_000 },
    ];
    const hitPrices = fullPrices.map((price) => ({ ...price, price: price.price / 4 }));

    function eventOf(accountId: string, keyId: string, prices: typeof fullPrices, mark: Pick<UsageEvent, 'cache' | 'cacheSavedUsd'>): UsageEvent {
      const units = { input_tokens: 1_000, output_tokens: 500 };
      const priced = priceUsage({ units: prices }, units, CREDITS_PER_USD);
      return {
        requestId: randomUUID(),
        accountId,
        keyId,
        model: 'openai/gpt-4o-mini',
        endpoint: 'chat.completions',
        units,
        creditsMicro: priced.creditsMicro.toString(),
        usd: priced.usd,
        catalogueRevision: 1,
        prices,
        occurredAt: new Date().toISOString(),
        ...mark,
      };
    }

    it('keeps each usage entry\'s cache mark and saving, lists them, counts them per account and key, and reconciles', async () => {
      const account = await createAccount({ name: 'ledger', credits: 1_000 });
      const [first, second] = [await createKey(account.id), await createKey(account.id)];
      // Full: 0.002 + 0.004 = 0.006 USD; a hit at a quarter: 0.0015 USD, saving 0.0045.
      const events = [
        eventOf(account.id, first.id, hitPrices, { cache: 'hit', cacheSavedUsd: '0.0045' }),
        eventOf(account.id, first.id, hitPrices, { cache: 'hit', cacheSavedUsd: '0.004500000000000001' }),
        eventOf(account.id, first.id, fullPrices, { cache: 'miss' }),
        eventOf(account.id, second.id, hitPrices, { cache: 'hit', cacheSavedUsd: '0.0045' }),
        eventOf(account.id, second.id, fullPrices, {}),
      ];
      const batch = await usageBatchOf(Buffer.from(events.map((event) => JSON.stringify(event)).join('\n')));
      await producer.enqueue(QueueName.Usage, 'usage.recordBatch', batch);
      const usageRows = () => queryRows<{ request_id: string; cache: string | null; cache_saved_usd: string | null }>(database.url, `SELECT request_id, cache, cache_saved_usd::text FROM billing.ledger_entries WHERE account_id = $1 AND kind = 'usage'`, [account.id]);
      await waitFor('the usage entries', async () => (await usageRows()).length === events.length);
      const byRequest = new Map((await usageRows()).map((row) => [row.request_id, row]));
      expect(events.map((event) => [byRequest.get(event.requestId)?.cache ?? null, byRequest.get(event.requestId)?.cache_saved_usd ?? null])).toEqual([
        ['hit', '0.0045'],
        ['hit', '0.004500000000000001'],
        ['miss', null],
        ['hit', '0.0045'],
        [null, null],
      ]);

      const listed = await json<{ data: Array<{ requestId: string | null; cache: string | null; cacheSavedUsd: string | null; usd: string }> }>(await admin(`/admin/v1/accounts/${account.id}/usage?kind=usage`), 200);
      const entry = listed.data.find((one) => one.requestId === events[0].requestId);
      expect(entry).toMatchObject({ cache: 'hit', cacheSavedUsd: '0.0045', usd: events[0].usd });
      expect(listed.data.find((one) => one.requestId === events[4].requestId)).toMatchObject({ cache: null, cacheSavedUsd: null });
      const credit = await json<{ data: Array<{ cache: string | null; cacheSavedUsd: string | null }> }>(await admin(`/admin/v1/accounts/${account.id}/usage?kind=credit`), 200);
      expect(credit.data[0]).toMatchObject({ cache: null, cacheSavedUsd: null });

      const stats = await json<{ from: string; account: unknown; keys: unknown[] }>(await admin(`/admin/v1/accounts/${account.id}/cache`), 200);
      expect(stats.account).toEqual({ hits: 3, misses: 1, savedUsd: '0.013500000000000001' });
      expect(stats.keys).toEqual(
        [
          { keyId: first.id, hits: 2, misses: 1, savedUsd: '0.009000000000000001' },
          { keyId: second.id, hits: 1, misses: 0, savedUsd: '0.0045' },
        ].sort((a, b) => a.keyId.localeCompare(b.keyId)),
      );
      expect(Date.now() - Date.parse(stats.from)).toBeGreaterThan(29 * 86_400_000);
      expect((await admin(`/admin/v1/accounts/${randomUUID()}/cache`)).status).toBe(404);

      const report = await reconcileBalances(app.get(DataSource));
      expect(report).toMatchObject({ mismatches: [], usageMismatches: [], keyMismatches: [] });
      const rejected = await queryRows(database.url, 'SELECT * FROM billing.rejected_usage');
      expect(rejected).toEqual([]);
    });
  });

  describe('DELETE /admin/v1/cache', () => {
    it('answers 400 without an account or with malformed ids, 404 for an unknown account, and 400 for a key of another account', async () => {
      const account = await createAccount({ name: 'invalidation checks' });
      const strangerKey = await createKey((await createAccount({ name: 'stranger' })).id);
      const cases: Array<[string, number, RegExp]> = [
        ['', 400, /account: Expected an account id \(a UUID\)/],
        ['?account=nope', 400, /account: Expected an account id \(a UUID\)/],
        [`?account=${account.id}&key=nope`, 400, /key: Expected an API key id \(a UUID\)/],
        [`?account=${randomUUID()}`, 404, /Account [0-9a-f-]+ not found/],
        [`?account=${account.id}&key=${strangerKey.id}`, 400, new RegExp(`key: Expected an API key of account ${account.id}\\. Received '${strangerKey.id}'`)],
      ];
      for (const [query, status, message] of cases) {
        const body = await json<{ message: string; path: string }>(await admin(`/admin/v1/cache${query}`, { method: 'DELETE' }), status);
        expect(body.message).toMatch(message);
      }
    });

    it('answers 503 when no gateway takes the ask, then 200 with what a gateway removed', async () => {
      const account = await createAccount({ name: 'invalidation' });
      const key = await createKey(account.id);
      const started = Date.now();
      const unanswered = await json<{ message: string }>(await admin(`/admin/v1/cache?account=${account.id}`, { method: 'DELETE' }), 503);
      expect(unanswered.message).toMatch(/^Service Unavailable: no gateway answered within 5 s, so no cache entry was removed/);
      expect(Date.now() - started).toBeLessThan(15_000);

      const gateway = new MessagingService({ serviceName: 'test-gateway', backend: queue });
      const asked: ResponseCacheInvalidation[] = [];
      try {
        gateway.consume(QueueName.GatewayRpc, {
          'cache.invalidate': async (ask) => {
            asked.push(ask);
            return { removed: ask.keyId ? 1 : 7 };
          },
        });
        expect(await json(await admin(`/admin/v1/cache?account=${account.id}`, { method: 'DELETE' }), 200)).toEqual({ removed: 7 });
        expect(await json(await admin(`/admin/v1/cache?account=${account.id}&model=openai/gpt-4o-mini&key=${key.id}`, { method: 'DELETE' }), 200)).toEqual({ removed: 1 });
        expect(asked).toEqual([{ accountId: account.id }, { accountId: account.id, model: 'openai/gpt-4o-mini', keyId: key.id }]);
      } finally {
        await gateway.onApplicationShutdown();
      }
    });
  });
});
