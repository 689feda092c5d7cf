import path from 'node:path';
import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, eventually, expectErrorBody } from './support/http';
import { childEnvironment, startService } from './support/service-process';
import { startDistributedHarness, type DistributedHarness } from './support/distributed-harness';

const ADMIN_TOKEN = 'distributed-admin-token-0123456789';

/**
 * The distributed deployment as separate processes (what docker-compose runs): each
 * service alone against DATABASE_URL and the queue (Redis when the run has REDIS_URL,
 * else BullMQ on PostgreSQL). Only the queue connects them.
 */
describe('distributed services, end to end', () => {
  let emulator: RunningEmulator;
  let harness: DistributedHarness;
  let queueEnv: NodeJS.ProcessEnv;
  let database: ScratchDatabase;
  let gateway: string;
  let billing: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startDistributedHarness({
      adminToken: ADMIN_TOKEN,
      catalogueFile: path.join(__dirname, 'fixtures/distributed-catalogue.yaml'),
      gateways: 1,
      gatewayEnv: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: `${emulator.url}/v1` },
      // The decisions service calls the upstreams itself: System One and OpenAI chat (the log-probabilities fallback).
      decisions: { TYPESAFE_API_KEY: 'typesafe-key', TYPESAFE_BASE_URL: `${emulator.url}/v1`, OPENAI_API_KEY: 'k', OPENAI_BASE_URL: `${emulator.url}/v1` },
    });
    ({ queueEnv, database, billing } = harness);
    gateway = harness.gateways[0];
  }, 180_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
  });

  it('refuses to start a service without ADMIN_TOKEN', async () => {
    const env = childEnvironment({ ...queueEnv, PORT: String(await findFreePort()) });
    const lonely = startService('apps/gateway/src/main.js', env);
    expect(await lonely.exited()).not.toBe(0);
    expect(lonely.output()).toMatch(/ADMIN_TOKEN is required/);
  });

  it('stops the catalogue service on a bad catalogue file, naming the entry and the field', async () => {
    const broken = startService(
      'apps/catalogue/src/main.js',
      childEnvironment({
        ...queueEnv,
        ADMIN_TOKEN,
        DATABASE_URL: database.url,
        CATALOGUE_PORT: String(await findFreePort()),
        CATALOGUE_FILE: path.join(__dirname, 'fixtures/broken-catalogue.yaml'),
      }),
    );
    expect(await broken.exited()).not.toBe(0);
    expect(broken.output()).toMatch(/models\[0\] \(acme\/broken\): field "pricing\.units\[0\]\.per"/);
  });

  it('bills a chat completion across separate processes and propagates revocation', async () => {
    const account = await call<{ id: string }>(`${billing}/admin/v1/accounts`, { token: ADMIN_TOKEN, body: { credits: 50, plan: 'paid' } });
    const key = await call<{ id: string; key: string }>(`${billing}/admin/v1/accounts/${account.body.id}/keys`, { token: ADMIN_TOKEN, body: {} });
    // A hold (the body's bytes as input, max_tokens as output) must fit in the 50 credits.
    const body = { model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: 'one two three' }] };
    const completion = await call<{ meta: { usage: { credits_used: number } } }>(`${gateway}/v1/chat/completions`, { token: key.body.key, body });
    expect(completion.status).toBe(200);
    const spent = completion.body.meta.usage.credits_used;
    expect(spent).toBeGreaterThan(0);
    await eventually(async () => (await call<{ balance: number }>(`${billing}/v1/billing/balance`, { token: key.body.key })).body.balance === 50 - spent, 10_000);

    expect((await call(`${billing}/admin/v1/keys/${key.body.id}`, { token: ADMIN_TOKEN, method: 'DELETE' })).status).toBe(204);
    await eventually(async () => (await call(`${gateway}/v1/chat/completions`, { token: key.body.key, body })).status === 401, 2_000);
  });

  it('blocks an account whose balance reaches zero once billing broadcasts it', async () => {
    const account = await call<{ id: string }>(`${billing}/admin/v1/accounts`, { token: ADMIN_TOKEN, body: { credits: 50, plan: 'paid' } });
    const key = await call<{ key: string }>(`${billing}/admin/v1/accounts/${account.body.id}/keys`, { token: ADMIN_TOKEN, body: {} });
    const body = { model: 'gpt-4o-mini', max_tokens: 16, messages: [{ role: 'user', content: 'hi' }] };
    expect((await call(`${gateway}/v1/chat/completions`, { token: key.body.key, body })).status).toBe(200);
    await call(`${billing}/admin/v1/accounts/${account.body.id}/credits`, { token: ADMIN_TOKEN, body: { credits: -100 } });
    await eventually(async () => (await call(`${gateway}/v1/chat/completions`, { token: key.body.key, body })).status === 403, 2_000);
  });

  it('answers decisions over the queue from the decisions service, billing input tokens only across processes', async () => {
    const key = await harness.paidKey(1_000_000);
    const state = 'I was charged twice for order 4411, please refund one today.';
    const questions = {
      is_complaint: { type: 'noul', instructions: 'Is the customer complaining?' },
      topic: { type: 'choice', instructions: 'What is it about?', criteria: { billing: 'payments and refunds', other: 'anything else' } },
    };
    type Decision = { model: string; answers: Record<string, Record<string, unknown>>; usage: { input_tokens: number; output_tokens: number }; meta: { usage: { credits_used: number } } };
    const pinned = await call<Decision>(`${gateway}/v1/decisions`, { token: key, body: { model: 'jev', state, questions } });
    expect(pinned.status).toBe(200);
    // The floating id answers as its pinned release, whose prices apply.
    expect(pinned.body.model).toBe('test/jev-1.14');
    expect(Object.keys(pinned.body.answers).sort()).toEqual(['is_complaint', 'topic']);
    expect(pinned.body.usage.input_tokens).toBeGreaterThan(0);
    // Input tokens only, at 20 USD per million (40 credits each at 2,000,000 credits per USD): the output price is never charged.
    const inputOnly = pinned.body.meta.usage.credits_used;
    expect(inputOnly).toBe(pinned.body.usage.input_tokens * 40);

    const fallback = await call<Decision>(`${gateway}/v1/decisions`, { token: key, body: { model: 'test/logprobs', state, questions: { is_complaint: questions.is_complaint } } });
    expect(fallback.status).toBe(200);
    // p(yes) / (p(yes) + p(no)) from the emulated log probabilities.
    const yes = Math.exp(-0.2);
    expect(fallback.body.answers.is_complaint.noul).toBeCloseTo(yes / (yes + Math.exp(-1.8)), 12);
    expect(fallback.body.meta.usage.credits_used).toBe(fallback.body.usage.input_tokens * 40);

    const spent = inputOnly + fallback.body.meta.usage.credits_used;
    await eventually(async () => (await call<{ balance: number }>(`${billing}/v1/billing/balance`, { token: key })).body.balance === 1_000_000 - spent, 10_000);
  });

  it('answers 503 naming the variable to set for a model whose provider has no credentials', async () => {
    const account = await call<{ id: string }>(`${billing}/admin/v1/accounts`, { token: ADMIN_TOKEN, body: { credits: 5, plan: 'paid' } });
    const key = await call<{ key: string }>(`${billing}/admin/v1/accounts/${account.body.id}/keys`, { token: ADMIN_TOKEN, body: {} });
    const response = await call(`${gateway}/v1/chat/completions`, {
      token: key.body.key,
      body: { model: 'test/unconfigured', messages: [{ role: 'user', content: 'hi' }] },
    });
    expectErrorBody(response, 503, '/v1/chat/completions', /GROQ_API_KEY/);
  });
});
