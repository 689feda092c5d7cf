import { spawn } from 'node:child_process';
import { readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { eventually } from '@igw/testing';
import { DemoStandalone, runNode, type ListedKey } from './support/admin-tools-harness';
import { call } from './support/http';

/** The admin CLI and `npm run reconcile` as an operator runs them, against a real standalone server. */
describe('standalone admin tools, end to end', () => {
  let standalone: DemoStandalone;

  beforeAll(async () => {
    standalone = await DemoStandalone.create();
    await standalone.start();
  }, 120_000);

  afterAll(async () => {
    await standalone?.dispose();
  });

  it('the CLI takes USD, lists keys without the key, and filters usage by a model alias', async () => {
    const account = await standalone.cliJson<{ id: string; balance: number; lowBalanceThreshold: number }>(['accounts', 'create', '--name', 'Acme', '--usd', '10', '--plan', 'paid']);
    expect(account).toMatchObject({ balance: 20_000_000, lowBalanceThreshold: 100_000 });
    expect(await standalone.cliJson(['credits', 'add', account.id, '--usd', '2.5', '--reason', 'top-up'])).toEqual({ balance: 25_000_000 });

    const created = await standalone.cliJson<{ id: string; key: string; prefix: string }>(['keys', 'create', account.id, '--name', 'ci']);
    const listed = await standalone.cli(['keys', 'list', account.id]);
    expect(listed.code).toBe(0);
    expect(listed.stdout).not.toContain(created.key);
    expect((JSON.parse(listed.stdout) as { data: ListedKey[] }).data).toEqual([
      expect.objectContaining({ id: created.id, name: 'ci', prefix: created.prefix, revokedAt: null }),
    ]);

    const chat = await call(`${standalone.gateway}/v1/chat/completions`, {
      token: created.key,
      body: { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] },
    });
    expect(chat.status).toBe(200);
    let usage: { data: Array<{ model: string | null }> } = { data: [] };
    await eventually(
      async () => {
        usage = await standalone.cliJson(['usage', 'list', account.id, '--kind', 'usage']);
        return usage.data.length === 1;
      },
      15_000,
      100,
    );
    const catalogueId = usage.data[0].model;
    expect(catalogueId).not.toBe('gpt-4o-mini');
    const byAlias = await standalone.cliJson<{ data: Array<{ model: string }> }>(['usage', 'list', account.id, '--model', 'GPT-4o-mini']);
    expect(byAlias.data.map((entry) => entry.model)).toEqual([catalogueId]);
  }, 60_000);

  it('npx igw prints nothing but the JSON (no npm banner), credits add takes --credits, and an account opened with USD is on the paid plan', async () => {
    const igw = (args: string[]) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve, reject) => {
        const child = spawn('npm', ['exec', '--no', '--', 'igw', ...args], {
          cwd: path.resolve(__dirname, '..'),
          env: { PATH: process.env.PATH, HOME: process.env.HOME, BILLING_URL: standalone.billing, GATEWAY_URL: standalone.gateway, DATA_DIR: standalone.dataDir },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
        child.once('error', reject);
        child.once('close', (code) => resolve({ code, stdout, stderr }));
      });
    const created = await igw(['accounts', 'create', '--name', 'piped', '--usd', '5']);
    expect(created.code).toBe(0);
    // What `| jq` reads: the whole of stdout parses.
    const account = JSON.parse(created.stdout) as { id: string; plan: string; balance: number };
    expect(account).toMatchObject({ plan: 'paid', balance: 10_000_000 });
    const added = await igw(['credits', 'add', account.id, '--credits', '1000']);
    expect(added.code).toBe(0);
    expect(JSON.parse(added.stdout)).toEqual({ balance: 10_001_000 });
  }, 60_000);

  it('on a 401 the CLI says which admin token it used, never printing it', async () => {
    const result = await standalone.cli(['accounts', 'create', '--usd', '1'], { ADMIN_TOKEN: 'not-the-server-token-0123' });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain(`${standalone.billing} refused the admin token from ADMIN_TOKEN`);
    expect(result.stderr).not.toContain('not-the-server-token-0123');

    const tokenFile = path.join(standalone.dataDir, 'admin-token');
    const serverToken = await readFile(tokenFile, 'utf8');
    await writeFile(tokenFile, 'stale-token-from-an-older-install\n', { mode: 0o600 });
    try {
      const stale = await standalone.cli(['keys', 'list', '00000000-0000-4000-8000-000000000000']);
      expect(stale.code).toBe(1);
      expect(stale.stderr).toContain(`refused the admin token from the file ${tokenFile}`);
      expect(stale.stderr).not.toContain('stale-token-from-an-older-install');
    } finally {
      await writeFile(tokenFile, serverToken, { mode: 0o600 });
    }
  }, 30_000);

  it('npm run reconcile checks the standalone database without DATABASE_URL, running or stopped', async () => {
    const result = await runNode('apps/billing/src/cli/reconcile.js', [], { DATA_DIR: standalone.dataDir });
    if (standalone.database) {
      // External PostgreSQL: the data folder holds no embedded cluster, and the message says so.
      expect(result.code).toBe(2);
      expect(result.stderr).toContain(`${path.join(standalone.dataDir, 'postgres')} holds no embedded database`);
      expect((await runNode('apps/billing/src/cli/reconcile.js', [], { DATABASE_URL: standalone.database.url })).code).toBe(0);
      return;
    }
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: expect.stringContaining('running embedded database') });
    const report = JSON.parse(result.stdout) as { accounts: number; mismatches: unknown[] };
    expect(report.accounts).toBeGreaterThanOrEqual(2);
    expect(report.mismatches).toEqual([]);

    // Server stopped: reconcile starts the embedded database for the check, and stops it.
    expect(await standalone.stop()).toBe(0);
    const offline = await runNode('apps/billing/src/cli/reconcile.js', [], { DATA_DIR: standalone.dataDir });
    expect({ code: offline.code, stderr: offline.stderr }).toEqual({ code: 0, stderr: expect.stringContaining('starting the embedded database') });
    expect((JSON.parse(offline.stdout) as { accounts: number }).accounts).toBe(report.accounts);
  }, 90_000);
});
