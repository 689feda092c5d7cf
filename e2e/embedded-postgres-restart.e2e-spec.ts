/**
 * @backend-independent Runs the standalone app on an embedded PostgreSQL of its own whatever DATABASE_URL says; the run's database and queue play no part.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findFreePort } from '@igw/persistence';
import { eventually } from '@igw/testing';
import { call } from './support/http';
import { childEnvironment, startService, type ServiceProcess } from './support/service-process';

/**
 * `npm start` on a laptop: the embedded PostgreSQL killed under the running app (the OOM killer,
 * a stray kill) is started again on the same port and data, the app answers again without a
 * restart of its own, and Ctrl-C still stops everything with exit 0.
 */
describe('the standalone app when its embedded PostgreSQL dies', () => {
  let dataDir: string;
  let app: ServiceProcess | undefined;
  let gateway: string;
  let billing: string;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'igw-e2e-pg-restart-'));
    const [gatewayPort, billingPort, cataloguePort, decisionsPort] = await Promise.all([findFreePort(), findFreePort(), findFreePort(), findFreePort()]);
    gateway = `http://127.0.0.1:${gatewayPort}`;
    billing = `http://127.0.0.1:${billingPort}`;
    const env = childEnvironment({ DATA_DIR: dataDir, PORT: String(gatewayPort), BILLING_PORT: String(billingPort), CATALOGUE_PORT: String(cataloguePort), DECISIONS_PORT: String(decisionsPort) });
    app = startService('apps/standalone/src/main.js', env, ['--demo']);
    await app.waitForOutput(/Press Ctrl-C to stop/, 90_000);
  }, 120_000);

  afterAll(async () => {
    await app?.stop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('starts the database again, answers paid requests again and bills them, then stops with exit 0', async () => {
    const { key } = JSON.parse(await readFile(path.join(dataDir, 'demo-key'), 'utf8')) as { key: string };
    const chat = () => call(`${gateway}/v1/chat/completions`, { token: key, body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] } });
    const balance = async () => (await call<{ balance: number }>(`${billing}/v1/billing/balance`, { token: key })).body.balance;
    const start = await balance();
    expect((await chat()).status).toBe(200);
    await eventually(async () => (await balance()) < start, 15_000, 100);
    const before = await balance();

    // `<dataDir>/postgres` is the cluster (or, as root, a link to it): its postmaster.pid names the server.
    const serverPid = Number((await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
    process.kill(serverPid, 'SIGKILL');
    await app!.waitForOutput(/The embedded PostgreSQL stopped without being asked to \(SIGKILL\): starting it again in \d+ ms\./, 10_000);
    await app!.waitForOutput(/The embedded PostgreSQL runs again on 127\.0\.0\.1:\d+\./, 30_000);

    // Pools reconnect by themselves: a paid request is answered and billed again.
    await eventually(async () => (await chat()).status === 200, 30_000, 250);
    await eventually(async () => (await balance()) < before, 15_000, 100);

    expect(await app!.stop()).toBe(0);
    expect(app!.output()).not.toMatch(/Unhandled|\n\s+at /);
    app = undefined;
  }, 120_000);
});
