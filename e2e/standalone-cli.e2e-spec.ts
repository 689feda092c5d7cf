import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { call, eventually } from './support/http';
import { childEnvironment, startService, type ServiceProcess } from './support/service-process';
import { createTestDatabase, dropQueueData, uniqueQueuePrefix } from './support/test-environment';

const ROOT = path.resolve(__dirname, '..');

interface StoredDemoKey {
  accountId: string;
  keyId: string;
  key: string;
}

interface ListedKey {
  id: string;
  name: string | null;
  prefix: string;
  revokedAt: string | null;
}

/**
 * The admin CLI, `npm run reconcile` and `npm start -- --demo` as an operator uses them: built
 * entry points run as processes against a real standalone server (demo mode: the emulator
 * plays every provider).
 */
describe('standalone admin tools, end to end', () => {
  let dataDir: string;
  let database: ScratchDatabase | undefined;
  let env: NodeJS.ProcessEnv;
  let standalone: ServiceProcess | undefined;
  let gateway: string;
  let billing: string;

  async function startDemo(): Promise<void> {
    standalone = startService('apps/standalone/src/main.js', env, ['--demo']);
    await standalone.waitForOutput(/Press Ctrl-C to stop/, 90_000);
  }

  async function stopServer(): Promise<void> {
    expect(await standalone?.stop()).toBe(0);
    standalone = undefined;
  }

  /** A built entry point as a process; the environment is only what is given (no ADMIN_TOKEN from ours). */
  function runNode(entry: string, args: string[], extraEnv: NodeJS.ProcessEnv): Promise<{ code: number | null; stdout: string; stderr: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [path.join(ROOT, 'dist', entry), ...args], {
        cwd: ROOT,
        env: { PATH: process.env.PATH, HOME: process.env.HOME, NO_COLOR: '1', ...extraEnv },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
      child.once('error', reject);
      child.once('close', (code) => resolve({ code, stdout, stderr }));
    });
  }

  const cli = (args: string[], extraEnv: NodeJS.ProcessEnv = {}) =>
    runNode('tools/cli/src/main.js', args, { BILLING_URL: billing, GATEWAY_URL: gateway, DATA_DIR: dataDir, ...extraEnv });

  async function cliJson<T>(args: string[]): Promise<T> {
    const result = await cli(args);
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    return JSON.parse(result.stdout) as T;
  }

  const readDemoKey = async (): Promise<StoredDemoKey> => JSON.parse(await readFile(path.join(dataDir, 'demo-key'), 'utf8')) as StoredDemoKey;
  const balanceStatus = async (key: string): Promise<number> => (await call(`${billing}/v1/billing/balance`, { token: key })).status;

  beforeAll(async () => {
    dataDir = await mkdtemp(path.join(tmpdir(), 'igw-e2e-admin-tools-'));
    const ports = await Promise.all([findFreePort(), findFreePort(), findFreePort(), findFreePort()]);
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
      CATALOGUE_PORT: String(ports[2]),
      DECISIONS_PORT: String(ports[3]),
    });
    gateway = `http://127.0.0.1:${ports[0]}`;
    billing = `http://127.0.0.1:${ports[1]}`;
    await startDemo();
  }, 120_000);

  afterAll(async () => {
    await standalone?.stop();
    await dropQueueData({ url: env?.REDIS_URL, prefix: env?.QUEUE_PREFIX });
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('--demo reuses one key across starts, kept owner-only, and replaces it (revoking strays) once it stops working', async () => {
    const first = await readDemoKey();
    expect((await stat(path.join(dataDir, 'demo-key'))).mode & 0o777).toBe(0o600);
    expect(standalone!.output()).toContain(first.key);
    expect(await balanceStatus(first.key)).toBe(200);

    await stopServer();
    await startDemo();
    expect(await readDemoKey()).toEqual(first);
    expect(standalone!.output()).toContain(first.key);
    let keys = await cliJson<{ data: ListedKey[] }>(['keys', 'list', first.accountId]);
    expect(keys.data.filter((key) => key.revokedAt === null).map((key) => key.id)).toEqual([first.keyId]);
    expect(JSON.stringify(keys)).not.toContain(first.key);

    // A stray working demo key (as earlier versions left one per start), and the kept key revoked.
    const stray = await call<{ id: string; key: string }>(`${billing}/admin/v1/accounts/${first.accountId}/keys`, {
      token: (await readFile(path.join(dataDir, 'admin-token'), 'utf8')).trim(),
      body: { name: 'demo' },
    });
    expect(stray.status).toBe(201);
    expect((await cli(['keys', 'revoke', first.keyId])).code).toBe(0);

    await stopServer();
    await startDemo();
    const second = await readDemoKey();
    expect(second.accountId).toBe(first.accountId);
    expect(second.key).not.toBe(first.key);
    expect(standalone!.output()).toContain(second.key);
    expect(await balanceStatus(second.key)).toBe(200);
    expect(await balanceStatus(stray.body.key)).toBe(401);
    keys = await cliJson<{ data: ListedKey[] }>(['keys', 'list', first.accountId]);
    expect(keys.data.filter((key) => key.revokedAt === null).map((key) => key.id)).toEqual([second.keyId]);
    expect(keys.data.map((key) => key.id)).toEqual(expect.arrayContaining([first.keyId, stray.body.id]));
  }, 240_000);

  it('the CLI takes USD, lists keys without the key, and filters usage by a model alias', async () => {
    const account = await cliJson<{ id: string; balance: number; lowBalanceThreshold: number }>(['accounts', 'create', '--name', 'Acme', '--usd', '10', '--plan', 'paid']);
    expect(account).toMatchObject({ balance: 20_000_000, lowBalanceThreshold: 100_000 });
    expect(await cliJson(['credits', 'add', account.id, '--usd', '2.5', '--reason', 'top-up'])).toEqual({ balance: 25_000_000 });

    const created = await cliJson<{ id: string; key: string; prefix: string }>(['keys', 'create', account.id, '--name', 'ci']);
    const listResult = await cli(['keys', 'list', account.id]);
    expect(listResult.code).toBe(0);
    expect(listResult.stdout).not.toContain(created.key);
    expect((JSON.parse(listResult.stdout) as { data: ListedKey[] }).data).toEqual([
      expect.objectContaining({ id: created.id, name: 'ci', prefix: created.prefix, revokedAt: null }),
    ]);

    const chat = await call(`${gateway}/v1/chat/completions`, {
      token: created.key,
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] },
    });
    expect(chat.status).toBe(200);
    let usage: { data: Array<{ model: string | null; kind: string }> } = { data: [] };
    await eventually(async () => {
      usage = await cliJson(['usage', 'list', account.id, '--kind', 'usage']);
      return usage.data.length === 1;
    }, 15_000, 100);
    const canonical = usage.data[0].model;
    expect(canonical).not.toBe('gpt-4o-mini');
    const byAlias = await cliJson<{ data: Array<{ model: string }> }>(['usage', 'list', account.id, '--model', 'GPT-4o-mini']);
    expect(byAlias.data.map((entry) => entry.model)).toEqual([canonical]);
  }, 60_000);

  it('on a 401 the CLI says which admin token it used, never printing it', async () => {
    const result = await cli(['accounts', 'create', '--usd', '1'], { ADMIN_TOKEN: 'not-the-server-token-0123' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${billing} refused the admin token from ADMIN_TOKEN`);
    expect(result.stderr).not.toContain('not-the-server-token-0123');

    const tokenFile = path.join(dataDir, 'admin-token');
    const serverToken = await readFile(tokenFile, 'utf8');
    await writeFile(tokenFile, 'stale-token-from-an-older-install\n', { mode: 0o600 });
    try {
      const stale = await cli(['keys', 'list', '00000000-0000-4000-8000-000000000000']);
      expect(stale.code).toBe(1);
      expect(stale.stderr).toContain(`refused the admin token from the file ${tokenFile}`);
    } finally {
      await writeFile(tokenFile, serverToken, { mode: 0o600 });
    }
  }, 30_000);

  it('npm run reconcile checks the standalone database without DATABASE_URL', async () => {
    const result = await runNode('apps/billing/src/cli/reconcile.js', [], { DATA_DIR: dataDir });
    if (database) {
      // External PostgreSQL: the data folder holds no embedded cluster, and the message says so.
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`${path.join(dataDir, 'postgres')} holds no embedded database`);
      const withUrl = await runNode('apps/billing/src/cli/reconcile.js', [], { DATABASE_URL: database.url });
      expect(withUrl.code).toBe(0);
      return;
    }
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: expect.stringContaining('running embedded database') });
    const report = JSON.parse(result.stdout) as { accounts: number; mismatches: unknown[] };
    expect(report.accounts).toBeGreaterThanOrEqual(2);
    expect(report.mismatches).toEqual([]);

    // Stopped server: reconcile starts the embedded database for the check and stops it.
    await stopServer();
    const offline = await runNode('apps/billing/src/cli/reconcile.js', [], { DATA_DIR: dataDir });
    expect(offline.code).toBe(0);
    expect((JSON.parse(offline.stdout) as { accounts: number }).accounts).toBe(report.accounts);
    await startDemo();
  }, 120_000);
});
