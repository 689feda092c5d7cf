import path from 'node:path';
import type { ScratchDatabase } from '@igw/persistence';
import { eventually, queryRows } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody } from './support/http';
import { startDistributedHarness, type DistributedHarness } from './support/distributed-harness';

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
  let emulator: RunningEmulator;
  let harness: DistributedHarness;
  let database: ScratchDatabase;
  let catalogue: string;
  let gateways: string[];
  let apiKey: string;

  const etagOf = async (gateway: string) => (await fetch(`${gateway}/v1/models`)).headers.get('etag');

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startDistributedHarness({
      adminToken: ADMIN_TOKEN,
      catalogueFile: path.join(__dirname, 'fixtures/distributed-catalogue.yaml'),
      gateways: 2,
      gatewayEnv: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: `${emulator.url}/v1` },
    });
    ({ database, catalogue, gateways } = harness);
    apiKey = await harness.paidKey(1_000_000);
  }, 180_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  /** How long until every replica serves a revision other than `before`; the target is two seconds, the wait gives up at `timeoutMs`. */
  async function waitForNewRevision(before: Array<string | null>, timeoutMs = 2_000): Promise<number> {
    const started = Date.now();
    await Promise.all(gateways.map((gateway, i) => eventually(async () => (await etagOf(gateway)) !== before[i], timeoutMs, 20)));
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
    await waitForNewRevision(before, 10_000);
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
    await waitForNewRevision(before, 10_000);
    for (const gateway of gateways) {
      const models = await call<{ data: Array<{ id: string }> }>(`${gateway}/v1/models`);
      expect(models.body.data.map((model) => model.id)).toContain('acme/echo');
      expect((await call(`${gateway}/v1/chat/completions`, { token: apiKey, body: { ...CHAT, model: 'echo' } })).status).toBe(200);
    }

    before = await Promise.all(gateways.map(etagOf));
    expect((await call(`${catalogue}/admin/v1/catalogue/models/acme/echo`, { method: 'DELETE', token: ADMIN_TOKEN })).status).toBe(200);
    await waitForNewRevision(before, 10_000);
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
    // A valid change after them makes the next revision, and every replica serves it: none came between.
    const marker = await call<{ revision: number }>(`${catalogue}/admin/v1/catalogue/models/openai/gpt-4o-mini`, { method: 'PATCH', token: ADMIN_TOKEN, body: { aliases: ['after-refusals'] } });
    expect(marker.status).toBe(200);
    expect(`W/"catalogue-${marker.body.revision - 1}"`).toBe(before);
    await waitForNewRevision(gateways.map(() => before), 10_000);
    expect(await Promise.all(gateways.map(etagOf))).toEqual(gateways.map(() => `W/"catalogue-${marker.body.revision}"`));
  });

  async function ledgerPrices(requestId: string): Promise<unknown> {
    const rows = await queryRows<{ prices: unknown }>(database.url, 'SELECT prices FROM billing.ledger_entries WHERE request_id = $1', [requestId]);
    return rows[0]?.prices;
  }
});
