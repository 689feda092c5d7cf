import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { creditsToMicro, formatMicroCredits, parseDecimal, toScaledUnits, USD_SCALE } from '@igw/domain';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody } from './support/http';
import { startDistributedHarness, type DistributedHarness } from './support/distributed-harness';
import { startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

/**
 * Keys with their own rules (budget, models, rates, expiry), set through the admin API and
 * enforced by the gateway inside admission. Prices (chat-catalogue.yaml): an input token 0.3
 * credits, an output token 1.2 credits; `max_tokens: 10` keeps a request's hold near 15 credits.
 */
const CATALOGUE_FILE = path.join(__dirname, 'fixtures/chat-catalogue.yaml');
const ask = (model = 'mini', content = 'hello') => ({ model, max_tokens: 10, messages: [{ role: 'user', content }] });

interface KeyView {
  id: string;
  key?: string;
  name: string | null;
  metadata: Record<string, string>;
  budget: { limit: string; unit: 'usd' | 'credits'; period: 'day' | 'month' | 'lifetime' } | null;
  models: string[] | null;
  rpm: number | null;
  concurrency: number | null;
  expiresAt: string | null;
  spend: { period: string; spent: string; periodStart: string; resetsAt: string | null } | null;
}

/** The admin API of a billing service, as the tests use it. */
function adminOf(billing: string, token: string) {
  return {
    account: async (credits: number) => (await call<{ id: string }>(`${billing}/admin/v1/accounts`, { token, body: { credits, plan: 'paid' } })).body.id,
    createKey: (accountId: string, rules: Record<string, unknown>) => call<KeyView>(`${billing}/admin/v1/accounts/${accountId}/keys`, { token, body: rules }),
    patchKey: (keyId: string, rules: unknown) => call<KeyView>(`${billing}/admin/v1/keys/${keyId}`, { method: 'PATCH', token, body: rules }),
    getKey: (keyId: string) => call<KeyView>(`${billing}/admin/v1/keys/${keyId}`, { token }),
    /** The key's usage rows in the ledger, summed in micro-credits: those in [from, to) and all of them. */
    async ledgerSumMicro(accountId: string, keyId: string, from = new Date(0)): Promise<bigint> {
      let total = 0n;
      let cursor: string | undefined;
      do {
        const page = await call<{ data: Array<{ credits: string; occurredAt: string }>; nextCursor: string | null }>(
          `${billing}/admin/v1/accounts/${accountId}/usage?kind=usage&key=${keyId}&limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ''}`,
          { token },
        );
        for (const row of page.body.data) if (new Date(row.occurredAt) >= from) total += creditsToMicro(row.credits.replace('-', ''));
        cursor = page.body.nextCursor ?? undefined;
      } while (cursor);
      return total;
    },
  };
}

/** Fires `count` requests, `concurrency` at a time, spread over `gateways`; answers each status and the credits it reported. */
async function fire(gateways: string[], key: string, count: number, concurrency: number): Promise<{ statuses: number[]; spentMicro: bigint; messages: string[] }> {
  const statuses: number[] = [];
  const messages: string[] = [];
  let spentMicro = 0n;
  let next = 0;
  const worker = async () => {
    while (next < count) {
      const index = next++;
      const response = await call<{ meta?: { usage: { credits_used: number } }; message?: string }>(`${gateways[index % gateways.length]}/v1/chat/completions`, {
        token: key,
        body: ask('mini', `request ${index} of a budgeted key`),
      });
      statuses.push(response.status);
      if (response.status === 200) spentMicro += creditsToMicro(String(response.body.meta!.usage.credits_used));
      else messages.push(response.body.message ?? '');
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return { statuses, spentMicro, messages };
}

const tomorrowUtc = () => {
  const now = new Date();
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1)).toISOString();
};

describe('keys with their own rules (standalone)', () => {
  let emulator: RunningEmulator;
  let app: StandaloneHarness;
  let admin: ReturnType<typeof adminOf>;

  beforeAll(async () => {
    emulator = await startEmulator();
    app = await startStandaloneHarness({ CATALOGUE_FILE, OPENAI_API_KEY: 'k', OPENAI_BASE_URL: `${emulator.url}/v1`, RATE_LIMIT_RPM: '100000', RATE_LIMIT_CONCURRENCY: '1000' });
    admin = adminOf(app.billing, app.adminToken);
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await emulator?.close();
  });

  const chat = (key: string, model?: string) => call<{ message?: string; meta?: { usage: { credits_used: number } } }>(`${app.gateway}/v1/chat/completions`, { token: key, body: ask(model) });

  it('creates a key with rules, shows them (never the key again), and changes or clears them one by one', async () => {
    const accountId = await admin.account(10_000);
    const rules = {
      name: 'ci pipeline',
      metadata: { owner: 'ana@example.com', team: 'search' },
      budget: { limit: '25.00', unit: 'usd', period: 'month' },
      models: ['anthropic/*', 'mini'],
      rpm: 60,
      concurrency: 4,
      expiresAt: '2099-01-31T00:00:00Z',
    };
    const created = await admin.createKey(accountId, rules);
    expect(created.status).toBe(201);
    expect(created.body.key).toMatch(/^igw_/);
    const { key: _key, ...shown } = created.body;
    expect(shown).toMatchObject({ ...rules, expiresAt: '2099-01-31T00:00:00.000Z', spend: { period: 'month', spent: '0', resetsAt: expect.any(String) } });
    const fetched = await admin.getKey(created.body.id);
    expect(fetched.body).not.toHaveProperty('key');
    expect(fetched.body).toMatchObject(shown);

    const patched = await admin.patchKey(created.body.id, { rpm: null, models: null, budget: { limit: '5', unit: 'credits', period: 'lifetime' } });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ name: 'ci pipeline', rpm: null, models: null, concurrency: 4, budget: { limit: '5', unit: 'credits', period: 'lifetime' } });
    expect(patched.body.spend).toEqual({ period: 'lifetime', spent: '0', periodStart: '1970-01-01T00:00:00.000Z', resetsAt: null });
    expect((await admin.patchKey(created.body.id, { budget: null })).body.spend).toBeNull();
    const listed = await call<{ data: KeyView[] }>(`${app.billing}/admin/v1/accounts/${accountId}/keys`, { token: app.adminToken });
    expect(listed.body.data[0]).toMatchObject({ id: created.body.id, budget: null, spend: null, concurrency: 4 });
  });

  it('refuses malformed rules with 400, unknown and made-up key ids with 404, and a missing admin token with 401', async () => {
    const accountId = await admin.account(10);
    const bad: Array<[string, Record<string, unknown>]> = [
      ['budget', { budget: { limit: 25, unit: 'usd', period: 'month' } }],
      ['budget', { budget: { limit: '-1', unit: 'usd', period: 'month' } }],
      ['budget', { budget: { limit: '1e9', unit: 'usd', period: 'month' } }],
      ['budget', { budget: { limit: '1', unit: 'eur', period: 'month' } }],
      ['budget', { budget: { limit: '1', unit: 'usd', period: 'week' } }],
      ['budget', { budget: { limit: '1', unit: 'usd', period: 'day', extra: true } }],
      ['budget', { budget: 'lots' }],
      ['models', { models: 'anthropic/*' }],
      ['models', { models: ['ok', 'no spaces please'] }],
      ['models', { models: Array.from({ length: 101 }, (_, index) => `m${index}`) }],
      ['metadata', { metadata: { owner: 7 } }],
      ['metadata', { metadata: Object.fromEntries(Array.from({ length: 33 }, (_, index) => [`k${index}`, 'v'])) }],
      ['metadata', { metadata: { owner: 'x'.repeat(513) } }],
      ['rpm', { rpm: 0 }],
      ['rpm', { rpm: 1.5 }],
      ['concurrency', { concurrency: 3_000_000_000 }],
      ['expiresAt', { expiresAt: 'tomorrow' }],
      ['expiresAt', { expiresAt: 1_900_000_000 }],
      ['name', { name: 'n'.repeat(201) }],
    ];
    const { body: key } = await admin.createKey(accountId, {});
    for (const [field, body] of bad) {
      const refused = await admin.createKey(accountId, body);
      expectErrorBody(refused, 400, `/admin/v1/accounts/${accountId}/keys`);
      expect(refused.body as unknown as { message: string }).toMatchObject({ message: expect.stringContaining(field) });
      expectErrorBody(await admin.patchKey(key.id, body), 400, `/admin/v1/keys/${key.id}`);
    }
    // The key was not changed by any of them.
    expect((await admin.getKey(key.id)).body).toMatchObject({ budget: null, models: null, rpm: null, metadata: {} });
    for (let index = 0; index < 100; index++) {
      const id = randomUUID();
      expect((await admin.patchKey(id, { rpm: 5 })).status).toBe(404);
      expect((await admin.getKey(id)).status).toBe(404);
    }
    expect((await admin.patchKey('not-a-uuid', { rpm: 5 })).status).toBe(404);
    expect((await admin.createKey(randomUUID(), { rpm: 5 })).status).toBe(404);
    expect((await call(`${app.billing}/admin/v1/keys/${key.id}`, { method: 'PATCH', body: { rpm: 5 } })).status).toBe(401);
  });

  it('spends a budget until refused (403 naming the budget and its reset), keeps the spend equal to the ledger, shows it in the balance, and lets requests through once raised', async () => {
    const accountId = await admin.account(100_000);
    const { body: created } = await admin.createKey(accountId, { budget: { limit: '100', unit: 'credits', period: 'day' } });
    const key = created.key!;
    let refused: { status: number; body: { message?: string } } | undefined;
    let served = 0;
    let servedMicro = 0n;
    for (let attempt = 0; attempt < 100 && !refused; attempt++) {
      const answer = await chat(key);
      if (answer.status !== 200) refused = answer;
      else {
        served++;
        servedMicro += creditsToMicro(String(answer.body.meta!.usage.credits_used));
      }
    }
    expect(served).toBeGreaterThan(2);
    expectErrorBody(refused as never, 403, '/v1/chat/completions');
    expect(refused!.body.message).toBe(
      `Forbidden: this API key's budget of 100 credits per day is spent, or too little of it is left for this request's most expensive outcome; it resets at ${tomorrowUtc()}.`,
    );
    // Billing's spend of the key is exactly the sum of its ledger rows in the period, and within the budget.
    const today = new Date(new Date().toISOString().slice(0, 10));
    // Every served request's usage has reached the ledger (the gateway sends it in batches).
    await eventually(async () => (await admin.ledgerSumMicro(accountId, created.id)) === servedMicro, 20_000, 50);
    const spent = creditsToMicro((await admin.getKey(created.id)).body.spend!.spent);
    expect(spent).toBeLessThanOrEqual(100_000_000n);
    expect(spent).toBe(await admin.ledgerSumMicro(accountId, created.id, today));

    const balance = await call<{ balance: number; key: Record<string, unknown> }>(`${app.billing}/v1/billing/balance`, { token: key });
    expect(balance.body.key).toEqual({
      id: created.id,
      name: null,
      limit: '100',
      unit: 'credits',
      period: 'day',
      spent: formatMicroCredits(spent),
      periodStart: today.toISOString(),
      resetsAt: tomorrowUtc(),
    });

    // Raised: the gateway hears it and serves the key again.
    expect((await admin.patchKey(created.id, { budget: { limit: '1000', unit: 'credits', period: 'day' } })).body.spend?.spent).toBe(formatMicroCredits(spent));
    await eventually(async () => (await chat(key)).status === 200, 10_000, 50);
  });

  it('keeps a USD budget in USD: the spend is the exact sum of the ledger\'s USD amounts', async () => {
    const accountId = await admin.account(100_000);
    // 0.00004 USD are 80 credits at 2,000,000 credits per USD.
    const { body: created } = await admin.createKey(accountId, { budget: { limit: '0.00004', unit: 'usd', period: 'month' } });
    const outcome = await fire([app.gateway], created.key!, 40, 8);
    expect(outcome.statuses.filter((status) => status === 403).length).toBeGreaterThan(0);
    expect(outcome.messages[0]).toContain("this API key's budget of 0.00004 USD per month");
    const usdUnits = (decimal: string) => toScaledUnits(parseDecimal(decimal.replace('-', '')), USD_SCALE);
    const ledgerUsd = async () => {
      const rows = await call<{ data: Array<{ usd: string }> }>(`${app.billing}/admin/v1/accounts/${accountId}/usage?kind=usage&key=${created.id}&limit=1000`, { token: app.adminToken });
      return rows.body.data.reduce((sum, row) => sum + usdUnits(row.usd), 0n);
    };
    await eventually(async () => (await admin.ledgerSumMicro(accountId, created.id)) === outcome.spentMicro, 20_000, 50);
    await eventually(async () => usdUnits((await admin.getKey(created.id)).body.spend!.spent) === (await ledgerUsd()), 20_000, 50);
    expect(usdUnits((await admin.getKey(created.id)).body.spend!.spent)).toBeLessThanOrEqual(usdUnits('0.00004'));
  });

  it('holds concurrent requests of one key within its budget, to the micro-credit', async () => {
    const accountId = await admin.account(100_000);
    const { body: created } = await admin.createKey(accountId, { budget: { limit: '80', unit: 'credits', period: 'month' } });
    const outcome = await fire([app.gateway], created.key!, 60, 30);
    expect(outcome.statuses.filter((status) => status === 200).length).toBeGreaterThan(0);
    expect(outcome.statuses.every((status) => status === 200 || status === 403)).toBe(true);
    expect(outcome.spentMicro).toBeLessThanOrEqual(80_000_000n);
    await eventually(async () => creditsToMicro((await admin.getKey(created.id)).body.spend!.spent) === outcome.spentMicro, 20_000, 50);
    expect(await admin.ledgerSumMicro(accountId, created.id)).toBe(outcome.spentMicro);
  });

  it('refuses models outside the key\'s allowlist with 403, checked on the resolved id', async () => {
    const accountId = await admin.account(10_000);
    const { body: created } = await admin.createKey(accountId, { models: ['test/m*', 'embed'] });
    expect((await chat(created.key!, 'mini')).status).toBe(200);
    expect((await chat(created.key!, 'test/mini')).status).toBe(200);
    const refused = await chat(created.key!, 'test/paced');
    expectErrorBody(refused, 403, '/v1/chat/completions');
    expect(refused.body.message).toBe("Forbidden: this API key may not call model 'test/paced' (the key's model rule allows: test/m*, embed).");
    // An alias in the list allows its model by any of its names.
    expect((await call(`${app.gateway}/v1/embeddings`, { token: created.key!, body: { model: 'test/embed', input: 'hi' } })).status).toBe(200);
    // Cleared: every model again.
    await admin.patchKey(created.id, { models: null });
    await eventually(async () => (await chat(created.key!, 'test/paced')).status === 200, 10_000, 50);
  });

  it('answers 429 with retry-after past the key\'s own rpm and concurrency, within the account\'s', async () => {
    const accountId = await admin.account(10_000);
    const { body: limited } = await admin.createKey(accountId, { rpm: 2 });
    // A fresh minute window for the burst (windows are aligned to clock minutes).
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((resolve) => setTimeout(resolve, 60_000 - intoMinute + 100));
    expect((await chat(limited.key!)).status).toBe(200);
    expect((await chat(limited.key!)).status).toBe(200);
    const refused = await chat(limited.key!);
    expectErrorBody(refused, 429, '/v1/chat/completions', /^Too Many Requests: this API key's rule allows 2 requests per minute; it resets in \d+ s\.$/);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);

    const { body: single } = await admin.createKey(accountId, { concurrency: 1 });
    const seen = emulator.requests.length;
    const first = chat(single.key!, 'test/unhurried');
    await eventually(async () => emulator.requests.slice(seen).some((request) => (request.body as { model?: string }).model === 'unhurried@delay=800'), 10_000, 10);
    const second = await chat(single.key!, 'test/unhurried');
    expectErrorBody(second, 429, '/v1/chat/completions', /^Too Many Requests: this API key's rule allows 1 requests in flight at once; retry when one finishes\.$/);
    expect(second.headers.get('retry-after')).toBe('1');
    expect((await first).status).toBe(200);
  });

  it('refuses an expired key with 401 on the gateway and on billing, promptly after a PATCH', async () => {
    const accountId = await admin.account(10_000);
    const { body: created } = await admin.createKey(accountId, { expiresAt: '2099-01-01T00:00:00Z' });
    expect((await chat(created.key!)).status).toBe(200);
    const past = new Date(Date.now() - 1_000).toISOString();
    expect((await admin.patchKey(created.id, { expiresAt: past })).status).toBe(200);
    await eventually(async () => (await chat(created.key!)).status === 401, 10_000, 50);
    const refused = await chat(created.key!);
    expectErrorBody(refused, 401, '/v1/chat/completions');
    expect(refused.body.message).toBe(`Unauthorized: this API key expired at ${past} (the key's expiry rule). Ask an administrator for a new key or a later expiry.`);
    expect((await call(`${app.billing}/v1/billing/balance`, { token: created.key! })).status).toBe(401);
    // Revocation still works on a key with rules.
    await admin.patchKey(created.id, { expiresAt: null });
    await eventually(async () => (await chat(created.key!)).status === 200, 10_000, 50);
    expect((await call(`${app.billing}/admin/v1/keys/${created.id}`, { method: 'DELETE', token: app.adminToken })).status).toBe(204);
    await eventually(async () => (await chat(created.key!)).status === 401, 10_000, 50);
  });
});

// Two gateway processes share admission only through Redis; without it each counts alone.
const describeWithRedis = process.env.REDIS_URL ? describe : describe.skip;
describeWithRedis('a key budget shared by two gateway replicas (Redis)', () => {
  const adminToken = 'key-rules-admin-token-0123456789';
  let emulator: RunningEmulator;
  let harness: DistributedHarness;
  let admin: ReturnType<typeof adminOf>;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startDistributedHarness({
      adminToken,
      catalogueFile: CATALOGUE_FILE,
      gateways: 2,
      gatewayEnv: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: `${emulator.url}/v1`, RATE_LIMIT_RPM: '100000', RATE_LIMIT_CONCURRENCY: '1000' },
    });
    admin = adminOf(harness.billing, adminToken);
  }, 180_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  it('never spends past the budget with many concurrent requests on both replicas, and the spend equals the ledger', async () => {
    const accountId = await admin.account(100_000);
    const { body: created } = await admin.createKey(accountId, { budget: { limit: '120', unit: 'credits', period: 'day' } });
    const outcome = await fire(harness.gateways, created.key!, 120, 40);
    expect(outcome.statuses.filter((status) => status === 200).length).toBeGreaterThan(2);
    expect(outcome.statuses.filter((status) => status === 403).length).toBeGreaterThan(0);
    expect(outcome.statuses.every((status) => status === 200 || status === 403)).toBe(true);
    expect(outcome.messages.every((message) => message.includes("this API key's budget of 120 credits per day"))).toBe(true);
    expect(outcome.spentMicro).toBeLessThanOrEqual(120_000_000n);
    await eventually(async () => creditsToMicro((await admin.getKey(created.id)).body.spend!.spent) === outcome.spentMicro, 20_000, 50);
    expect(await admin.ledgerSumMicro(accountId, created.id)).toBe(outcome.spentMicro);

    // Raised once: both replicas hear it.
    await admin.patchKey(created.id, { budget: { limit: '1000', unit: 'credits', period: 'day' } });
    for (const gateway of harness.gateways) {
      await eventually(async () => (await call(`${gateway}/v1/chat/completions`, { token: created.key!, body: ask() })).status === 200, 10_000, 50);
    }
  });

  it('applies a model rule set by PATCH on every replica', async () => {
    const accountId = await admin.account(10_000);
    const { body: created } = await admin.createKey(accountId, {});
    for (const gateway of harness.gateways) expect((await call(`${gateway}/v1/chat/completions`, { token: created.key!, body: ask('test/paced') })).status).toBe(200);
    await admin.patchKey(created.id, { models: ['mini'] });
    for (const gateway of harness.gateways) {
      await eventually(async () => (await call(`${gateway}/v1/chat/completions`, { token: created.key!, body: ask('test/paced') })).status === 403, 10_000, 50);
      expect((await call(`${gateway}/v1/chat/completions`, { token: created.key!, body: ask('mini') })).status).toBe(200);
    }
  });
});
