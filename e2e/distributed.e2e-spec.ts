import path from 'node:path';
import { creditsToMicro } from '@igw/domain';
import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { SHUTTING_DOWN_MESSAGE } from '@igw/http';
import { eventually, queryRows } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call, expectErrorBody } from './support/http';
import { childEnvironment, startService } from './support/service-process';
import { startDistributedHarness, type DistributedHarness } from './support/distributed-harness';

const ADMIN_TOKEN = 'distributed-admin-token-0123456789';
/** The gateways' drain time: longer than the slow stream, shorter than the endless one is let run. */
const DRAIN_MS = 5_000;

interface OpenedStream {
  status: number;
  requestId: string;
  /** The `data:` payloads received so far. */
  events: string[];
  /** How the stream ended: read to its end, or its connection cut. */
  ended: Promise<'done' | 'cut'>;
}

/** POSTs a streamed chat request and reads its events as they come. */
async function openStream(url: string, key: string, body: Record<string, unknown>): Promise<OpenedStream> {
  const response = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const events: string[] = [];
  const reader = response.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  const ended = (async (): Promise<'done' | 'cut'> => {
    try {
      for (;;) {
        const { done, value } = await reader.read();
        if (done) return 'done';
        buffer += decoder.decode(value, { stream: true });
        for (let at = buffer.indexOf('\n\n'); at !== -1; at = buffer.indexOf('\n\n')) {
          events.push(buffer.slice(0, at).replace(/^data: /, ''));
          buffer = buffer.slice(at + 2);
        }
      }
    } catch {
      return 'cut';
    }
  })();
  return { status: response.status, requestId: response.headers.get('x-request-id')!, events, ended };
}

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
      gateways: 2,
      gatewayEnv: {
        OPENAI_API_KEY: 'k',
        OPENAI_BASE_URL: `${emulator.url}/v1`,
        // Speech to text fetches the emulator's sample audio, on loopback.
        MEDIA_FETCH_ALLOWLIST: new URL(emulator.url).host,
        SHUTDOWN_DRAIN_MS: String(DRAIN_MS),
      },
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

  it('refuses to start billing or the catalogue without ADMIN_TOKEN', async () => {
    const env = childEnvironment({ ...queueEnv, DATABASE_URL: database.url, BILLING_PORT: String(await findFreePort()) });
    const lonely = startService('apps/billing/src/main.js', env);
    expect(await lonely.exited()).not.toBe(0);
    expect(lonely.output()).toMatch(/ADMIN_TOKEN is required/);
  });

  it('runs the gateways and decisions without ADMIN_TOKEN: they check none and serve no admin route', async () => {
    // The harness gives the token to billing and the catalogue only, as the chart and compose do.
    const key = await harness.paidKey(1_000_000);
    const answer = await call(`${gateway}/v1/chat/completions`, { token: key, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'hi' }] } });
    expect(answer.status).toBe(200);
    expectErrorBody(await call(`${gateway}/admin/v1/accounts`, { token: ADMIN_TOKEN }), 404, '/admin/v1/accounts');
    for (const name of ['gateway-0', 'decisions']) expect(harness.process(name).output()).not.toMatch(/ADMIN_TOKEN/);
  });

  it('warns a gateway started with ADMIN_TOKEN that it does not use it', async () => {
    const port = await findFreePort();
    const env = childEnvironment({ ...queueEnv, ADMIN_TOKEN, HOST: '127.0.0.1', PORT: String(port) });
    const extra = startService('apps/gateway/src/main.js', env);
    try {
      await extra.waitForOutput(/ADMIN_TOKEN is set, but the gateway does not use it/, 20_000);
    } finally {
      await extra.stop();
    }
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
    expect(broken.output()).toMatch(/models\[0\] \(acme\/broken\): pricing\.units\[0\]\.per: Expected an integer\. Received nothing/);
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

  /**
   * One account used on both replicas through every endpoint, a catalogue service killed and
   * restarted, a catalogue change, a key revocation and a replica stopped mid-stream: at the
   * end the ledger holds exactly what the responses said they cost.
   */
  describe('two replicas, every endpoint, services stopped and killed', () => {
    const OPENING_CREDITS = 1_000_000;
    let accountId: string;
    let key: string;
    /** What the successful responses said they cost, and how many there were. */
    let spentMicro = 0n;
    let billed = 0;
    const charge = (credits: number | string | null) => {
      expect(Number(credits)).toBeGreaterThan(0);
      spentMicro += creditsToMicro(String(credits));
      billed++;
    };
    const ledgerRows = (where = '') =>
      queryRows<{ request_id: string; amount_micro: string; units: Record<string, number> }>(
        database.url,
        `SELECT request_id, amount_micro::text, units FROM billing.ledger_entries WHERE account_id = $1 AND kind = 'usage' ${where}`,
        [accountId],
      );

    beforeAll(async () => {
      const account = await call<{ id: string }>(`${billing}/admin/v1/accounts`, { token: ADMIN_TOKEN, body: { credits: OPENING_CREDITS, plan: 'paid' } });
      accountId = account.body.id;
      key = (await call<{ key: string }>(`${billing}/admin/v1/accounts/${accountId}/keys`, { token: ADMIN_TOKEN, body: {} })).body.key;
    });

    type Charged = { meta: { usage: { credits_used: number } } };
    const chat = (gateway: string, model = 'gpt-4o-mini', token = key) =>
      call<Charged>(`${gateway}/v1/chat/completions`, { token, body: { model, max_tokens: 16, messages: [{ role: 'user', content: 'one two three' }] } });

    it('serves every endpoint on both replicas, each billed what its response says', async () => {
      for (const gateway of harness.gateways) {
        const completion = await chat(gateway);
        expect(completion.status).toBe(200);
        charge(completion.body.meta.usage.credits_used);

        const stream = await openStream(`${gateway}/v1/chat/completions`, key, {
          model: 'gpt-4o-mini',
          stream: true,
          stream_options: { include_usage: true },
          messages: [{ role: 'user', content: 'stream it' }],
        });
        expect(stream.status).toBe(200);
        expect(await stream.ended).toBe('done');
        expect(stream.events.at(-1)).toBe('[DONE]');
        charge((JSON.parse(stream.events.at(-2)!) as Charged).meta.usage.credits_used);

        const embedding = await call<Charged>(`${gateway}/v1/embeddings`, { token: key, body: { model: 'test/embed', input: 'embed these four words' } });
        expect(embedding.status).toBe(200);
        charge(embedding.body.meta.usage.credits_used);

        const image = await call<Charged & { data: unknown[] }>(`${gateway}/v1/images/generations`, { token: key, body: { model: 'test/image', prompt: 'a lighthouse at dusk' } });
        expect(image.status).toBe(200);
        expect(image.body.data).toHaveLength(1);
        charge(image.body.meta.usage.credits_used);

        const speech = await fetch(`${gateway}/tts`, {
          method: 'POST',
          headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ model: 'test/tts', text: 'Your order has shipped.' }),
        });
        expect(speech.status).toBe(200);
        expect((await speech.arrayBuffer()).byteLength).toBeGreaterThan(0);
        charge(speech.headers.get('x-credits-used'));

        const transcript = await call<Charged & { meta: { usage: { audio_seconds: number } } }>(`${gateway}/stt`, {
          token: key,
          body: { model: 'test/whisper', url: `${emulator.url}/media/sample.wav` },
        });
        expect(transcript.status).toBe(200);
        expect(transcript.body.meta.usage.audio_seconds).toBe(2);
        charge(transcript.body.meta.usage.credits_used);

        const decision = await call<Charged>(`${gateway}/v1/decisions`, {
          token: key,
          body: { model: 'jev', state: 'I was charged twice.', questions: { is_complaint: { type: 'noul', instructions: 'Is the customer complaining?' } } },
        });
        expect(decision.status).toBe(200);
        charge(decision.body.meta.usage.credits_used);
      }
      const balance = OPENING_CREDITS * 1_000_000 - Number(spentMicro);
      await eventually(async () => Math.round((await call<{ balance: number }>(`${billing}/v1/billing/balance`, { token: key })).body.balance * 1_000_000) === balance, 10_000);
    });

    it('keeps serving while the catalogue service is killed; after its restart a change reaches both replicas', async () => {
      const catalogueProcess = harness.process('catalogue');
      catalogueProcess.child.kill('SIGKILL');
      await catalogueProcess.exited();
      for (const gateway of harness.gateways) {
        const completion = await chat(gateway);
        expect(completion.status).toBe(200);
        charge(completion.body.meta.usage.credits_used);
      }
      await harness.restart('catalogue');

      const etags = async () => Promise.all(harness.gateways.map(async (gateway) => (await fetch(`${gateway}/v1/models`)).headers.get('etag')));
      const before = await etags();
      const changed = await call(`${harness.catalogue}/admin/v1/catalogue/models/openai/gpt-4o-mini`, { method: 'PATCH', token: ADMIN_TOKEN, body: { aliases: ['gpt-4o-mini', 'house-mini'] } });
      expect(changed.status).toBe(200);
      await eventually(async () => (await etags()).every((etag, i) => etag !== before[i]), 10_000);
      for (const gateway of harness.gateways) {
        const completion = await chat(gateway, 'house-mini');
        expect(completion.status).toBe(200);
        charge(completion.body.meta.usage.credits_used);
      }
    });

    it('refuses a revoked key on every replica', async () => {
      const other = await call<{ id: string; key: string }>(`${billing}/admin/v1/accounts/${accountId}/keys`, { token: ADMIN_TOKEN, body: {} });
      // Both replicas know (and cache) the key before it is revoked.
      for (const gateway of harness.gateways) {
        const completion = await chat(gateway, 'gpt-4o-mini', other.body.key);
        expect(completion.status).toBe(200);
        charge(completion.body.meta.usage.credits_used);
      }
      expect((await call(`${billing}/admin/v1/keys/${other.body.id}`, { token: ADMIN_TOKEN, method: 'DELETE' })).status).toBe(204);
      for (const gateway of harness.gateways) {
        await eventually(async () => {
          const attempt = await chat(gateway, 'gpt-4o-mini', other.body.key);
          // Served before the revocation reached this replica: billed like any other.
          if (attempt.status === 200) charge(attempt.body.meta.usage.credits_used);
          return attempt.status === 401;
        }, 2_000);
      }
    });

    it('lets a replica sent SIGTERM finish its stream and refuse new requests; a stream past the drain time is cut and billed', async () => {
      const [staying, leaving] = harness.gateways;
      const url = `${leaving}/v1/chat/completions`;
      const messages = [{ role: 'user', content: 'one two three' }];
      const slow = await openStream(url, key, { model: 'test/slow-stream', stream: true, stream_options: { include_usage: true }, messages });
      const endless = await openStream(url, key, { model: 'test/endless-stream', stream: true, messages });
      expect([slow.status, endless.status]).toEqual([200, 200]);
      await eventually(async () => slow.events.length > 0 && endless.events.length > 0, 5_000);

      const gatewayProcess = harness.process('gateway-1');
      const signalled = Date.now();
      gatewayProcess.child.kill('SIGTERM');
      // Not ready at once, so a Service stops routing to it; what still arrives is refused, for the client to retry elsewhere.
      await eventually(async () => (await call(`${leaving}/readyz`)).status === 503, 2_000);
      const refused = await call(url, { token: key, body: { model: 'gpt-4o-mini', messages } });
      expectErrorBody(refused, 503, '/v1/chat/completions');
      expect(refused.body.message).toBe(SHUTTING_DOWN_MESSAGE);
      expect(refused.headers.get('connection')).toBe('close');
      expect((await call(`${leaving}/healthz`)).status).toBe(200);
      const served = await chat(staying);
      expect(served.status).toBe(200);
      charge(served.body.meta.usage.credits_used);

      // The slow stream runs to its end, with its usage.
      expect(await slow.ended).toBe('done');
      expect(slow.events.at(-1)).toBe('[DONE]');
      const slowCredits = (JSON.parse(slow.events.at(-2)!) as Charged).meta.usage.credits_used;
      charge(slowCredits);
      // The endless one is cut at the drain deadline, and the process exits cleanly.
      expect(await endless.ended).toBe('cut');
      expect(await gatewayProcess.exited()).toBe(0);
      const stopped = Date.now() - signalled;
      expect(stopped).toBeGreaterThanOrEqual(DRAIN_MS);
      expect(stopped).toBeLessThan(DRAIN_MS + 5_000);
      expect(gatewayProcess.output()).not.toMatch(/\n\s+at /);

      await eventually(async () => (await ledgerRows(`AND request_id IN ('${slow.requestId}', '${endless.requestId}')`)).length === 2, 10_000);
      const [slowEntry] = await ledgerRows(`AND request_id = '${slow.requestId}'`);
      expect(-BigInt(slowEntry.amount_micro)).toBe(creditsToMicro(String(slowCredits)));
      // Cut off without the upstream's usage: the prompt and what was generated, counted (the abandoned-request rule).
      const [endlessEntry] = await ledgerRows(`AND request_id = '${endless.requestId}'`);
      const delivered = endless.events.filter((event) => event.includes('"content"')).length;
      expect(endlessEntry.units.output_tokens).toBeGreaterThanOrEqual(delivered - 1);
      expect(endlessEntry.units.input_tokens).toBeGreaterThan(0);
      expect(-BigInt(endlessEntry.amount_micro)).toBeGreaterThan(0n);
      spentMicro += -BigInt(endlessEntry.amount_micro);
      billed++;
    });

    it('loses nothing: the ledger and the balance equal what the responses said', async () => {
      await eventually(async () => (await ledgerRows()).length >= billed, 10_000);
      const rows = await ledgerRows();
      expect(rows).toHaveLength(billed);
      expect(rows.reduce((sum, row) => sum - BigInt(row.amount_micro), 0n)).toBe(spentMicro);
      const [{ balance_micro: balanceMicro }] = await queryRows<{ balance_micro: string }>(database.url, 'SELECT balance_micro::text FROM billing.accounts WHERE id = $1', [accountId]);
      expect(BigInt(OPENING_CREDITS) * 1_000_000n - BigInt(balanceMicro)).toBe(spentMicro);
      const balance = await call<{ balance: number }>(`${billing}/v1/billing/balance`, { token: key });
      expect(Math.round(balance.body.balance * 1_000_000)).toBe(Number(BigInt(OPENING_CREDITS) * 1_000_000n - spentMicro));
    });
  });
});
