import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { createTestDatabase, dropQueueData, uniqueQueuePrefix } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call } from './support/http';
import { childEnvironment, startService, type ServiceProcess } from './support/service-process';

const ROOT = path.resolve(__dirname, '..');
const BANNER_END = /Press Ctrl-C to stop/;

/**
 * `npm start` as a newcomer meets it: which ports it takes, what it prints, what it says when
 * nothing can answer, and what it says when a port is taken.
 */
describe('standalone start: ports, banner, providers', () => {
  let dataDir: string;
  let database: ScratchDatabase | undefined;
  let emulator: RunningEmulator;
  let baseEnv: NodeJS.ProcessEnv;
  let gatewayPort: number;
  let billingPort: number;
  const squatters: Server[] = [];
  let standalone: ServiceProcess | undefined;

  const occupy = (port: number) =>
    new Promise<void>((resolve, reject) => {
      const server = createServer().once('error', reject);
      server.listen(port, '127.0.0.1', () => resolve());
      squatters.push(server);
    });

  beforeAll(async () => {
    emulator = await startEmulator({ apiKey: 'upstream-key' });
    dataDir = await mkdtemp(path.join(tmpdir(), 'igw-e2e-start-'));
    const [gateway, billing, catalogue, decisions] = await Promise.all([findFreePort(), findFreePort(), findFreePort(), findFreePort()]);
    gatewayPort = gateway;
    billingPort = billing;
    // Another program (or a second checkout) on the ports the catalogue and decisions used to take.
    await occupy(catalogue);
    await occupy(decisions);
    const external: NodeJS.ProcessEnv = {};
    if (process.env.DATABASE_URL) {
      database = await createTestDatabase();
      external.DATABASE_URL = database.url;
    }
    if (process.env.REDIS_URL) Object.assign(external, { REDIS_URL: process.env.REDIS_URL, QUEUE_PREFIX: uniqueQueuePrefix() });
    baseEnv = {
      ...external,
      DATA_DIR: dataDir,
      PORT: String(gateway),
      BILLING_PORT: String(billing),
      CATALOGUE_PORT: String(catalogue),
      DECISIONS_PORT: String(decisions),
      // The default level, as `npm start` runs it (the test helper's default is warn).
      LOG_LEVEL: undefined,
    };
  }, 60_000);

  afterEach(async () => {
    await standalone?.stop();
    standalone = undefined;
  });

  afterAll(async () => {
    for (const server of squatters) server.close();
    await emulator?.close();
    await dropQueueData({ url: baseEnv?.REDIS_URL, prefix: baseEnv?.QUEUE_PREFIX });
    await database?.drop();
    await rm(dataDir, { recursive: true, force: true });
  });

  it('serves on two ports whatever holds the catalogue and decisions ports, prints a short banner, and warns that no provider is configured', async () => {
    standalone = startService('apps/standalone/src/main.js', childEnvironment(baseEnv));
    await standalone.waitForOutput(BANNER_END, 90_000);
    const gateway = `http://127.0.0.1:${gatewayPort}`;
    const billing = `http://127.0.0.1:${billingPort}`;
    const output = standalone.output();

    const lines = output.split('\n').filter((line) => line.trim() !== '');
    expect(lines.length).toBeLessThanOrEqual(16);
    expect(output).not.toMatch(/Mapped \{|RoutesResolver|InstanceLoader|database system|catalogue revision/);
    expect(output).toContain(`gateway (base_url):     ${gateway}`);
    expect(output).toContain(`billing (billing_url):  ${billing}`);
    expect(output).toContain(`ports:                  ${gatewayPort} (PORT), ${billingPort} (BILLING_PORT)`);
    expect(output).toContain(`admin token:            in ${path.join(dataDir, 'admin-token')}`);

    const total = (await call<{ data: unknown[] }>(`${gateway}/v1/models`)).body.data.length;
    expect(total).toBeGreaterThanOrEqual(40);
    expect(output).toContain(`WARNING: no upstream provider is configured, so none of the ${total} catalogue models can answer`);
    expect(output).toMatch(/Set a provider's key before npm start, e\.g\. OPENAI_API_KEY=/);
    expect((await call<{ data: unknown[] }>(`${gateway}/v1/models?available=true`)).body.data).toEqual([]);

    // The catalogue's admin API, on billing's port.
    const token = (await import('node:fs')).readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    const adminList = await call<{ data: unknown[] }>(`${billing}/admin/v1/catalogue/models`, { token });
    expect(adminList.status).toBe(200);
    expect(adminList.body.data.length).toBeGreaterThanOrEqual(total);
    expect((await call(`${billing}/catalogue/docs-json`)).status).toBe(200);
    expect((await call(`${billing}/readyz`)).status).toBe(200);

    // The next step, exactly as printed, works.
    const create = output.match(/^ {2}(DATA_DIR=\S+ )?npx igw (.* accounts create .*)$/m);
    expect(create).not.toBeNull();
    expect(create![1]).toBe(`DATA_DIR=${dataDir} `);
    const { stdout } = await promisify(execFile)(process.execPath, [path.join(ROOT, 'dist/tools/cli/src/main.js'), ...create![2].split(' ')], {
      cwd: ROOT,
      env: childEnvironment({ DATA_DIR: dataDir }),
    });
    const account = JSON.parse(stdout) as { id: string; balance: number; plan: string };
    expect(account).toMatchObject({ plan: 'paid', balance: 20_000_000 });
    expect(output).toMatch(/^ {2}DATA_DIR=\S+ npx igw --url \S+ keys create <id printed above> --name first-key$/m);
  }, 120_000);

  it('at LOG_LEVEL=debug prints the detail; with a provider says how many models can answer, and /v1/models?available=true lists just those', async () => {
    const emulated = { OPENAI_API_KEY: 'upstream-key', OPENAI_BASE_URL: `${emulator.url}/v1` };
    standalone = startService('apps/standalone/src/main.js', childEnvironment({ ...baseEnv, ...emulated, LOG_LEVEL: 'debug' }));
    await standalone.waitForOutput(BANNER_END, 90_000);
    const gateway = `http://127.0.0.1:${gatewayPort}`;
    const output = standalone.output();
    expect(output).toContain('Mapped {/v1/models, GET} route');
    expect(output).toContain(`listening on http://127.0.0.1:${gatewayPort}`);
    expect(output).not.toContain('WARNING');

    type Entry = { id: string; definition: { routing: { sources: Array<{ provider: string }> } } };
    const token = (await import('node:fs')).readFileSync(path.join(dataDir, 'admin-token'), 'utf8').trim();
    const entries = (await call<{ data: Entry[] }>(`http://127.0.0.1:${billingPort}/admin/v1/catalogue/models`, { token })).body.data;
    const all = (await call<{ data: Array<{ id: string }> }>(`${gateway}/v1/models`)).body.data.map((model) => model.id);
    const available = (await call<{ data: Array<{ id: string }> }>(`${gateway}/v1/models?available=true`)).body.data.map((model) => model.id);
    const withOpenAi = entries.filter((entry) => all.includes(entry.id) && entry.definition.routing.sources.some((source) => source.provider === 'openai')).map((entry) => entry.id);
    expect(available.length).toBeGreaterThan(0);
    expect(available.length).toBeLessThan(all.length);
    expect(available.sort()).toEqual(withOpenAi.sort());
    expect(output).toContain(`providers:              openai: ${available.length} of ${all.length} models can answer (${gateway}/v1/models?available=true)`);
    // Any other value lists the whole catalogue, as the spec's default does.
    expect((await call<{ data: unknown[] }>(`${gateway}/v1/models?available=false`)).body.data.length).toBe(all.length);
  }, 120_000);

  it('names the variable to change when a port is taken, in one sentence, without a stack trace', async () => {
    await occupy(billingPort);
    standalone = startService('apps/standalone/src/main.js', childEnvironment(baseEnv));
    expect(await standalone.exited()).not.toBe(0);
    const output = standalone.output();
    expect(output).toContain(
      `The billing cannot listen on 127.0.0.1:${billingPort} because another program already uses that port: stop it, or set BILLING_PORT to a free port.`,
    );
    expect(output).not.toMatch(/^\s+at /m);
    expect(output.match(/ERROR/g)).toHaveLength(1);
  }, 90_000);

  it('refuses to start on a providers file that does not validate, naming the file, the entry and the field, never the key', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'igw-providers-'));
    const file = path.join(directory, 'providers.yaml');
    await writeFile(file, 'connections:\n  - { name: azure-eastus, kind: azure-openai, baseUrl: "https://eastus.example", apiKey: sk-literal-secret-123 }\n');
    try {
      standalone = startService('apps/standalone/src/main.js', childEnvironment({ ...baseEnv, PROVIDERS_FILE: file }));
      expect(await standalone.exited()).not.toBe(0);
      const output = standalone.output();
      expect(output).toContain(`${file}: connections[0] (azure-eastus).apiKey: expected \${VARIABLE}`);
      expect(output).not.toContain('sk-literal-secret-123');
      expect(output).not.toMatch(/^\s+at /m);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  }, 90_000);
});
