import type { INestApplication } from '@nestjs/common';
import { QueueName, usageBatchOf, type UsageBatch, MessagingService, type QueueBackendOptions } from '@igw/messaging';
import type { ResolvedKey, UsageEvent } from '@igw/contracts';
import type { ScratchDatabase } from '@igw/persistence';
import { hashApiKey } from '@igw/http';
import { loadEnvironment } from '@igw/config';
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Client } from 'pg';
import { seededRandom } from '@igw/emulator';
import { createTestDatabase, dropQueueData, queryRows, testQueueBackend } from '@igw/testing';
import { startBilling } from '../billing.app';
import { LedgerService } from './ledger.service';
import { reconcileBalances } from './reconciliation';

const ADMIN_TOKEN = 'integration-admin-token-usage-0123456789';
const ROOT = path.resolve(__dirname, '../../../..');
const RECONCILE_COMMAND = path.join(ROOT, 'dist/apps/billing/src/cli/reconcile.js');

interface Account {
  id: string;
  name: string;
  balance: number;
  plan: string;
  lowBalanceThreshold: number;
  status: string;
  autoDebitStatus: string;
  requestsPerMinute: number | null;
  concurrentRequests: number | null;
  createdAt: string;
  updatedAt: string;
}

interface UsageEntry {
  id: string;
  kind: 'usage' | 'credit';
  requestId: string | null;
  keyId: string | null;
  model: string | null;
  endpoint: string | null;
  deployment: string | null;
  units: Record<string, number> | null;
  credits: string;
  usd: string;
  catalogueRevision: number | null;
  prices: Array<{ unit: string; price: number; per: number }> | null;
  reason: string | null;
  occurredAt: string;
  recordedAt: string;
}

interface UsageList {
  object: 'list';
  data: UsageEntry[];
  nextCursor: string | null;
}

interface UsageSummary {
  object: 'list';
  data: Array<{ day: string; model: string | null; requests: number; credits: string; usd: string; units: Record<string, number> }>;
  totals: { requests: number; credits: string; usd: string };
}

interface Report {
  accounts: number;
  mismatches: Array<{ accountId: string; balance: number; ledger: number; difference: number; balanceMicro: string; ledgerMicro: string; differenceMicro: string }>;
  checkedAt: string;
}

// Independent exact arithmetic for the expectations: plain BigInt and string formatting,
// nothing from the code under test.
function decimalText(units: bigint, scale: number): string {
  const negative = units < 0n;
  const digits = (negative ? -units : units).toString().padStart(scale + 1, '0');
  const whole = digits.slice(0, digits.length - scale);
  const fraction = digits.slice(digits.length - scale).replace(/0+$/, '');
  return `${negative ? '-' : ''}${whole}${fraction ? `.${fraction}` : ''}`;
}
const creditsOf = (micro: bigint): string => decimalText(micro, 6);
const USD_DIGITS = 15;


describe('billing: account settings, usage and reconciliation', () => {
  let database: ScratchDatabase;
  let app: INestApplication;
  let producer: MessagingService;
  let listener: MessagingService;
  let baseUrl: string;
  let queue: QueueBackendOptions;
  const accountChanges: string[] = [];

  const admin = (urlPath: string, init: { method?: string; body?: unknown; token?: string } = {}) =>
    fetch(`${baseUrl}${urlPath}`, {
      method: init.method ?? 'GET',
      headers: { authorization: `Bearer ${init.token ?? ADMIN_TOKEN}`, 'content-type': 'application/json' },
      body: init.body === undefined ? undefined : JSON.stringify(init.body),
    });

  function sql<Row>(text: string, params: unknown[] = []): Promise<Row[]> {
    return queryRows<Row>(database.url, text, params);
  }

  async function createAccount(body: Record<string, unknown>): Promise<Account> {
    const response = await admin('/admin/v1/accounts', { method: 'POST', body });
    expect(response.status).toBe(201);
    return (await response.json()) as Account;
  }

  async function createKey(accountId: string): Promise<{ id: string; key: string }> {
    const response = await admin(`/admin/v1/accounts/${accountId}/keys`, { method: 'POST', body: {} });
    expect(response.status).toBe(201);
    return (await response.json()) as { id: string; key: string };
  }

  async function patch(accountId: string, body: unknown): Promise<Account> {
    const response = await admin(`/admin/v1/accounts/${accountId}`, { method: 'PATCH', body });
    expect(response.status).toBe(200);
    return (await response.json()) as Account;
  }

  async function resolve(key: string): Promise<ResolvedKey | null> {
    return (await producer.request(QueueName.BillingRpc, 'keys.resolve', { keyHash: hashApiKey(key) })).key;
  }

  async function waitFor(what: string, check: () => Promise<boolean> | boolean, timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!(await check())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }

  async function usedLedgerCount(accountId: string): Promise<number> {
    const rows = await sql<{ count: string }>(`SELECT count(*)::text AS count FROM billing.ledger_entries WHERE account_id = $1 AND kind = 'usage'`, [accountId]);
    return Number(rows[0].count);
  }

  /** Sends usage events through the usage queue in batches of 100, as the gateway does, and waits until the ledger has them all. */
  async function feedUsage(accountId: string, events: UsageEvent[]): Promise<void> {
    const before = await usedLedgerCount(accountId);
    const jobs: Array<{ name: 'usage.recordBatch'; data: UsageBatch }> = [];
    for (let index = 0; index < events.length; index += 100) {
      const lines = events.slice(index, index + 100).map((event) => JSON.stringify(event));
      jobs.push({ name: 'usage.recordBatch', data: await usageBatchOf(Buffer.from(lines.join('\n'))) });
    }
    await producer.enqueueMany(QueueName.Usage, jobs);
    await waitFor(`${events.length} usage entries`, async () => (await usedLedgerCount(accountId)) === before + events.length, 60_000);
  }

  function runReconcileCommand(env: Record<string, string | undefined>): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [RECONCILE_COMMAND], { env, stdio: ['ignore', 'pipe', 'pipe'] });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.on('error', reject);
      child.on('close', (code) => resolve({ code, stdout, stderr }));
    });
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

  describe('PATCH /admin/v1/accounts/{id}', () => {
    it('starts without limit overrides', async () => {
      const account = await createAccount({ name: 'fresh' });
      expect(account).toMatchObject({ requestsPerMinute: null, concurrentRequests: null, status: 'active', autoDebitStatus: 'disabled' });
      const key = await createKey(account.id);
      expect(await resolve(key.key)).toStrictEqual({
        keyId: key.id,
        accountId: account.id,
        plan: 'free',
        status: 'active',
        limits: {},
        balanceMicro: '0',
        balanceVersion: 0,
        usageSpentMicro: '0',
        rules: {},
        keySpend: { keyId: key.id, version: 0, periodStart: 0, spentMicro: '0', appliedMicro: '0' },
      });
    });

    it.each<[string, Record<string, unknown>, Partial<Account>, Record<string, unknown>]>([
      ['name', { name: 'Renamed Ltd' }, { name: 'Renamed Ltd' }, { name: 'Renamed Ltd' }],
      ['plan', { plan: 'paid' }, { plan: 'paid' }, { plan: 'paid' }],
      ['status', { status: 'suspended' }, { status: 'suspended' }, { status: 'suspended' }],
      ['auto debit', { autoDebitStatus: 'enabled' }, { autoDebitStatus: 'enabled' }, { auto_debit: 'enabled' }],
      ['low-balance threshold', { lowBalanceThreshold: 12.345678 }, { lowBalanceThreshold: 12.345678 }, { low_balance_threshold_micro: '12345678' }],
      ['requests per minute', { requestsPerMinute: 120 }, { requestsPerMinute: 120 }, { rate_limit_rpm: 120 }],
      ['concurrent requests', { concurrentRequests: 3 }, { concurrentRequests: 3 }, { rate_limit_concurrency: 3 }],
    ])('changes the %s alone, stores it and announces the change', async (_label, body, expected, columns) => {
      const account = await createAccount({ name: 'settings', credits: 10, lowBalanceThreshold: 5 });
      const updated = await patch(account.id, body);
      const untouched = { ...account, ...expected };
      expect(updated).toEqual({ ...untouched, updatedAt: updated.updatedAt });
      expect(Date.parse(updated.updatedAt)).toBeGreaterThanOrEqual(Date.parse(account.updatedAt));
      expect(await (await admin(`/admin/v1/accounts/${account.id}`)).json()).toEqual(updated);
      const [row] = await sql<Record<string, unknown>>('SELECT * FROM billing.accounts WHERE id = $1', [account.id]);
      expect(row).toMatchObject(columns);
      await waitFor('billing.account.changed', () => accountChanges.includes(account.id), 10_000);
    });

    it('changes several settings at once, and null removes a limit override', async () => {
      const account = await createAccount({ name: 'limits' });
      const key = await createKey(account.id);
      let updated = await patch(account.id, { plan: 'paid', status: 'suspended', requestsPerMinute: 30, concurrentRequests: 2 });
      expect(updated).toMatchObject({ plan: 'paid', status: 'suspended', requestsPerMinute: 30, concurrentRequests: 2 });
      expect(await resolve(key.key)).toMatchObject({ plan: 'paid', status: 'suspended', limits: { requestsPerMinute: 30, concurrentRequests: 2 } });

      updated = await patch(account.id, { requestsPerMinute: null, status: 'active' });
      expect(updated).toMatchObject({ status: 'active', requestsPerMinute: null, concurrentRequests: 2 });
      const resolved = await resolve(key.key);
      expect(resolved?.status).toBe('active');
      expect(resolved?.limits).toStrictEqual({ concurrentRequests: 2 });

      await patch(account.id, { concurrentRequests: null });
      expect((await resolve(key.key))?.limits).toStrictEqual({});
      const [row] = await sql<{ rate_limit_rpm: number | null; rate_limit_concurrency: number | null }>(
        'SELECT rate_limit_rpm, rate_limit_concurrency FROM billing.accounts WHERE id = $1',
        [account.id],
      );
      expect(row).toEqual({ rate_limit_rpm: null, rate_limit_concurrency: null });
    });

    it('publishes billing.account.changed for every change, after the change is visible', async () => {
      const account = await createAccount({ name: 'broadcast' });
      const key = await createKey(account.id);
      const seen: Array<ResolvedKey | null> = [];
      const observer = new MessagingService({ serviceName: 'test-observer', backend: queue });
      try {
        // What a gateway does on the broadcast: ask billing again. It must see the new settings.
        await observer.subscribe('billing.account.changed', async ({ accountId }) => {
          if (accountId !== account.id) return;
          // A loaded machine may time the look-up out; asking again still happens after the broadcast.
          for (let attempt = 1; ; attempt++) {
            try {
              seen.push(await resolve(key.key));
              return;
            } catch (error) {
              if (attempt === 3) throw error;
            }
          }
        });
        await patch(account.id, { requestsPerMinute: 7 });
        await waitFor('the first broadcast', () => seen.length === 1, 30_000);
        await patch(account.id, { status: 'suspended' });
        await waitFor('the second broadcast', () => seen.length === 2, 30_000);
      } finally {
        await observer.onApplicationShutdown();
      }
      expect(seen[0]).toMatchObject({ status: 'active', limits: { requestsPerMinute: 7 } });
      expect(seen[1]).toMatchObject({ status: 'suspended', limits: { requestsPerMinute: 7 } });
    });

    it('answers an empty body with the unchanged account', async () => {
      const account = await createAccount({ name: 'unchanged', plan: 'paid' });
      expect(await patch(account.id, {})).toEqual(account);
    });

    it('keeps the balance record right: active (free and paid wording), exhausted, suspended, auto debit', async () => {
      const account = await createAccount({ credits: 50, plan: 'free', lowBalanceThreshold: 10 });
      const key = await createKey(account.id);
      const balance = async () => {
        const response = await fetch(`${baseUrl}/v1/billing/balance`, { headers: { authorization: `Bearer ${key.key}` } });
        expect(response.status).toBe(200);
        return (await response.json()) as { balance: number; lowBalance: boolean; lowBalanceThreshold: number; status: string; statusExplanation: string; autoDebitStatus: string };
      };
      let record = await balance();
      expect(record).toMatchObject({ status: 'active', autoDebitStatus: 'disabled', lowBalance: false, lowBalanceThreshold: 10 });
      expect(record.statusExplanation).toMatch(/free plan/);

      await patch(account.id, { plan: 'paid', autoDebitStatus: 'enabled', lowBalanceThreshold: 60 });
      record = await balance();
      expect(record).toMatchObject({ status: 'active', autoDebitStatus: 'enabled', lowBalance: true, lowBalanceThreshold: 60 });
      expect(record.statusExplanation).toMatch(/paid plan/);
      expect(record.statusExplanation).not.toMatch(/free/);

      await patch(account.id, { status: 'suspended' });
      record = await balance();
      expect(record.status).toBe('suspended');
      expect(record.statusExplanation).toMatch(/suspended/);

      await patch(account.id, { status: 'active' });
      expect((await admin(`/admin/v1/accounts/${account.id}/credits`, { method: 'POST', body: { credits: -50 } })).status).toBe(200);
      record = await balance();
      expect(record).toMatchObject({ balance: 0, status: 'exhausted' });
      expect(record.statusExplanation).toMatch(/No credits left/);

      // Suspension is named before exhaustion.
      await patch(account.id, { status: 'suspended' });
      expect((await balance()).status).toBe('suspended');
    });

    it.each<[Record<string, unknown>, RegExp]>([
      [{ plan: 'gold' }, /plan: /],
      [{ plan: null }, /plan: /],
      [{ status: 'paused' }, /status: /],
      [{ status: null }, /status: /],
      [{ autoDebitStatus: 'yes' }, /autoDebitStatus: /],
      [{ name: null }, /name: /],
      [{ name: 42 }, /name: /],
      [{ lowBalanceThreshold: -1 }, /lowBalanceThreshold: /],
      [{ lowBalanceThreshold: 'ten' }, /lowBalanceThreshold: /],
      [{ lowBalanceThreshold: null }, /lowBalanceThreshold: /],
      [{ lowBalanceThreshold: 1e300 }, /lowBalanceThreshold: Expected a number from 0 to 1000000000000\. Received 1e\+300$/],
      [{ lowBalanceThreshold: 0.1234567 }, /lowBalanceThreshold: Expected a number with at most 6 decimal places\. Received 0\.1234567$/],
      [{ requestsPerMinute: 0 }, /requestsPerMinute: Expected an integer from 1 to 2147483647\. Received 0$/],
      [{ requestsPerMinute: 1.5 }, /requestsPerMinute: /],
      [{ requestsPerMinute: '60' }, /requestsPerMinute: /],
      [{ requestsPerMinute: 3_000_000_000 }, /requestsPerMinute: /],
      [{ concurrentRequests: -2 }, /concurrentRequests: /],
      [{ concurrentRequests: 'none' }, /concurrentRequests: /],
    ])('rejects %j with 400 and changes nothing', async (body, field) => {
      const account = await createAccount({ name: 'valid', plan: 'free' });
      const response = await admin(`/admin/v1/accounts/${account.id}`, { method: 'PATCH', body });
      expect(response.status).toBe(400);
      const error = (await response.json()) as { message: string; statusCode: number };
      expect(error.statusCode).toBe(400);
      expect(error.message).toMatch(/^Body validation error! /);
      expect(error.message).toMatch(field);
      expect(await (await admin(`/admin/v1/accounts/${account.id}`)).json()).toEqual(account);
    });

    it.each([
      ['an unknown account', `/admin/v1/accounts/${randomUUID()}`, 404],
      ['an id that is not a uuid', '/admin/v1/accounts/not-a-uuid', 404],
    ])('answers 404 for %s', async (_label, urlPath, status) => {
      const response = await admin(urlPath, { method: 'PATCH', body: { plan: 'paid' } });
      expect(response.status).toBe(status);
      expect(await response.json()).toMatchObject({ statusCode: 404, path: urlPath });
    });

    it('needs the admin token', async () => {
      const account = await createAccount({});
      const response = await admin(`/admin/v1/accounts/${account.id}`, { method: 'PATCH', body: { plan: 'paid' }, token: 'wrong-token-0123456789' });
      expect(response.status).toBe(401);
    });
  });

  describe('usage', () => {
    const MODELS = ['openai/gpt-4o-mini', 'anthropic/claude-3-5-haiku', 'google/gemini-2.0-flash'];
    const DEPLOYMENTS = ['azure-eastus/gpt-4o-prod', 'azure-westus/gpt-4o', 'openai/gpt-4o-mini'];
    const EVENT_COUNT = 320;
    let account: Account;
    let keys: Array<{ id: string; key: string }>;
    let events: UsageEvent[];
    let otherAccount: Account;

    /** Everything the ledger holds for the account, in the listing's order, straight from SQL. */
    async function ledgerOrder(accountId: string): Promise<string[]> {
      const rows = await sql<{ id: string }>('SELECT id::text FROM billing.ledger_entries WHERE account_id = $1 ORDER BY occurred_at DESC, id DESC', [accountId]);
      return rows.map((row) => row.id);
    }

    async function list(accountId: string, query: Record<string, string | number> = {}): Promise<UsageList> {
      const search = new URLSearchParams(Object.entries(query).map(([name, value]): [string, string] => [name, String(value)]));
      const response = await admin(`/admin/v1/accounts/${accountId}/usage?${search.toString()}`);
      expect(response.status).toBe(200);
      return (await response.json()) as UsageList;
    }

    /** Walks every page and returns the entries in order, checking each page's size. */
    async function listAll(accountId: string, query: Record<string, string | number>, pageSize: number): Promise<{ entries: UsageEntry[]; pages: number }> {
      const entries: UsageEntry[] = [];
      let cursor: string | null = null;
      let pages = 0;
      do {
        const page: UsageList = await list(accountId, { ...query, limit: pageSize, ...(cursor ? { cursor } : {}) });
        pages++;
        if (page.nextCursor !== null) expect(page.data).toHaveLength(pageSize);
        entries.push(...page.data);
        cursor = page.nextCursor;
        if (pages > 1000) throw new Error('pagination does not end');
      } while (cursor !== null);
      return { entries, pages };
    }

    beforeAll(async () => {
      account = await createAccount({ name: 'heavy user', plan: 'paid', credits: 1_000_000 });
      keys = [await createKey(account.id), await createKey(account.id)];
      await admin(`/admin/v1/accounts/${account.id}/credits`, { method: 'POST', body: { credits: 2.5, reason: 'top-up' } });
      await admin(`/admin/v1/accounts/${account.id}/credits`, { method: 'POST', body: { credits: -0.75, reason: 'correction' } });

      const random = seededRandom(20250301);
      const pick = <T>(values: readonly T[]): T => values[Math.floor(random() * values.length)];
      events = [];
      for (let index = 0; index < EVENT_COUNT; index++) {
        const day = 1 + Math.floor(random() * 5);
        let occurredAt = new Date(Date.UTC(2025, 2, day) + Math.floor(random() * 86_400_000)).toISOString();
        // Ties on occurred_at: the listing must still order (and page) them by id.
        if (index % 10 === 9) occurredAt = events[index - 1].occurredAt;
        // Window and day boundaries, exactly.
        if (index === 0) occurredAt = '2025-03-02T00:00:00.000Z';
        if (index === 1) occurredAt = '2025-03-01T23:59:59.999Z';
        if (index === 2) occurredAt = '2025-03-04T00:00:00.000Z';
        const units: Record<string, number> = {
          input_tokens: Math.floor(random() * 200_000),
          output_tokens: Math.floor(random() * 50_000),
        };
        if (random() < 0.3) units.cache_read_input_tokens = 1 + Math.floor(random() * 100_000);
        // Prices in whole micro-USD per million tokens, drawn per event: the charge is then an
        // exact number of micro-credits (2 per token per micro-USD at 2,000,000 credits per USD),
        // which billing checks, up to about a million credits; USD to 13 places. Sums a float would get wrong.
        const [inputPrice, outputPrice] = [1 + Math.floor(random() * 5_000_000), 1 + Math.floor(random() * 5_000_000)];
        const creditsMicro = 2n * (BigInt(units.input_tokens) * BigInt(inputPrice) + BigInt(units.output_tokens) * BigInt(outputPrice));
        events.push({
          requestId: randomUUID(),
          accountId: account.id,
          keyId: pick(keys).id,
          model: pick(MODELS),
          endpoint: 'chat.completions',
          units,
          creditsMicro: creditsMicro.toString(),
          usd: decimalText(creditsMicro * 5n, 13),
          catalogueRevision: 1 + Math.floor(random() * 3),
          prices: [
            { unit: 'input_tokens', price: inputPrice / 1_000_000, per: 1_000_000 },
            { unit: 'output_tokens', price: outputPrice / 1_000_000, per: 1_000_000 },
          ],
          occurredAt,
          // Every fourth as a gateway journalled it before deployments were recorded.
          ...(index % 4 === 3 ? {} : { deployment: pick(DEPLOYMENTS) }),
        });
      }
      await feedUsage(account.id, events);

      // Another account's usage of the same models must never show up.
      otherAccount = await createAccount({ name: 'neighbour', credits: 10 });
      const otherKey = await createKey(otherAccount.id);
      await feedUsage(
        otherAccount.id,
        [0, 1, 2].map((index) => ({ ...events[index], requestId: randomUUID(), accountId: otherAccount.id, keyId: otherKey.id })),
      );
    }, 120_000);

    it('lists usage and credit entries newest first, every field of an entry', async () => {
      const page = await list(account.id, { limit: 1000 });
      expect(page.object).toBe('list');
      expect(page.nextCursor).toBeNull();
      expect(page.data).toHaveLength(EVENT_COUNT + 3);
      expect(page.data.map((entry) => entry.id)).toEqual(await ledgerOrder(account.id));

      // Credits were given now, after the (2025) usage: they come first, newest first.
      expect(page.data.slice(0, 3).map((entry) => [entry.kind, entry.credits, entry.usd, entry.reason])).toEqual([
        ['credit', '-0.75', '-0.000000375', 'correction'],
        ['credit', '2.5', '0.00000125', 'top-up'],
        ['credit', '1000000', '0.5', 'opening balance'],
      ]);
      expect(page.data[0]).toMatchObject({ requestId: null, keyId: null, model: null, endpoint: null, deployment: null, units: null, prices: null, catalogueRevision: null });

      const event = events[5];
      const entry = page.data.find((candidate) => candidate.requestId === event.requestId);
      expect(entry).toEqual({
        id: expect.stringMatching(/^\d+$/),
        kind: 'usage',
        requestId: event.requestId,
        // The events carry no client request id.
        clientRequestId: null,
        keyId: event.keyId,
        model: event.model,
        endpoint: event.endpoint,
        deployment: event.deployment,
        // The events say nothing of the response cache.
        cache: null,
        cacheSavedUsd: null,
        units: event.units,
        // A charge reads as the summary shows it: positive, exact.
        credits: creditsOf(BigInt(event.creditsMicro)),
        usd: event.usd,
        catalogueRevision: event.catalogueRevision,
        prices: event.prices,
        reason: null,
        occurredAt: event.occurredAt,
        recordedAt: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
      });
      const occurred = page.data.map((candidate) => Date.parse(candidate.occurredAt));
      expect(occurred).toEqual([...occurred].sort((a, b) => b - a));
    });

    it('keeps the deployment that served each usage entry, null for events that name none', async () => {
      expect(events[5].deployment).toEqual(expect.any(String));
      const { entries } = await listAll(account.id, { kind: 'usage' }, 500);
      const byRequest = new Map(entries.map((entry) => [entry.requestId, entry.deployment]));
      expect(byRequest.size).toBe(EVENT_COUNT);
      for (const event of events) expect(byRequest.get(event.requestId)).toBe(event.deployment ?? null);
      expect(new Set(entries.map((entry) => entry.deployment))).toEqual(new Set([...DEPLOYMENTS, null]));
    });

    it('keeps it as well on the path a batch takes when it cannot be applied as a whole (event by event)', async () => {
      const applyOne = (event: UsageEvent) => (app.get(LedgerService) as unknown as { applyOne(event: UsageEvent): Promise<{ applied: boolean }> }).applyOne(event);
      // An account of its own: the listings above count this account's entries.
      const own = await createAccount({ name: 'one by one', credits: 100 });
      const ownKey = await createKey(own.id);
      const base = { ...events[7], accountId: own.id, keyId: ownKey.id, units: { input_tokens: 10 }, creditsMicro: '20000000', usd: '0.00001', prices: [{ unit: 'input_tokens', price: 1, per: 1_000_000 }] };
      const named: UsageEvent = { ...base, requestId: randomUUID(), deployment: 'azure-eastus/gpt-4o-prod' };
      const unnamed: UsageEvent = { ...base, requestId: randomUUID() };
      delete unnamed.deployment;
      expect(await applyOne(named)).toEqual({ applied: true });
      expect(await applyOne(unnamed)).toEqual({ applied: true });
      const entries = (await list(own.id, { kind: 'usage' })).data;
      expect(Object.fromEntries(entries.map((entry) => [entry.requestId, entry.deployment]))).toEqual({ [named.requestId]: 'azure-eastus/gpt-4o-prod', [unnamed.requestId]: null });
    });

    it('pages through everything with the cursor: no duplicates, no gaps, ties split by id', async () => {
      const expected = await ledgerOrder(account.id);
      const { entries, pages } = await listAll(account.id, {}, 37);
      const ids = entries.map((entry) => entry.id);
      expect(new Set(ids).size).toBe(ids.length);
      expect(ids).toEqual(expected);
      expect(pages).toBe(Math.ceil(expected.length / 37));

      // A page size that divides the total exactly ends with an empty-cursor page, not an empty page.
      const exact = await listAll(account.id, { kind: 'usage' }, EVENT_COUNT / 4);
      expect(exact.pages).toBe(4);
      expect(exact.entries).toHaveLength(EVENT_COUNT);
    });

    it('uses 100 entries a page by default', async () => {
      const page = await list(account.id);
      expect(page.data).toHaveLength(100);
      expect(page.nextCursor).toEqual(expect.any(String));
    });

    it('filters by kind', async () => {
      const usage = await list(account.id, { kind: 'usage', limit: 1000 });
      expect(usage.data).toHaveLength(EVENT_COUNT);
      expect(usage.data.every((entry) => entry.kind === 'usage' && !entry.credits.startsWith('-'))).toBe(true);
      const credits = await list(account.id, { kind: 'credit', limit: 1000 });
      expect(credits.data.map((entry) => entry.reason)).toEqual(['correction', 'top-up', 'opening balance']);
    });

    it('filters by model and by key, also across pages', async () => {
      for (const model of MODELS) {
        const { entries } = await listAll(account.id, { model }, 25);
        expect(new Set(entries.map((entry) => entry.requestId))).toEqual(new Set(events.filter((event) => event.model === model).map((event) => event.requestId)));
        expect(entries.every((entry) => entry.model === model)).toBe(true);
      }
      for (const key of keys) {
        const { entries } = await listAll(account.id, { key: key.id, model: MODELS[0] }, 10);
        const expected = events.filter((event) => event.keyId === key.id && event.model === MODELS[0]).map((event) => event.requestId);
        expect(entries.map((entry) => entry.requestId).sort()).toEqual(expected.sort());
      }
      expect((await list(account.id, { model: 'no/such-model' })).data).toEqual([]);
      expect((await list(account.id, { key: randomUUID() })).data).toEqual([]);
    });

    it('filters by time: from inclusive, to exclusive, offsets and date-only values understood', async () => {
      const from = '2025-03-02T00:00:00.000Z';
      const to = '2025-03-04T00:00:00.000Z';
      const inWindow = (event: UsageEvent) => Date.parse(event.occurredAt) >= Date.parse(from) && Date.parse(event.occurredAt) < Date.parse(to);
      const expected = new Set(events.filter(inWindow).map((event) => event.requestId));
      expect(expected.has(events[0].requestId)).toBe(true); // exactly at `from`
      expect(expected.has(events[1].requestId)).toBe(false); // a millisecond before
      expect(expected.has(events[2].requestId)).toBe(false); // exactly at `to`

      for (const window of [
        { from, to },
        { from: '2025-03-02', to: '2025-03-04' },
        { from: '2025-03-02T01:00:00+01:00', to: '2025-03-03T19:00:00-05:00' },
        { from: '2025-03-02T00:00', to: '2025-03-04T00:00:00.000000Z' },
      ]) {
        const { entries } = await listAll(account.id, window, 60);
        expect(new Set(entries.map((entry) => entry.requestId))).toEqual(expected);
      }
      const onlyFrom = await list(account.id, { from: '2025-03-05', kind: 'usage', limit: 1000 });
      expect(onlyFrom.data).toHaveLength(events.filter((event) => event.occurredAt >= '2025-03-05').length);
      const onlyTo = await list(account.id, { to: '2025-03-02', limit: 1000 });
      expect(onlyTo.data).toHaveLength(events.filter((event) => event.occurredAt < '2025-03-02').length);
      expect(onlyTo.data.map((entry) => entry.requestId)).toContain(events[1].requestId);
    });

    it.each<[string, RegExp]>([
      ['limit=0', /^Body validation error! limit: Expected an integer from 1 to 1000\. Received 0$/],
      ['limit=1001', /^Body validation error! limit: Expected an integer from 1 to 1000\. Received 1001$/],
      ['limit=ten', /^Body validation error! limit: Expected an integer\. Received string 'ten'$/],
      ['limit=2.5', /^Body validation error! limit: Expected an integer\. Received string '2\.5'$/],
      ['limit=9007199254740993', /^Body validation error! limit: Expected an integer from 1 to 1000\. Received 9007199254740992$/],
      ['from=yesterday', /^Body validation error! from: Expected an ISO 8601 date or time.*Received 'yesterday'/],
      ['from=2025-02-30', /^Body validation error! from: /],
      ['to=2025-03-01T25:00:00Z', /^Body validation error! to: /],
      ['from=2025-03-05&to=2025-03-01', /^Body validation error! to: Expected a time at or after from/],
      ['key=not-a-uuid', /^Body validation error! key: Expected an API key id/],
      ['kind=refund', /^Body validation error! kind: Expected one of 'usage', 'credit'. Received 'refund'/],
      ['cursor=garbage!', /^Body validation error! cursor: Expected the nextCursor of a previous page/],
      [`cursor=${Buffer.from('["yesterday","1"]').toString('base64url')}`, /^Body validation error! cursor: /],
      ['model=a&model=b', /^Body validation error! model: /],
    ])('rejects ?%s with 400', async (query, message) => {
      const response = await admin(`/admin/v1/accounts/${account.id}/usage?${query}`);
      expect(response.status).toBe(400);
      const error = (await response.json()) as { message: string; path: string };
      expect(error.message).toMatch(message);
      expect(error.path).toBe(`/admin/v1/accounts/${account.id}/usage`);
    });

    it('answers 404 for an unknown account and 401 without the admin token', async () => {
      expect((await admin(`/admin/v1/accounts/${randomUUID()}/usage`)).status).toBe(404);
      expect((await admin(`/admin/v1/accounts/${randomUUID()}/usage/summary`)).status).toBe(404);
      expect((await admin('/admin/v1/accounts/nope/usage/summary')).status).toBe(404);
      expect((await admin(`/admin/v1/accounts/${account.id}/usage`, { token: 'wrong-token-0123456789' })).status).toBe(401);
      expect((await admin(`/admin/v1/accounts/${account.id}/usage/summary`, { token: 'wrong-token-0123456789' })).status).toBe(401);
    });

    /** The summary the ledger should give, computed from the events sent, with BigInt. */
    function expectedSummary(selected: UsageEvent[]): UsageSummary {
      const groups = new Map<string, { day: string; model: string; requests: number; micro: bigint; usd: bigint; units: Map<string, bigint> }>();
      const usdUnits = (text: string): bigint => {
        const [whole, fraction = ''] = text.split('.');
        return BigInt(whole) * 10n ** BigInt(USD_DIGITS) + BigInt(fraction.padEnd(USD_DIGITS, '0'));
      };
      for (const event of selected) {
        const day = event.occurredAt.slice(0, 10);
        const id = `${day} ${event.model}`;
        const group = groups.get(id) ?? { day, model: event.model, requests: 0, micro: 0n, usd: 0n, units: new Map<string, bigint>() };
        group.requests++;
        group.micro += BigInt(event.creditsMicro);
        group.usd += usdUnits(event.usd);
        for (const [unit, count] of Object.entries(event.units)) group.units.set(unit, (group.units.get(unit) ?? 0n) + BigInt(count));
        groups.set(id, group);
      }
      const rows = [...groups.values()].sort((a, b) => (a.day === b.day ? (a.model < b.model ? -1 : 1) : a.day < b.day ? -1 : 1));
      const totalMicro = rows.reduce((sum, row) => sum + row.micro, 0n);
      const totalUsd = rows.reduce((sum, row) => sum + row.usd, 0n);
      return {
        object: 'list',
        data: rows.map((row) => ({
          day: row.day,
          model: row.model,
          requests: row.requests,
          credits: creditsOf(row.micro),
          usd: decimalText(row.usd, USD_DIGITS),
          units: Object.fromEntries([...row.units.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([unit, count]) => [unit, Number(count)])),
        })),
        totals: { requests: selected.length, credits: creditsOf(totalMicro), usd: decimalText(totalUsd, USD_DIGITS) },
      };
    }

    async function summary(accountId: string, query = ''): Promise<UsageSummary> {
      const response = await admin(`/admin/v1/accounts/${accountId}/usage/summary${query}`);
      expect(response.status).toBe(200);
      return (await response.json()) as UsageSummary;
    }

    it('sums usage by UTC day and model exactly (credits, USD, units), credit entries left out', async () => {
      const result = await summary(account.id);
      const expected = expectedSummary(events);
      expect(result).toEqual(expected);
      expect(result.data.length).toBe(5 * MODELS.length);
      // The day boundary: 23:59:59.999 counts for the 1st, 00:00:00.000 for the 2nd.
      expect(result.data.filter((row) => row.day === '2025-03-01').reduce((sum, row) => sum + row.requests, 0)).toBe(
        events.filter((event) => event.occurredAt.startsWith('2025-03-01')).length,
      );
      // Exact in micro-credits too: the totals equal the ledger's own sum.
      const [{ sum }] = await sql<{ sum: string }>(`SELECT (-sum(amount_micro))::text AS sum FROM billing.ledger_entries WHERE account_id = $1 AND kind = 'usage'`, [account.id]);
      expect(result.totals.credits).toBe(creditsOf(BigInt(sum)));
    });

    it('sums only the window when from/to are given', async () => {
      const from = '2025-03-02T00:00:00Z';
      const to = '2025-03-04T00:00:00Z';
      const selected = events.filter((event) => Date.parse(event.occurredAt) >= Date.parse(from) && Date.parse(event.occurredAt) < Date.parse(to));
      expect(await summary(account.id, `?from=${from}&to=${to}`)).toEqual(expectedSummary(selected));
      expect(await summary(account.id, '?from=2025-03-05')).toEqual(expectedSummary(events.filter((event) => event.occurredAt >= '2025-03-05')));
    });

    it('is empty, with zero totals, for an account without usage or an empty window', async () => {
      const idle = await createAccount({ credits: 5 });
      const empty = { object: 'list', data: [], totals: { requests: 0, credits: '0', usd: '0' } };
      expect(await summary(idle.id)).toEqual(empty);
      expect(await summary(account.id, '?from=2030-01-01')).toEqual(empty);
    });

    it('keeps other accounts apart', async () => {
      expect((await summary(otherAccount.id)).totals.requests).toBe(3);
      expect((await list(otherAccount.id, { kind: 'usage' })).data).toHaveLength(3);
    });

    it.each<[string, RegExp]>([
      ['?from=soon', /^Body validation error! from: /],
      ['?to=2025-13-01', /^Body validation error! to: /],
      ['?from=2025-03-05&to=2025-03-01', /^Body validation error! to: /],
    ])('rejects the summary query %s with 400', async (query, message) => {
      const response = await admin(`/admin/v1/accounts/${account.id}/usage/summary${query}`);
      expect(response.status).toBe(400);
      expect(((await response.json()) as { message: string }).message).toMatch(message);
    });
  });

  describe('reconciliation', () => {
    let client: Client;

    beforeAll(async () => {
      client = new Client({ connectionString: database.url });
      await client.connect();
    });

    afterAll(async () => {
      await client?.end();
    });

    const accountCount = async (): Promise<number> => Number((await client.query('SELECT count(*)::int AS count FROM billing.accounts')).rows[0].count);

    it('finds every balance equal to its ledger: function, HTTP and command (exit 0)', async () => {
      const accounts = await accountCount();
      expect(accounts).toBeGreaterThan(10);
      const report = await reconcileBalances(client);
      expect(report).toEqual({ accounts, mismatches: [], usageMismatches: [], keyMismatches: [], checkedAt: expect.any(String) });
      expect(Math.abs(Date.parse(report.checkedAt) - Date.now())).toBeLessThan(60_000);

      const response = await admin('/admin/v1/reconciliation');
      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ accounts, mismatches: [], usageMismatches: [], keyMismatches: [], checkedAt: expect.any(String) });

      const command = await runReconcileCommand({ ...process.env, DATABASE_URL: database.url });
      expect(command.code).toBe(0);
      expect(JSON.parse(command.stdout) as Report).toEqual({ accounts, mismatches: [], usageMismatches: [], keyMismatches: [], checkedAt: expect.any(String) });
    });

    it('reports a balance changed behind the ledger: function, HTTP (still 200) and command (exit 1)', async () => {
      const victim = await createAccount({ credits: 100 });
      await client.query('UPDATE billing.accounts SET balance_micro = balance_micro + 1 WHERE id = $1', [victim.id]);
      try {
        const mismatch = {
          accountId: victim.id,
          balance: 100.000001,
          ledger: 100,
          difference: 0.000001,
          balanceMicro: '100000001',
          ledgerMicro: '100000000',
          differenceMicro: '1',
        };
        const accounts = await accountCount();
        expect(await reconcileBalances(client)).toEqual({ accounts, mismatches: [mismatch], usageMismatches: [], keyMismatches: [], checkedAt: expect.any(String) });

        const response = await admin('/admin/v1/reconciliation');
        expect(response.status).toBe(200);
        expect(await response.json()).toEqual({ accounts, mismatches: [mismatch], usageMismatches: [], keyMismatches: [], checkedAt: expect.any(String) });
        expect((await admin('/admin/v1/reconciliation', { token: 'wrong-token-0123456789' })).status).toBe(401);

        const command = await runReconcileCommand({ ...process.env, DATABASE_URL: database.url });
        expect(command.code).toBe(1);
        expect(JSON.parse(command.stdout) as Report).toEqual({ accounts, mismatches: [mismatch], usageMismatches: [], keyMismatches: [], checkedAt: expect.any(String) });
        expect(command.stderr).toContain('1 of');
      } finally {
        await client.query('UPDATE billing.accounts SET balance_micro = balance_micro - 1 WHERE id = $1', [victim.id]);
      }
      expect((await reconcileBalances(client)).mismatches).toEqual([]);
    });

    it('reports a usage total changed behind the ledger (what gateways count unapplied spending against)', async () => {
      const victim = await createAccount({ credits: 100 });
      await client.query('UPDATE billing.accounts SET usage_spent_micro = usage_spent_micro + 5 WHERE id = $1', [victim.id]);
      try {
        const report = await reconcileBalances(client);
        expect(report.mismatches).toEqual([]);
        expect(report.usageMismatches).toEqual([{ accountId: victim.id, usageSpentMicro: '5', ledgerUsageMicro: '0' }]);
        const command = await runReconcileCommand({ ...process.env, DATABASE_URL: database.url });
        expect(command.code).toBe(1);
        expect(command.stderr).toContain('usage total');
      } finally {
        await client.query('UPDATE billing.accounts SET usage_spent_micro = usage_spent_micro - 5 WHERE id = $1', [victim.id]);
      }
      expect((await reconcileBalances(client)).usageMismatches).toEqual([]);
    });

    it('reports a key whose spend or usage total was changed behind the ledger', async () => {
      const account = await createAccount({ credits: 100 });
      const key = await createKey(account.id);
      await client.query(`UPDATE billing.api_keys SET budget_limit = '5', budget_unit = 'credits', budget_period = 'month', spend_period_start = date_trunc('month', now(), 'UTC'), spent_micro = 7 WHERE id = $1`, [key.id]);
      try {
        const report = await reconcileBalances(client);
        expect(report.keyMismatches).toEqual([{ keyId: key.id, spentMicro: '7', ledgerSpentMicro: '0', usageAppliedMicro: '0', ledgerUsageMicro: '0' }]);
        const command = await runReconcileCommand({ ...process.env, DATABASE_URL: database.url });
        expect(command.code).toBe(1);
        expect(command.stderr).toContain('1 keys have a spend');
      } finally {
        await client.query('UPDATE billing.api_keys SET spent_micro = 0 WHERE id = $1', [key.id]);
      }
      expect((await reconcileBalances(client)).keyMismatches).toEqual([]);
    });

    it('reports an account whose ledger entries were lost', async () => {
      const account = await createAccount({ credits: 3 });
      await client.query(`DELETE FROM billing.ledger_entries WHERE account_id = $1`, [account.id]);
      try {
        const report = await reconcileBalances(client);
        expect(report.mismatches).toEqual([expect.objectContaining({ accountId: account.id, balance: 3, ledger: 0, difference: 3, differenceMicro: '3000000' })]);
      } finally {
        await client.query(`UPDATE billing.accounts SET balance_micro = 0 WHERE id = $1`, [account.id]);
      }
      expect((await reconcileBalances(client)).mismatches).toEqual([]);
    });

    it('the command refuses to run without DATABASE_URL (exit 2), and says so', async () => {
      const env = { ...process.env };
      delete env.DATABASE_URL;
      const command = await runReconcileCommand(env);
      expect(command.code).toBe(2);
      expect(command.stdout).toBe('');
      expect(command.stderr).toMatch(/DATABASE_URL is not set/);
    });

    it('the command exits 2, naming the database without its password, when it cannot check', async () => {
      const url = new URL(database.url);
      url.pathname = '/igw_no_such_database';
      url.password = 'secret-password';
      const command = await runReconcileCommand({ ...process.env, DATABASE_URL: url.toString() });
      expect(command.code).toBe(2);
      expect(command.stderr).toContain('could not reconcile');
      expect(command.stderr).not.toContain('secret-password');
    });
  });
});
