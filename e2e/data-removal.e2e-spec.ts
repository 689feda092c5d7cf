/**
 * @backend-independent Starts and removes embedded PostgreSQL clusters of its own; the run's database and queue play no part.
 */
import { spawn } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import { mkdtemp, readlink, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { runNode } from './support/admin-tools-harness';

const ROOT = path.resolve(__dirname, '..');
const SHARED_CLUSTERS = '/var/lib/inference-gateway/clusters';
const asRoot = process.getuid?.() === 0;

/**
 * A process that plays the gateway: it starts the data folder's embedded PostgreSQL, and stops it on SIGINT.
 * It listens for SIGINT before it says ready: the test may send it as soon as it reads the line.
 */
async function startPostgresOwner(dataDir: string): Promise<{ stop(): Promise<void> }> {
  const script = `
    const { startEmbeddedPostgres } = require(${JSON.stringify(path.join(ROOT, 'dist/libs/persistence/src/index.js'))});
    startEmbeddedPostgres({ dataDir: process.env.DATA_DIR }).then(
      (postgres) => { process.once('SIGINT', () => postgres.stop().then(() => process.exit(0))); process.stdout.write('ready\\n'); },
      (error) => { process.stderr.write(error.message); process.exit(1); },
    );`;
  const child = spawn(process.execPath, ['-e', script], { cwd: ROOT, env: { ...process.env, DATA_DIR: dataDir }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => ((output += chunk.toString()), output.includes('ready') && resolve()));
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
    void exited.then((code) => reject(new Error(`the PostgreSQL owner exited with ${code}: ${output}`)));
  });
  return {
    async stop() {
      child.kill('SIGINT');
      expect(await exited).toBe(0);
    },
  };
}

/** Where the data folder's cluster is: as root in a private folder, a shared one the folder links to. */
async function clusterOf(dataDir: string): Promise<string> {
  const entry = path.join(dataDir, 'postgres');
  return lstatSync(entry).isSymbolicLink() ? path.resolve(dataDir, await readlink(entry)) : entry;
}

/**
 * `npm run data:remove` (node dist/tools/db/src/remove-data.js): a clone's data, its embedded
 * PostgreSQL cluster included, goes with one command, also when root keeps that cluster
 * outside the clone; `-- --orphans` finds the clusters of clones already deleted.
 */
describe('data:remove', () => {
  const folders: string[] = [];
  // `mktemp -d` is 0700: as root, the `postgres` user cannot enter it, and the cluster goes to the shared folder.
  const privateDataDir = async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'igw-e2e-remove-'));
    folders.push(folder);
    return path.join(folder, 'data');
  };

  afterAll(async () => {
    for (const folder of folders) await rm(folder, { recursive: true, force: true });
  });

  it("refuses while the data folder's PostgreSQL runs for a live gateway, then removes the folder and its cluster", async () => {
    const dataDir = await privateDataDir();
    const owner = await startPostgresOwner(dataDir);
    const cluster = await clusterOf(dataDir);
    if (asRoot) expect(path.dirname(cluster)).toBe(SHARED_CLUSTERS);
    try {
      const refused = await runNode('tools/db/src/remove-data.js', [], { DATA_DIR: dataDir });
      expect(refused.code).toBe(1);
      expect(refused.stderr).toMatch(/is running for the gateway \(pid \d+\): stop it first/);
      expect(existsSync(path.join(cluster, 'PG_VERSION'))).toBe(true);
    } finally {
      await owner.stop();
    }

    const removed = await runNode('tools/db/src/remove-data.js', [], { DATA_DIR: dataDir });
    expect({ code: removed.code, stderr: removed.stderr }).toEqual({ code: 0, stderr: '' });
    expect(removed.stdout).toContain(`removed ${dataDir}`);
    if (asRoot) expect(removed.stdout).toContain(`removed ${cluster}`);
    expect(existsSync(cluster)).toBe(false);
    expect(existsSync(dataDir)).toBe(false);
  }, 120_000);

  (asRoot ? it : it.skip)('--orphans removes the shared cluster of a clone deleted without it, and keeps those whose clone is there', async () => {
    const deletedDataDir = await privateDataDir();
    await (await startPostgresOwner(deletedDataDir)).stop();
    const orphan = await clusterOf(deletedDataDir);
    const keptDataDir = await privateDataDir();
    await (await startPostgresOwner(keptDataDir)).stop();
    const kept = await clusterOf(keptDataDir);
    // The clone is deleted with rm -rf: its cluster stays behind in the shared folder.
    await rm(path.dirname(deletedDataDir), { recursive: true, force: true });
    expect(existsSync(path.join(orphan, 'PG_VERSION'))).toBe(true);

    const result = await runNode('tools/db/src/remove-data.js', ['--orphans'], {});
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    expect(result.stdout).toContain(`removed ${orphan}`);
    expect(existsSync(orphan)).toBe(false);
    expect(existsSync(path.join(kept, 'PG_VERSION'))).toBe(true);

    expect((await runNode('tools/db/src/remove-data.js', [], { DATA_DIR: keptDataDir })).code).toBe(0);
    expect(existsSync(kept)).toBe(false);
  }, 120_000);
});
