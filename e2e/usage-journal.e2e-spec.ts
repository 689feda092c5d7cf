import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { creditsToMicro } from '@igw/domain';
import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { eventually, startTcpProxy, type TcpProxy, createTestDatabase, dropQueueData, queryRows, testQueueBackend } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call } from './support/http';
import { childEnvironment, startHealthyService, startService, type ServiceProcess } from './support/service-process';

const ADMIN_TOKEN = 'journal-admin-token-0123456789';
// Room for every sequential request's hold (up to 500 output tokens of 'mini' each), whatever was spent before it.
const OPENING_CREDITS = 100_000;
const DURING_OUTAGE = 12;

/**
 * No usage is lost when a gateway dies during a queue outage: the gateway's queue connection
 * runs through a proxy the test cuts; requests with a known key are still answered, their
 * usage events can only reach the local journal; the gateway is SIGKILLed, the queue comes
 * back, and a new gateway on the same journal sends them. The ledger then holds every request
 * with the credits its response reported, and reconciliation is clean.
 */
describe('the usage journal', () => {
  let database: ScratchDatabase;
  let emulator: RunningEmulator;
  let proxy: TcpProxy;
  let journalDir: string;
  let queueEnv: NodeJS.ProcessEnv;
  let gatewayEnv: NodeJS.ProcessEnv;
  let gatewayPort: number;
  let gateway: ServiceProcess | undefined;
  const services: ServiceProcess[] = [];
  let billingUrl: string;

  const query = <T>(sql: string, params: unknown[] = []) => queryRows<T>(database.url, sql, params);
  const segments = () => (existsSync(journalDir) ? readdirSync(journalDir).filter((name) => name.endsWith('.jsonl')) : []);
  const journaledRequestIds = () =>
    segments().flatMap((name) =>
      readFileSync(path.join(journalDir, name), 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => (JSON.parse(line) as { requestId: string }).requestId),
    );
  const startGateway = () => startHealthyService('apps/gateway/src/main.js', gatewayPort, gatewayEnv);

  beforeAll(async () => {
    database = await createTestDatabase();
    emulator = await startEmulator();
    journalDir = path.join(mkdtempSync(path.join(tmpdir(), 'igw-e2e-journal-')), 'usage-journal');
    const backend = testQueueBackend(database.url);
    queueEnv = backend.kind === 'redis' ? { REDIS_URL: backend.url, QUEUE_PREFIX: backend.prefix } : { DATABASE_URL: database.url };
    // Only the gateway reaches the queue through the proxy: Redis, or the PostgreSQL BullMQ runs on.
    const queueUrl = new URL(backend.url);
    // With Redis the gateway's limiter goes through it too, and is cut with the queue.
    proxy = await startTcpProxy({ host: queueUrl.hostname, port: Number(queueUrl.port) || (backend.kind === 'redis' ? 6379 : 5432) });
    const proxiedUrl = new URL(backend.url);
    proxiedUrl.host = `127.0.0.1:${proxy.port}`;
    const gatewayQueueEnv = backend.kind === 'redis' ? { ...queueEnv, REDIS_URL: proxiedUrl.toString() } : { DATABASE_URL: proxiedUrl.toString() };

    const [cataloguePort, billingPort] = await Promise.all([findFreePort(), findFreePort()]);
    gatewayPort = await findFreePort();
    services.push(
      await startHealthyService(
        'apps/catalogue/src/main.js',
        cataloguePort,
        childEnvironment({ ...queueEnv, ADMIN_TOKEN, DATABASE_URL: database.url, CATALOGUE_PORT: String(cataloguePort), CATALOGUE_FILE: path.join(__dirname, 'fixtures/chat-catalogue.yaml') }),
      ),
    );
    services.push(await startHealthyService('apps/billing/src/main.js', billingPort, childEnvironment({ ...queueEnv, ADMIN_TOKEN, DATABASE_URL: database.url, BILLING_PORT: String(billingPort) })));
    billingUrl = `http://127.0.0.1:${billingPort}`;
    gatewayEnv = childEnvironment({
      ...gatewayQueueEnv,
      ADMIN_TOKEN,
      PORT: String(gatewayPort),
      USAGE_JOURNAL_DIR: journalDir,
      OPENAI_API_KEY: 'k',
      OPENAI_BASE_URL: `${emulator.url}/v1`,
      LOG_LEVEL: 'log',
    });
    gateway = await startGateway();
    await eventually(async () => (await call(`http://127.0.0.1:${gatewayPort}/readyz`)).status === 200, 20_000);
  }, 180_000);

  afterAll(async () => {
    await gateway?.stop(5_000);
    for (const service of services.reverse()) await service.stop();
    await proxy?.close();
    await emulator?.close();
    await dropQueueData({ url: queueEnv?.REDIS_URL, prefix: queueEnv?.QUEUE_PREFIX });
    await database?.drop();
    if (journalDir) rmSync(path.dirname(journalDir), { recursive: true, force: true });
  });

  it('loses no usage when the gateway is killed during a queue outage', async () => {
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const account = await call<{ id: string }>(`${billingUrl}/admin/v1/accounts`, { token: ADMIN_TOKEN, body: { credits: OPENING_CREDITS, plan: 'paid' } });
    const key = (await call<{ key: string }>(`${billingUrl}/admin/v1/accounts/${account.body.id}/keys`, { token: ADMIN_TOKEN, body: {} })).body.key;
    const requestIds: string[] = [];
    let spentMicro = 0n;
    const paid = async (index: number) => {
      const stream = index % 3 === 1;
      const body = { model: 'mini', messages: [{ role: 'user', content: `request ${index} lorem ipsum` }], stream, ...(stream ? { stream_options: { include_usage: true } } : {}) };
      const response = await fetch(`${gatewayUrl}/v1/chat/completions`, {
        method: 'POST',
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const text = await response.text();
      expect({ index, status: response.status, text: response.status === 200 ? '' : text.slice(0, 300) }).toEqual({ index, status: 200, text: '' });
      const last = stream ? JSON.parse(text.split('\n\n').filter((event) => event.startsWith('data: {')).at(-1)!.slice(6)) : JSON.parse(text);
      spentMicro += creditsToMicro(String(last.meta.usage.credits_used));
      requestIds.push(response.headers.get('x-request-id')!);
    };

    // The key is resolved over the queue once, then known to the gateway.
    await paid(0);
    await eventually(async () => (await query('SELECT 1 FROM billing.ledger_entries WHERE request_id = $1', [requestIds[0]])).length === 1, 10_000);

    proxy.cut();
    for (let index = 1; index <= DURING_OUTAGE; index++) await paid(index);
    // Answered and journaled (the journal may still hold confirmed events of its open file: duplicates are harmless).
    expect(journaledRequestIds()).toEqual(expect.arrayContaining(requestIds.slice(1)));

    gateway!.child.kill('SIGKILL');
    await gateway!.exited();
    proxy.restore();
    expect(journaledRequestIds()).toEqual(expect.arrayContaining(requestIds.slice(1)));
    expect(existsSync(path.join(journalDir, 'lock'))).toBe(true);

    gateway = await startGateway();
    // A second gateway on the same journal is refused while this one runs.
    const intruder = startService('apps/gateway/src/main.js', { ...gatewayEnv, PORT: String(await findFreePort()) });
    expect(await intruder.exited()).not.toBe(0);
    expect(intruder.output()).toMatch(/usage-journal is in use \(usage journal\) by process \d+ on host .*give each its own directory/);

    const usage = async () =>
      (
        await query<{ count: string; sum: string }>(
          `SELECT count(*)::text AS count, COALESCE(SUM(amount_micro), 0)::text AS sum FROM billing.ledger_entries WHERE account_id = $1 AND kind = 'usage'`,
          [account.body.id],
        )
      )[0];
    await eventually(async () => Number((await usage()).count) === requestIds.length, 30_000, 200);
    const ledger = await query<{ request_id: string }>(`SELECT request_id FROM billing.ledger_entries WHERE account_id = $1 AND kind = 'usage'`, [account.body.id]);
    expect(new Set(ledger.map((row) => row.request_id))).toEqual(new Set(requestIds));
    expect(-BigInt((await usage()).sum)).toBe(spentMicro);
    const [{ balance_micro: balanceMicro }] = await query<{ balance_micro: string }>('SELECT balance_micro::text FROM billing.accounts WHERE id = $1', [account.body.id]);
    expect(BigInt(OPENING_CREDITS) * 1_000_000n - BigInt(balanceMicro)).toBe(spentMicro);
    const report = await call<{ mismatches: unknown[]; usageMismatches: unknown[] }>(`${billingUrl}/admin/v1/reconciliation`, { token: ADMIN_TOKEN });
    expect(report.body).toMatchObject({ mismatches: [], usageMismatches: [] });
    // Confirmed: the leftover files are gone.
    await eventually(async () => segments().length === 0, 10_000);
    // The outage's events, and possibly already confirmed ones of the same file.
    expect(Number(gateway.output().match(/re-sending (\d+) usage event\(s\) left by a previous run/)?.[1])).toBeGreaterThanOrEqual(DURING_OUTAGE);
  }, 120_000);

  it('a shutdown while the queue is down leaves the journal for the next start; one that got everything out leaves none', async () => {
    const gatewayUrl = `http://127.0.0.1:${gatewayPort}`;
    const account = await call<{ id: string }>(`${billingUrl}/admin/v1/accounts`, { token: ADMIN_TOKEN, body: { credits: OPENING_CREDITS, plan: 'paid' } });
    const key = (await call<{ key: string }>(`${billingUrl}/admin/v1/accounts/${account.body.id}/keys`, { token: ADMIN_TOKEN, body: {} })).body.key;
    const body = { model: 'mini', messages: [{ role: 'user', content: 'hello' }] };
    const warm = await call(`${gatewayUrl}/v1/chat/completions`, { token: key, body });
    expect(warm.status).toBe(200);
    await eventually(async () => (await query('SELECT 1 FROM billing.ledger_entries WHERE request_id = $1', [warm.headers.get('x-request-id')])).length === 1, 10_000);

    proxy.cut();
    const during = await call<{ meta: { usage: { credits_used: number } } }>(`${gatewayUrl}/v1/chat/completions`, { token: key, body });
    expect(during.status).toBe(200);
    const requestId = during.headers.get('x-request-id')!;
    // With Redis, closing the queue connections does not finish while Redis is away: stop() then kills it, after the journal is closed.
    await gateway!.stop(15_000);
    expect(gateway!.output()).toMatch(/1 usage event\(s\) could not be queued before shutdown; they stay in the usage journal/);
    expect(journaledRequestIds()).toContain(requestId);
    proxy.restore();

    gateway = await startGateway();
    await eventually(async () => (await query('SELECT 1 FROM billing.ledger_entries WHERE request_id = $1', [requestId])).length === 1, 30_000, 200);
    await eventually(async () => segments().length === 0, 10_000);
    await gateway.stop();
    expect(gateway.output()).not.toMatch(/could not be queued/);
    expect(existsSync(journalDir)).toBe(false);
    gateway = undefined;
  }, 120_000);
});
