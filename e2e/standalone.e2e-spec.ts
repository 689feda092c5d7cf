import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import type { ChatCompletionDto } from '@igw/contracts';
import { creditsToMicro } from '@igw/domain';
import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { eventually, createTestDatabase, dropQueueData, uniqueQueuePrefix } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody } from './support/http';
import { childEnvironment, startService, type ServiceProcess } from './support/service-process';

/**
 * `npm start` as a user runs it: one process, embedded defaults (or DATABASE_URL/REDIS_URL
 * when the test run has them), the emulator playing OpenAI.
 */
describe('standalone gateway, end to end', () => {
  const UPSTREAM_KEY = 'upstream-secret-key';
  let emulator: RunningEmulator;
  let dataDir: string;
  let database: ScratchDatabase | undefined;
  let env: NodeJS.ProcessEnv;
  let standalone: ServiceProcess;
  let gateway: string;
  let billing: string;
  let ports: number[];
  let adminToken: string;

  const admin = <T = Record<string, unknown>>(pathname: string, body?: unknown, method?: string) =>
    call<T>(`${billing}${pathname}`, { token: adminToken, body, method });

  async function paidKey(credits: number): Promise<{ accountId: string; keyId: string; key: string }> {
    const account = await admin<{ id: string }>('/admin/v1/accounts', { credits, plan: 'paid' });
    expect(account.status).toBe(201);
    const key = await admin<{ id: string; key: string }>(`/admin/v1/accounts/${account.body.id}/keys`, { name: 'e2e' });
    expect(key.status).toBe(201);
    return { accountId: account.body.id, keyId: key.body.id, key: key.body.key };
  }

  async function start(): Promise<void> {
    standalone = startService('apps/standalone/src/main.js', env);
    await standalone.waitForOutput(/Press Ctrl-C to stop/, 90_000);
  }

  beforeAll(async () => {
    emulator = await startEmulator({ apiKey: UPSTREAM_KEY });
    dataDir = await mkdtemp(path.join(tmpdir(), 'igw-e2e-standalone-'));
    ports = await Promise.all([findFreePort(), findFreePort()]);
    const external: NodeJS.ProcessEnv = {};
    if (process.env.DATABASE_URL) {
      database = await createTestDatabase();
      external.DATABASE_URL = database.url;
    }
    if (process.env.REDIS_URL) Object.assign(external, { REDIS_URL: process.env.REDIS_URL, QUEUE_PREFIX: uniqueQueuePrefix() });
    env = childEnvironment({
      ...external,
      DATA_DIR: dataDir,
      PORT: String(ports[0]),
      BILLING_PORT: String(ports[1]),
      BODY_LIMIT: '64kb',
      OPENAI_API_KEY: UPSTREAM_KEY,
      OPENAI_BASE_URL: `${emulator.url}/v1`,
    });
    gateway = `http://127.0.0.1:${ports[0]}`;
    billing = `http://127.0.0.1:${ports[1]}`;
    await start();
    adminToken = (await readFile(path.join(dataDir, 'admin-token'), 'utf8')).trim();
  }, 120_000);

  afterAll(async () => {
    await standalone?.stop();
    await emulator?.close();
    await dropQueueData({ url: env?.REDIS_URL, prefix: env?.QUEUE_PREFIX });
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('writes a generated admin token to the data folder, readable only by its owner', async () => {
    expect(adminToken.length).toBeGreaterThanOrEqual(24);
    const { stat } = await import('node:fs/promises');
    expect((await stat(path.join(dataDir, 'admin-token'))).mode & 0o077).toBe(0);
  });

  it('answers health and readiness on its two ports (gateway and billing)', async () => {
    for (const port of ports) {
      expect((await call(`http://127.0.0.1:${port}/healthz`)).body).toEqual({ status: 'ok' });
      const ready = await call<{ status: string; checks: Record<string, string> }>(`http://127.0.0.1:${port}/readyz`);
      expect(ready.status).toBe(200);
      expect(Object.values(ready.body.checks).every((status) => status === 'ok')).toBe(true);
    }
  });

  it("lists the catalogue without a key, identity fields only (with OpenAI's object, created, owned_by)", async () => {
    const models = await call<{ object: string; data: Array<Record<string, unknown>> }>(`${gateway}/v1/models`);
    expect(models.status).toBe(200);
    expect(models.body.object).toBe('list');
    const mini = models.body.data.find((model) => (model.aliases as string[]).includes('gpt-4o-mini'));
    expect(mini).toBeDefined();
    for (const model of models.body.data) expect(Object.keys(model).sort()).toEqual(['aliases', 'apis', 'created', 'id', 'info', 'object', 'owned_by', 'tags', 'type']);
    const etag = models.headers.get('etag');
    expect(etag).toBeTruthy();
    const notModified = await fetch(`${gateway}/v1/models`, { headers: { 'if-none-match': etag! } });
    expect(notModified.status).toBe(304);
    expect(await notModified.text()).toBe('');
  });

  it('filters and projects the shipped catalogue as the query asks', async () => {
    type List = { data: Array<Record<string, unknown> & { id: string; type: string }> };
    const all = (await call<List>(`${gateway}/v1/models`)).body.data;
    expect(all.length).toBeGreaterThanOrEqual(40);

    const embeddings = await call<List>(`${gateway}/models?type=EMBEDDINGS&include=pricing`);
    expect(embeddings.body.data.map((model) => model.id).sort()).toEqual(['openai/text-embedding-3-large', 'openai/text-embedding-3-small']);
    for (const model of embeddings.body.data) expect(Object.keys(model)).toEqual(['id', 'object', 'created', 'owned_by', 'aliases', 'type', 'info', 'tags', 'apis', 'pricing']);

    const visionChat = await call<List>(`${gateway}/v1/models?capabilities=vision&type=chat-completions&details=true`);
    expect(visionChat.body.data.length).toBeGreaterThan(0);
    for (const model of visionChat.body.data) {
      expect(model.type.endsWith('/chat-completions')).toBe(true);
      expect(model.capabilities).toContain('vision');
      expect(model).not.toHaveProperty('routing');
    }
    const byAlias = await call<List>(`${gateway}/v1/models?id=GPT-4O-MINI,text-embedding-3-small`);
    expect(byAlias.body.data.map((model) => model.id).sort()).toEqual(['openai/gpt-4o-mini', 'openai/text-embedding-3-small']);
  });

  it('answers one model by id or alias, slashes unescaped, with the same include rules', async () => {
    const byId = await call<{ object: string; data: Record<string, unknown> }>(`${gateway}/model/openai/gpt-4o-mini?include=modalities`);
    expect(byId.status).toBe(200);
    expect(byId.body.object).toBe('model');
    expect(Object.keys(byId.body.data)).toEqual(['id', 'object', 'created', 'owned_by', 'aliases', 'type', 'info', 'tags', 'apis', 'modalities']);
    expect(byId.headers.get('etag')).toBeTruthy();
    const byAlias = await call<{ data: { id: string } }>(`${gateway}/model/GPT-4o-Mini`);
    expect(byAlias.body.data.id).toBe('openai/gpt-4o-mini');
    expectErrorBody(await call(`${gateway}/model/openai/no-such-model`), 404, '/model/openai/no-such-model');
  });

  it('serves a paid chat completion and takes exactly its credits from the balance', async () => {
    // Enough for the request's hold: up to gpt-4o-mini's 16,384 output tokens.
    const { key } = await paidKey(100_000);
    const response = await call<ChatCompletionDto>(`${gateway}/v1/chat/completions`, {
      token: key,
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Say hello to the ledger' }] },
    });
    expect(response.status).toBe(200);
    const completion = response.body;
    expect(completion).toMatchObject({ object: 'chat.completion', model: 'openai/gpt-4o-mini' });
    expect(typeof completion.id).toBe('string');
    expect(Number.isInteger(completion.created)).toBe(true);
    expect(completion.choices[0]).toMatchObject({ index: 0, finish_reason: 'stop', message: { role: 'assistant' } });
    expect(completion.choices[0].message.content).toContain('Say hello to the ledger');
    const { prompt_tokens: prompt, completion_tokens: output, total_tokens: total } = completion.usage;
    expect(total).toBe(prompt + output);

    // gpt-4o-mini costs $0.15 / $0.60 per million tokens; 2,000,000 credits = $1.
    const expectedMicro = prompt * 300_000 + output * 1_200_000;
    expect(completion.meta!.usage!.credits_used).toBe(expectedMicro / 1e6);
    expect(completion.meta!.usage!.usd_spent).toBeCloseTo(expectedMicro / 1e6 / 2_000_000, 15);

    const upstreamCall = emulator.requests.at(-1)!;
    expect(upstreamCall.headers.authorization).toBe(`Bearer ${UPSTREAM_KEY}`);
    expect((upstreamCall.body as { model: string }).model).toBe('gpt-4o-mini');

    await eventually(async () => {
      const balance = await call<{ balance: number }>(`${billing}/v1/billing/balance`, { token: key });
      return creditsToMicro(String(balance.body.balance)) === 100_000_000_000n - BigInt(expectedMicro);
    }, 10_000);
  });

  it('also answers on the short /chat/completions path', async () => {
    // Enough for the request's hold: up to gpt-4o-mini's 16,384 output tokens.
    const { key } = await paidKey(100_000);
    const response = await call(`${gateway}/chat/completions`, { token: key, body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
    expect(response.status).toBe(200);
  });

  it('refuses a missing or invalid key with 401', async () => {
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    expectErrorBody(await call(`${gateway}/v1/chat/completions`, { body }), 401, '/v1/chat/completions', /valid API key is required/);
    expectErrorBody(await call(`${gateway}/v1/chat/completions`, { body, token: 'igw_not-a-real-key' }), 401, '/v1/chat/completions', /valid API key is required/);
    expectErrorBody(await call(`${billing}/v1/billing/balance`, { token: 'igw_not-a-real-key' }), 401, '/v1/billing/balance', /valid API key is required/);
  });

  it('refuses an account without credits with 403 and says how to fix it', async () => {
    const { key } = await paidKey(0);
    const response = await call(`${gateway}/v1/chat/completions`, { token: key, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
    expectErrorBody(response, 403, '/v1/chat/completions', /top up.*payment method/i);
    // The balance endpoint still answers, so the client can see why.
    expect((await call(`${billing}/v1/billing/balance`, { token: key })).body).toMatchObject({ balance: 0, status: 'exhausted' });
  });

  it('answers 404 in the spec error body for unknown paths and models', async () => {
    expectErrorBody(await call(`${gateway}/v1/nothing-here`), 404, '/v1/nothing-here');
    expectErrorBody(await call(`${billing}/nothing-here`), 404, '/nothing-here');
    const { key } = await paidKey(10);
    expectErrorBody(
      await call(`${gateway}/v1/chat/completions`, { token: key, body: { model: 'no-such-model', messages: [{ role: 'user', content: 'hi' }] } }),
      404,
      '/v1/chat/completions',
    );
  });

  it('rejects malformed JSON, invalid bodies and oversized bodies with the spec error body', async () => {
    const { key } = await paidKey(10);
    const url = `${gateway}/v1/chat/completions`;
    expectErrorBody(await call(url, { token: key, rawBody: '{"model": "gpt-4o-mini",' }), 400, '/v1/chat/completions', /^Body validation error!/);
    expectErrorBody(await call(url, { token: key, body: { model: 'gpt-4o-mini' } }), 400, '/v1/chat/completions', /^Body validation error!.*messages/);
    expectErrorBody(
      await call(url, { token: key, body: { model: 'gpt-4o-mini', messages: [{ role: 'robot', content: 'x' }] } }),
      400,
      '/v1/chat/completions',
      /messages\[0\]\.role.*Received 'robot'/,
    );
    const huge = JSON.stringify({ model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'x'.repeat(100_000) }] });
    expectErrorBody(await call(url, { token: key, rawBody: huge }), 413, '/v1/chat/completions', /too large/);
  });

  it('stops serving a revoked key within two seconds', async () => {
    const { key, keyId } = await paidKey(100_000);
    const body = { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] };
    expect((await call(`${gateway}/v1/chat/completions`, { token: key, body })).status).toBe(200);
    expect((await admin(`/admin/v1/keys/${keyId}`, undefined, 'DELETE')).status).toBe(204);
    const took = await eventually(async () => (await call(`${gateway}/v1/chat/completions`, { token: key, body })).status === 401, 2_000);
    expect(took).toBeLessThanOrEqual(2_000);
  });

  it('publishes Swagger UI and OpenAPI documents generated from the DTOs', async () => {
    const gatewayDoc = await call<{ paths: Record<string, unknown>; components: { schemas: Record<string, unknown> } }>(`${gateway}/docs-json`);
    expect(Object.keys(gatewayDoc.body.paths)).toEqual(expect.arrayContaining(['/v1/chat/completions', '/v1/models']));
    expect(gatewayDoc.body.components.schemas).toHaveProperty('ChatCompletionRequestDto');
    const billingDoc = await call<{ paths: Record<string, unknown> }>(`${billing}/docs-json`);
    expect(Object.keys(billingDoc.body.paths)).toEqual(expect.arrayContaining(['/v1/billing/balance', '/admin/v1/accounts']));
    const ui = await fetch(`${gateway}/docs`);
    expect(ui.status).toBe(200);
    expect(await ui.text()).toContain('swagger');
  });

  it('shuts down cleanly on Ctrl-C and keeps its data for the next start', async () => {
    const { accountId } = await paidKey(123);
    expect(await standalone.stop()).toBe(0);
    expect(standalone.output()).not.toMatch(/Unhandled|ERROR/);
    await start();
    const account = await admin<{ balance: number }>(`/admin/v1/accounts/${accountId}`);
    expect(account.status).toBe(200);
    expect(account.body.balance).toBe(123);
  }, 120_000);
});
