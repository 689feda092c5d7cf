import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { eventually, startWebhookReceiver, verifyWebhookSignature, type ReceivedWebhook, type WebhookReceiver } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { runNode } from './support/admin-tools-harness';
import { call, expectErrorBody } from './support/http';
import { ledgerBeforeMarker } from './support/ledger-marker';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

interface WebhookView {
  accountId: string;
  url: string;
  secretSet: boolean;
  balanceThreshold: string | null;
  balanceThresholdUsd: string | null;
  events: string[];
}

interface EventView {
  id: string;
  type: string;
  status: string;
  attempts: number;
  lastStatus: number | null;
  lastError: string | null;
  payload: { id: string; type: string; createdAt: string; accountId: string; data: Record<string, unknown> };
}

/**
 * Alerts of an account's webhook, end to end: the standalone app with the emulator as the
 * upstream, paid chat requests moving the balance through the ledger, and a receiver on
 * 127.0.0.1 that checks each POST's signature the way docs/api.md tells receivers to.
 * Prices (money-catalogue.yaml): an input token 2 credits, an output token 8.
 */
describe('webhook alerts', () => {
  const secret = `whsec_${randomUUID().replace(/-/g, '')}`;
  let emulator: RunningEmulator;
  let receiver: WebhookReceiver;
  let app: StandaloneHarness;

  beforeAll(async () => {
    [emulator, receiver] = await Promise.all([startEmulator(), startWebhookReceiver()]);
    app = await startStandaloneHarness({
      ...emulatedProviders(emulator.url),
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/money-catalogue.yaml'),
      // Every log line billing can write, so the secret check below covers them all.
      LOG_LEVEL: 'debug',
      WEBHOOK_RETRY_DELAY_MS: '200',
      WEBHOOK_TIMEOUT_MS: '3000',
      // The receiver is on loopback, which alerts reach only when the operator allows it.
      WEBHOOK_ALLOWLIST: '127.0.0.1',
    });
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await Promise.all([emulator?.close(), receiver?.close()]);
  });

  const admin = <T>(pathname: string, init: { method?: string; body?: unknown } = {}) => call<T>(`${app.billing}${pathname}`, { token: app.adminToken, ...init });
  const balanceOf = async (accountId: string) => (await admin<{ balance: number }>(`/admin/v1/accounts/${accountId}`)).body.balance;
  const eventsOf = async (accountId: string) => (await admin<{ data: EventView[] }>(`/admin/v1/accounts/${accountId}/webhook/events`)).body.data;
  const deliveriesOf = (eventId: string): ReceivedWebhook[] => receiver.received.filter((request) => request.headers['x-gateway-event-id'] === eventId);
  const chat = async (key: string): Promise<number> => {
    const answer = await call<{ meta: { usage: { credits_used: number } } }>(`${app.gateway}/v1/chat/completions`, { token: key, body: { model: 'mini', messages: [{ role: 'user', content: 'spend a little' }] } });
    expect(answer.status).toBe(200);
    return answer.body.meta.usage.credits_used;
  };
  /** Waits until every event of the account has been delivered or given up, and answers them, newest first. */
  const settledEvents = async (accountId: string, count: number): Promise<EventView[]> => {
    let events: EventView[] = [];
    await eventually(async () => (events = await eventsOf(accountId)).length >= count && events.every((event) => event.status !== 'pending'), 20_000, 50);
    return events;
  };

  it('sends one signed balance.below_threshold when paid requests take the balance under it, retries a failing receiver, and re-arms on a top-up', async () => {
    const { accountId, key } = await app.paidKey(10_000);
    const cost = await chat(key);
    await eventually(async () => (await balanceOf(accountId)) === 10_000 - cost, 20_000, 50);
    // Two more requests keep the balance at or above the threshold; the third takes it under.
    const threshold = 10_000 - cost - 2.5 * cost;
    const set = await admin<WebhookView>(`/admin/v1/accounts/${accountId}/webhook`, { method: 'PUT', body: { url: receiver.url, secret, balanceThreshold: threshold } });
    expect(set.status).toBe(200);
    expect(set.body).toMatchObject({ accountId, url: receiver.url, secretSet: true, balanceThreshold: String(threshold), events: ['balance.below_threshold', 'key.budget_threshold', 'key.budget_exhausted'] });

    for (let request = 0; request < 5; request++) await chat(key);
    // Everything those requests charged is in the ledger (and so is every crossing they made).
    await ledgerBeforeMarker(app, accountId, key, 'mini');
    const [crossing, ...others] = await settledEvents(accountId, 1);
    expect(others).toEqual([]);
    expect(crossing).toMatchObject({ type: 'balance.below_threshold', status: 'delivered', attempts: 1, lastStatus: 204 });
    const [delivery, ...again] = deliveriesOf(crossing.id);
    expect(again).toEqual([]);
    expect(receiver.received).toHaveLength(1);

    // The receiver's side: the documented recipe accepts the signature, and only with the right secret and body.
    expect(delivery.headers['content-type']).toBe('application/json');
    expect(delivery.headers['x-gateway-event-type']).toBe('balance.below_threshold');
    const signature = delivery.headers['x-gateway-signature'] as string;
    expect(signature).toMatch(/^t=\d+,v1=[0-9a-f]{64}$/);
    expect(verifyWebhookSignature(secret, delivery.rawBody, signature)).toBe(true);
    expect(verifyWebhookSignature(`${secret}x`, delivery.rawBody, signature)).toBe(false);
    expect(verifyWebhookSignature(secret, delivery.rawBody.replace('"balance"', '"balanse"'), signature)).toBe(false);
    const body = JSON.parse(delivery.rawBody) as EventView['payload'];
    expect(Object.keys(body)).toEqual(['id', 'type', 'createdAt', 'accountId', 'data']);
    expect(body).toMatchObject({ id: crossing.id, type: 'balance.below_threshold', accountId, data: { threshold: String(threshold), cause: 'usage' } });
    const fallenTo = Number(body.data.balance);
    const fellFrom = Number(body.data.previousBalance);
    expect(fellFrom).toBeGreaterThanOrEqual(threshold);
    expect(fallenTo).toBeLessThan(threshold);
    // Billing applies the gateway's batches whole: the crossing is the batch's that held the third request.
    expect(fallenTo).toBeLessThanOrEqual(10_000 - 4 * cost);
    expect(body.data.balanceUsd).toBe(String(fallenTo / 2_000_000));

    // A top-up back above re-arms; the next fall is a new event, which a receiver failing twice gets on the third try.
    const balance = await balanceOf(accountId);
    const topUp = await admin(`/admin/v1/accounts/${accountId}/credits`, { body: { credits: threshold - balance + 2 * cost, reason: 'top-up' } });
    expect(topUp.status).toBe(200);
    receiver.failNext(2);
    for (let request = 0; request < 4; request++) await chat(key);
    await ledgerBeforeMarker(app, accountId, key, 'mini');
    const [retried, first] = await settledEvents(accountId, 2);
    expect(first.id).toBe(crossing.id);
    expect(retried).toMatchObject({ type: 'balance.below_threshold', status: 'delivered', attempts: 3, lastStatus: 204 });
    const attempts = deliveriesOf(retried.id);
    expect(attempts.map((attempt) => attempt.answeredStatus)).toEqual([500, 500, 204]);
    // Every attempt carries the same body, signed afresh.
    expect(new Set(attempts.map((attempt) => attempt.rawBody)).size).toBe(1);
    for (const attempt of attempts) expect(verifyWebhookSignature(secret, attempt.rawBody, attempt.headers['x-gateway-signature'] as string)).toBe(true);
    expect(receiver.received).toHaveLength(4);

    // A credit correction that takes the balance under the threshold is a crossing too.
    const now = await balanceOf(accountId);
    await admin(`/admin/v1/accounts/${accountId}/credits`, { body: { credits: threshold - now + 10, reason: 'top-up' } });
    await admin(`/admin/v1/accounts/${accountId}/credits`, { body: { credits: -20, reason: 'correction' } });
    const [corrected] = await settledEvents(accountId, 3);
    expect(corrected).toMatchObject({ type: 'balance.below_threshold', status: 'delivered', attempts: 1 });
    expect(corrected.payload.data).toMatchObject({ cause: 'credit', balance: String(threshold - 10), previousBalance: String(threshold + 10) });
    expect(receiver.received).toHaveLength(5);

    // The secret is in no answer and in no line billing logged.
    const answers = JSON.stringify([set.body, (await admin(`/admin/v1/accounts/${accountId}/webhook`)).body, await eventsOf(accountId)]);
    expect(answers).not.toContain(secret);
    expect(app.process.output()).not.toContain(secret);
    expect(app.process.output()).toContain('receiver is down');
  }, 90_000);

  it('sends one signed key.budget_threshold at 80 % and one key.budget_exhausted at 100 % of a key budget spent through the gateway, and again for a raised budget', async () => {
    const { accountId } = await app.paidKey(100_000);
    expect((await admin(`/admin/v1/accounts/${accountId}/webhook`, { method: 'PUT', body: { url: receiver.url, secret } })).status).toBe(200);
    // 3 output tokens at 8 credits, input free (test/output-priced): each request costs 24 credits, exactly what it holds.
    const created = await admin<{ id: string; key: string }>(`/admin/v1/accounts/${accountId}/keys`, { body: { name: 'ci-budget', budget: { limit: '120', unit: 'credits', period: 'day' } } });
    expect(created.status).toBe(201);
    const { id: keyId, key } = created.body;
    const spentOfKey = async () => (await admin<{ spend: { spent: string } }>(`/admin/v1/keys/${keyId}`)).body.spend.spent;
    const ask = () => call<{ meta?: { usage: { credits_used: number } }; message?: string }>(`${app.gateway}/v1/chat/completions`, {
      token: key,
      body: { model: 'test/output-priced', max_tokens: 3, messages: [{ role: 'user', content: 'spend the budget' }] },
    });
    /** One request, then its usage applied by billing: each crossing is then the request's own. */
    const spendOnce = async (expectedSpent: number) => {
      const answer = await ask();
      expect(answer.status).toBe(200);
      expect(answer.body.meta!.usage.credits_used).toBe(24);
      await eventually(async () => (await spentOfKey()) === String(expectedSpent), 20_000, 50);
    };
    const keyDeliveries = () => receiver.received.filter((request) => (JSON.parse(request.rawBody) as { data: { keyId?: string } }).data.keyId === keyId);
    const today = `${new Date().toISOString().slice(0, 10)}T00:00:00.000Z`;

    for (const spent of [24, 48, 72]) await spendOnce(spent);
    expect(await eventsOf(accountId)).toEqual([]);
    // 96 of 120: exactly 80 %.
    await spendOnce(96);
    const [threshold] = await settledEvents(accountId, 1);
    expect(threshold).toMatchObject({ type: 'key.budget_threshold', status: 'delivered', attempts: 1 });
    // 120 of 120, and the next request is refused by the key's budget.
    await spendOnce(120);
    const [exhausted] = await settledEvents(accountId, 2);
    expect(exhausted).toMatchObject({ type: 'key.budget_exhausted', status: 'delivered', attempts: 1 });
    expect((await ask()).status).toBe(403);

    const bodies = keyDeliveries().map((delivery) => {
      expect(verifyWebhookSignature(secret, delivery.rawBody, delivery.headers['x-gateway-signature'] as string)).toBe(true);
      expect(delivery.headers['x-gateway-event-type']).toBe((JSON.parse(delivery.rawBody) as { type: string }).type);
      return JSON.parse(delivery.rawBody) as EventView['payload'];
    });
    const expected = (type: string, percent: number, limit: string, limitUsd: string, spent: string, spentUsd: string) => ({
      type,
      accountId,
      data: { keyId, keyName: 'ci-budget', percent, period: 'day', periodStart: today, unit: 'credits', limit, limitUsd, spent, spentUsd },
    });
    expect(bodies).toEqual([
      expect.objectContaining(expected('key.budget_threshold', 80, '120', '0.00006', '96', '0.000048')),
      expect.objectContaining(expected('key.budget_exhausted', 100, '120', '0.00006', '120', '0.00006')),
    ]);

    // Raised to 240: its thresholds are armed again (192 and 240), the old ones are not sent twice.
    expect((await admin(`/admin/v1/keys/${keyId}`, { method: 'PATCH', body: { budget: { limit: '240', unit: 'credits', period: 'day' } } })).status).toBe(200);
    await eventually(async () => (await ask()).status === 200, 10_000, 50);
    await eventually(async () => (await spentOfKey()) === '144', 20_000, 50);
    await spendOnce(168);
    await spendOnce(192);
    await settledEvents(accountId, 3);
    await spendOnce(216);
    await spendOnce(240);
    await settledEvents(accountId, 4);
    const raised = keyDeliveries()
      .slice(2)
      .map((delivery) => JSON.parse(delivery.rawBody) as EventView['payload']);
    expect(raised).toEqual([
      expect.objectContaining(expected('key.budget_threshold', 80, '240', '0.00012', '192', '0.000096')),
      expect.objectContaining(expected('key.budget_exhausted', 100, '240', '0.00012', '240', '0.00012')),
    ]);
    expect(keyDeliveries()).toHaveLength(4);
    expect(new Set(keyDeliveries().map((delivery) => delivery.headers['x-gateway-event-id'])).size).toBe(4);
  }, 90_000);

  it('keeps the secret write-only: a PUT without it keeps the one set, GET and DELETE work, and nothing is sent after DELETE', async () => {
    const { accountId } = await app.paidKey(100_000);
    const pathname = `/admin/v1/accounts/${accountId}/webhook`;
    expectErrorBody(await admin(pathname), 404, pathname, /has no webhook/);
    const missing = await admin(pathname, { method: 'PUT', body: { url: receiver.url } });
    expectErrorBody(missing, 400, pathname, /secret: Expected a string of 16 to 256 characters \(required when the account has no webhook\)/);

    expect((await admin(pathname, { method: 'PUT', body: { url: receiver.url, secret, balanceThresholdUsd: 0.0004 } })).body).toMatchObject({ balanceThreshold: '800', balanceThresholdUsd: '0.0004' });
    const kept = await admin<WebhookView>(pathname, { method: 'PUT', body: { url: receiver.url } });
    expect(kept.body).toMatchObject({ url: receiver.url, secretSet: true, balanceThreshold: null });
    // A new URL takes the secret again: the old one is not handed to another receiver.
    const moved = await admin(pathname, { method: 'PUT', body: { url: `${receiver.url}?v=2` } });
    expectErrorBody(moved, 400, pathname, /^Body validation error! secret: Expected the secret again when the url changes .*Received nothing$/);
    expect((await admin<WebhookView>(pathname)).body.url).toBe(receiver.url);
    const changed = await admin<WebhookView>(pathname, { method: 'PUT', body: { url: `${receiver.url}?v=2`, secret } });
    expect(changed.status).toBe(200);
    expect(changed.body).toMatchObject({ url: `${receiver.url}?v=2`, secretSet: true, balanceThreshold: null, events: ['key.budget_threshold', 'key.budget_exhausted'] });
    expect(Object.keys(changed.body)).not.toContain('secret');

    const deleted = await call(`${app.billing}${pathname}`, { token: app.adminToken, method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expectErrorBody(await call(`${app.billing}${pathname}`, { token: app.adminToken, method: 'DELETE' }), 404, pathname);
    // Without a webhook, a fall through what was the threshold records nothing (a crossing is recorded in the correction's own transaction).
    expect((await admin(`/admin/v1/accounts/${accountId}/credits`, { body: { credits: -99_500 } })).body).toEqual({ balance: 500 });
    expect(await eventsOf(accountId)).toEqual([]);
  });

  it("refuses a URL of billing's own network at PUT, loopback outside WEBHOOK_ALLOWLIST included, and keeps only the start of a receiver's error", async () => {
    const { accountId } = await app.paidKey(100_000);
    const pathname = `/admin/v1/accounts/${accountId}/webhook`;
    const port = new URL(receiver.url).port;
    const refusals: Array<[string, RegExp]> = [
      [`http://127.0.0.2:${port}/hook`, /url: names a loopback address/],
      [`http://localhost:${port}/hook`, /url: has a host name that resolves to a loopback address/],
      ['http://169.254.169.254/latest/meta-data/', /url: names a cloud metadata address/],
      ['http://10.0.0.7/hook', /url: names a private address/],
      [`http://[::1]:${port}/hook`, /url: names a loopback address/],
    ];
    for (const [url, message] of refusals) {
      const refused = await admin<{ message: string }>(pathname, { method: 'PUT', body: { url, secret } });
      expectErrorBody(refused, 400, pathname, message);
      expect(refused.body.message).toContain('unless WEBHOOK_ALLOWLIST names the host');
    }
    expectErrorBody(await admin(pathname), 404, pathname, /has no webhook/);

    // The allow-listed receiver answers a long error: what billing keeps of it is its start.
    expect((await admin(pathname, { method: 'PUT', body: { url: receiver.url, secret, balanceThreshold: 50_000 } })).status).toBe(200);
    receiver.failNext(2, 503, { answerBytes: 5_000 });
    expect((await admin(`/admin/v1/accounts/${accountId}/credits`, { body: { credits: -60_000 } })).body).toEqual({ balance: 40_000 });
    let events: EventView[] = [];
    await eventually(async () => (events = await eventsOf(accountId)).length === 1 && events[0].lastError !== null, 20_000, 25);
    expect(events[0].lastStatus).toBe(503);
    expect(events[0].lastError).toBe(`answered 503: ${'x'.repeat(100)}`);
    await settledEvents(accountId, 1);
    expect(app.process.output()).not.toContain('x'.repeat(101));
  });

  it('the CLI sets the webhook with the secret from a file, shows it without the secret, lists its events and removes it', async () => {
    const { accountId } = await app.paidKey(100);
    const folder = await mkdtemp(path.join(tmpdir(), 'igw-webhook-cli-'));
    const igw = (...args: string[]) => runNode('tools/cli/src/main.js', args, { BILLING_URL: app.billing, ADMIN_TOKEN: app.adminToken });
    try {
      const secretFile = path.join(folder, 'whsec');
      await writeFile(secretFile, `${secret}\n`, { mode: 0o600 });
      const set = await igw('webhook', 'set', accountId, '--webhook-url', receiver.url, '--secret-file', secretFile, '--balance-threshold-usd', '0.00004');
      expect(set.code).toBe(0);
      expect(JSON.parse(set.stdout)).toMatchObject({ accountId, url: receiver.url, secretSet: true, balanceThreshold: '80', balanceThresholdUsd: '0.00004' });
      const shown = await igw('webhook', 'get', accountId);
      expect(JSON.parse(shown.stdout)).toMatchObject({ secretSet: true, balanceThreshold: '80' });
      // The secret the CLI sent signs the next event.
      await admin(`/admin/v1/accounts/${accountId}/credits`, { body: { credits: -30 } });
      const listed = await igw('webhook', 'events', accountId, '--limit', '5');
      const [event] = (JSON.parse(listed.stdout) as { data: EventView[] }).data;
      expect(event).toMatchObject({ type: 'balance.below_threshold', payload: { data: { balance: '70', threshold: '80' } } });
      await eventually(async () => deliveriesOf(event.id).some((delivery) => delivery.answeredStatus === 204), 20_000, 50);
      const [delivery] = deliveriesOf(event.id);
      expect(verifyWebhookSignature(secret, delivery.rawBody, delivery.headers['x-gateway-signature'] as string)).toBe(true);
      expect(await igw('webhook', 'delete', accountId)).toMatchObject({ code: 0, stdout: `{\n  "webhookRemoved": "${accountId}"\n}\n` });
      for (const result of [set, shown, listed]) expect(result.stdout + result.stderr).not.toContain(secret);
    } finally {
      await rm(folder, { recursive: true, force: true });
    }
  });

  it.each([
    ['ftp', { url: 'ftp://hooks.example.com/x', secret }, 'url: Expected an http:// or https:// URL. Received a ftp: URL'],
    ['javascript', { url: 'javascript:alert(1)', secret }, 'url: Expected an http:// or https:// URL. Received a javascript: URL'],
    ['not a url', { url: 'not a url', secret }, "url: Expected an http:// or https:// URL. Received 'not a url'"],
    ['credentials', { url: 'https://user:pass@hooks.example.com/', secret }, 'url: Expected a URL without a user name or password'],
    ['long url', { url: `https://hooks.example.com/${'a'.repeat(2_100)}`, secret }, 'url: Expected at most 2048 characters'],
    ['number url', { url: 42, secret }, 'url: Expected an http:// or https:// URL. Received number'],
    ['no url', { secret }, 'url: Expected an http:// or https:// URL. Received nothing'],
    ['short secret', { url: 'https://hooks.example.com/', secret: 'short-secret' }, 'secret: Expected a string of 16 to 256 characters. Received 12 characters'],
    ['huge secret', { url: 'https://hooks.example.com/', secret: 's'.repeat(10_000) }, 'secret: Expected a string of 16 to 256 characters. Received 10000 characters'],
    ['number secret', { url: 'https://hooks.example.com/', secret: 12345678901234567 }, 'secret: Expected a string of 16 to 256 characters. Received number'],
    ['negative threshold', { url: 'https://hooks.example.com/', secret, balanceThreshold: -1 }, 'balanceThreshold: Expected a number from 0 to 1000000000000. Received -1'],
    ['huge threshold', { url: 'https://hooks.example.com/', secret, balanceThreshold: 1e300 }, 'balanceThreshold: Expected a number from 0 to 1000000000000'],
    ['7 decimals', { url: 'https://hooks.example.com/', secret, balanceThreshold: 0.0000001 }, 'balanceThreshold: Expected a number with at most 6 decimal places'],
    ['string threshold', { url: 'https://hooks.example.com/', secret, balanceThreshold: '100' }, "balanceThreshold: Expected a number. Received string '100'"],
    ['both thresholds', { url: 'https://hooks.example.com/', secret, balanceThreshold: 1, balanceThresholdUsd: 1 }, 'balanceThresholdUsd: Expected balanceThreshold or balanceThresholdUsd, not both'],
    ['usd below a micro-credit', { url: 'https://hooks.example.com/', secret, balanceThresholdUsd: 1e-13 }, 'balanceThresholdUsd: Expected a USD amount worth a whole number of micro-credits'],
    ['usd over the most', { url: 'https://hooks.example.com/', secret, balanceThresholdUsd: 500_001 }, 'balanceThresholdUsd: Expected a USD amount from 0 to 500000'],
    ['negative usd', { url: 'https://hooks.example.com/', secret, balanceThresholdUsd: -1 }, 'balanceThresholdUsd: Expected a number of at least 0. Received -1'],
  ])('refuses a PUT with %s with a 400 naming the field, never quoting the secret', async (_case, body, message) => {
    const { accountId } = await app.paidKey(1);
    const pathname = `/admin/v1/accounts/${accountId}/webhook`;
    const answer = await admin<{ message: string }>(pathname, { method: 'PUT', body });
    expectErrorBody(answer, 400, pathname);
    expect(answer.body.message).toContain(message);
    if (typeof (body as { secret?: unknown }).secret === 'string') expect(answer.body.message).not.toContain((body as { secret: string }).secret);
    expect((await admin(pathname)).status).toBe(404);
  });

  it('answers 404 for accounts that do not exist or are not ids, and 401 without the admin token', async () => {
    for (let attempt = 0; attempt < 100; attempt++) {
      const pathname = `/admin/v1/accounts/${randomUUID()}/webhook`;
      const answer = await admin(pathname, { method: attempt % 2 ? 'PUT' : 'GET', body: attempt % 2 ? { url: receiver.url, secret } : undefined });
      expect(answer.status).toBe(404);
    }
    expect((await admin('/admin/v1/accounts/not-an-id/webhook')).status).toBe(404);
    expect((await admin(`/admin/v1/accounts/${randomUUID()}/webhook/events`)).status).toBe(404);
    const { accountId, key } = await app.paidKey(1);
    expect((await call(`${app.billing}/admin/v1/accounts/${accountId}/webhook`, { token: key })).status).toBe(401);
    expect((await call(`${app.billing}/admin/v1/accounts/${accountId}/webhook`, { method: 'PUT', body: { url: receiver.url, secret } })).status).toBe(401);
    expect((await admin(`/admin/v1/accounts/${accountId}/webhook/events?limit=0`)).status).toBe(400);
    expect((await admin(`/admin/v1/accounts/${accountId}/webhook/events?limit=abc`)).status).toBe(400);
  });
});
