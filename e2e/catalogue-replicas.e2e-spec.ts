import path from 'node:path';
import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { Client } from 'pg';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, eventually, expectErrorBody } from './support/http';
import { childEnvironment, startHealthyService, type ServiceProcess } from './support/service-process';
import { createTestDatabase, dropQueueData, uniqueQueuePrefix } from './support/test-environment';

const ADMIN_TOKEN = 'catalogue-admin-token-0123456789';
const CHAT = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'price check please' }] };

interface Completion {
  usage: { prompt_tokens: number; completion_tokens: number };
  meta: { usage: { credits_used: number } };
}

/**
 * Catalogue changes at run time: two gateway replicas (separate processes on one queue
 * backend) must serve a new revision within two seconds, without restart, and bill with it.
 */
describe('catalogue changes reach every gateway replica', () => {
  let database: ScratchDatabase;
  let emulator: RunningEmulator;
  let queueEnv: NodeJS.ProcessEnv;
  const services: ServiceProcess[] = [];
  let catalogue: string;
  let billing: string;
  let gateways: string[];
  let apiKey: string;

  const start = async (name: string, port: number, extra: NodeJS.ProcessEnv) => {
    services.push(await startHealthyService(`apps/${name}/src/main.js`, port, childEnvironment({ ...queueEnv, ADMIN_TOKEN, ...extra })));
    return `http://127.0.0.1:${port}`;
  };

  const etagOf = async (gateway: string) => (await fetch(`${gateway}/v1/models`)).headers.get('etag');

  beforeAll(async () => {
    database = await createTestDatabase();
    emulator = await startEmulator();
    queueEnv = process.env.REDIS_URL ? { REDIS_URL: process.env.REDIS_URL, QUEUE_PREFIX: uniqueQueuePrefix() } : { DATABASE_URL: database.url };
    const [cataloguePort, billingPort, gatewayA, gatewayB] = await Promise.all([findFreePort(), findFreePort(), findFreePort(), findFreePort()]);
    catalogue = await start('catalogue', cataloguePort, {
      DATABASE_URL: database.url,
      CATALOGUE_PORT: String(cataloguePort),
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/distributed-catalogue.yaml'),
    });
    billing = await start('billing', billingPort, { DATABASE_URL: database.url, BILLING_PORT: String(billingPort) });
    const upstream = { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: `${emulator.url}/v1` };
    gateways = [await start('gateway', gatewayA, { PORT: String(gatewayA), ...upstream }), await start('gateway', gatewayB, { PORT: String(gatewayB), ...upstream })];
    for (const gateway of gateways) await eventually(async () => (await call(`${gateway}/readyz`)).status === 200, 20_000);
    const account = await call<{ id: string }>(`${billing}/admin/v1/accounts`, { token: ADMIN_TOKEN, body: { credits: 1_000_000, plan: 'paid' } });
    apiKey = (await call<{ key: string }>(`${billing}/admin/v1/accounts/${account.body.id}/keys`, { token: ADMIN_TOKEN, body: {} })).body.key;
  }, 180_000);

  afterAll(async () => {
    for (const service of services.reverse()) await service.stop();
    await emulator?.close();
    await dropQueueData({ url: queueEnv?.REDIS_URL, prefix: queueEnv?.QUEUE_PREFIX });
    await database?.drop();
  });

  async function waitForNewRevision(before: Array<string | null>): Promise<number> {
    const started = Date.now();
    await Promise.all(gateways.map((gateway, i) => eventually(async () => (await etagOf(gateway)) !== before[i], 2_000, 20)));
    return Date.now() - started;
  }

  it('bills with a new price on both replicas within two seconds of the change, and the ledger records it', async () => {
    const first = await call<Completion>(`${gateways[0]}/v1/chat/completions`, { token: apiKey, body: CHAT });
    expect(first.status).toBe(200);
    const { prompt_tokens: prompt, completion_tokens: output } = first.body.usage;
    expect(first.body.meta.usage.credits_used).toBe((prompt * 300_000 + output * 1_200_000) / 1e6);

    const before = await Promise.all(gateways.map(etagOf));
    const changed = await call<{ revision: number }>(`${catalogue}/admin/v1/catalogue/models/openai/gpt-4o-mini`, {
      method: 'PATCH',
      token: ADMIN_TOKEN,
      body: { pricing: { kind: 'fixed', currency: 'USD', units: [{ unit: 'input_tokens', price: 1.5, per: 1_000_000 }, { unit: 'output_tokens', price: 6, per: 1_000_000 }] } },
    });
    expect(changed.status).toBe(200);
    expect(await waitForNewRevision(before)).toBeLessThanOrEqual(2_000);

    for (const gateway of gateways) {
      const after = await call<Completion>(`${gateway}/v1/chat/completions`, { token: apiKey, body: CHAT });
      expect(after.body.usage).toMatchObject({ prompt_tokens: prompt, completion_tokens: output });
      expect(after.body.meta.usage.credits_used).toBe((prompt * 3_000_000 + output * 12_000_000) / 1e6);
      const requestId = after.headers.get('x-request-id');
      await eventually(async () => (await ledgerPrices(requestId!)) !== undefined, 10_000);
      expect(await ledgerPrices(requestId!)).toEqual([
        { unit: 'input_tokens', price: 1.5, per: 1_000_000 },
        { unit: 'output_tokens', price: 6, per: 1_000_000 },
      ]);
    }
  });

  it('serves an added alias and a new model on every replica, and stops serving a retired one', async () => {
    let before = await Promise.all(gateways.map(etagOf));
    expect((await call(`${catalogue}/admin/v1/catalogue/models/openai/gpt-4o-mini`, { method: 'PATCH', token: ADMIN_TOKEN, body: { aliases: ['house-mini'] } })).status).toBe(200);
    await waitForNewRevision(before);
    for (const gateway of gateways) {
      expect((await call(`${gateway}/v1/chat/completions`, { token: apiKey, body: { ...CHAT, model: 'HOUSE-MINI' } })).status).toBe(200);
    }

    before = await Promise.all(gateways.map(etagOf));
    const created = await call(`${catalogue}/admin/v1/catalogue/models/acme/echo`, {
      method: 'PUT',
      token: ADMIN_TOKEN,
      body: {
        aliases: ['echo'],
        type: 'openai/chat-completions',
        info: { name: 'Echo', developer: 'Acme', description: 'served by the emulator' },
        tags: ['playground:chat'],
        pricing: { kind: 'fixed', currency: 'USD', units: [{ unit: 'input_tokens', price: 1, per: 1_000_000 }] },
        routing: { sources: [{ provider: 'openai', model: 'echo-upstream' }] },
      },
    });
    expect(created.status).toBe(200);
    await waitForNewRevision(before);
    for (const gateway of gateways) {
      const models = await call<{ data: Array<{ id: string }> }>(`${gateway}/v1/models`);
      expect(models.body.data.map((model) => model.id)).toContain('acme/echo');
      expect((await call(`${gateway}/v1/chat/completions`, { token: apiKey, body: { ...CHAT, model: 'echo' } })).status).toBe(200);
    }

    before = await Promise.all(gateways.map(etagOf));
    expect((await call(`${catalogue}/admin/v1/catalogue/models/acme/echo`, { method: 'DELETE', token: ADMIN_TOKEN })).status).toBe(200);
    await waitForNewRevision(before);
    for (const gateway of gateways) {
      expectErrorBody(await call(`${gateway}/v1/chat/completions`, { token: apiKey, body: { ...CHAT, model: 'echo' } }), 404, '/v1/chat/completions');
    }
  });

  it('refuses invalid changes with the spec error body and leaves the revision alone', async () => {
    const before = await etagOf(gateways[0]);
    expectErrorBody(
      await call(`${catalogue}/admin/v1/catalogue/models/acme/bad`, { method: 'PUT', token: ADMIN_TOKEN, body: { type: 'chat', aliases: [], info: {}, tags: [], routing: { sources: [] } } }),
      400,
      '/admin/v1/catalogue/models/acme/bad',
      /^Body validation error!/,
    );
    expectErrorBody(
      await call(`${catalogue}/admin/v1/catalogue/models/openai/gpt-4o-mini`, { method: 'PATCH', token: ADMIN_TOKEN, body: { pricing: { kind: 'fixed', currency: 'USD', units: [{ unit: 'input_tokens', price: -1, per: 1 }] } } }),
      400,
      '/admin/v1/catalogue/models/openai/gpt-4o-mini',
    );
    expectErrorBody(
      await call(`${catalogue}/admin/v1/catalogue/models/test/unconfigured`, { method: 'PATCH', token: ADMIN_TOKEN, body: { aliases: ['gpt-4o-mini'] } }),
      409,
      '/admin/v1/catalogue/models/test/unconfigured',
    );
    expectErrorBody(await call(`${catalogue}/admin/v1/catalogue/models/nope/none`, { method: 'DELETE', token: ADMIN_TOKEN }), 404, '/admin/v1/catalogue/models/nope/none');
    expect((await call(`${catalogue}/admin/v1/catalogue/models`)).status).toBe(401);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(await etagOf(gateways[0])).toBe(before);
  });

  async function ledgerPrices(requestId: string): Promise<unknown> {
    const client = new Client({ connectionString: database.url });
    await client.connect();
    try {
      const { rows } = await client.query('SELECT prices FROM billing.ledger_entries WHERE request_id = $1', [requestId]);
      return rows[0]?.prices;
    } finally {
      await client.end();
    }
  }
});
