import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, lstatSync, readFileSync } from 'node:fs';
import { chmod, chown, cp, mkdir, mkdtemp, readdir, readFile, readlink, realpath, rename, rm, stat, symlink, unlink, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import { Client } from 'pg';

export interface EmbeddedPostgresOptions {
  /** Parent folder; the cluster lives in `<dataDir>/postgres`. */
  dataDir: string;
  /** 0 or undefined: a free port is picked at each start. */
  port?: number;
  database?: string;
  /** PostgreSQL's own output (detail). */
  log?: (line: string) => void;
  /** The server stopped without being asked to, and is being started again (news for the operator). */
  warn?: (line: string) => void;
}

/** Waits between tries to start a server that stopped unexpectedly: soon at first, then every 30 s. */
const RESTART_DELAYS_MS = [500, 1_000, 2_000, 5_000, 10_000, 30_000];

export interface RunningEmbeddedPostgres {
  url: string;
  /** Connection URL for another database on the same cluster. */
  urlFor(database: string): string;
  stop(): Promise<void>;
}

/** A start that cannot work on this machine; its message is one sentence saying what to do. */
export class EmbeddedPostgresUnavailableError extends Error {
  override readonly name = 'EmbeddedPostgresUnavailableError';
}

const USER = 'postgres';
/**
 * As root, PostgreSQL runs as the `postgres` user, which cannot enter a checkout or data folder
 * under a 0700 directory (root's home, any `mktemp -d`); the binaries and the cluster then live
 * here instead, in a folder only root can write.
 */
export const EMBEDDED_POSTGRES_SHARED_DIR = '/var/lib/inference-gateway';
const WHAT_TO_DO = 'run it as a non-root user, or set DATABASE_URL to a PostgreSQL server of your own';

interface Account {
  uid: number;
  gid: number;
}

interface Binaries {
  initdb: string;
  postgres: string;
}

/**
 * Starts (and on first use initialises) a real PostgreSQL from the `embedded-postgres`
 * binaries. The data survives restarts; the password is generated once and kept next to it.
 * The server runs in a process group of its own, so a terminal's Ctrl-C reaches only this
 * process, which closes its services first and then stops PostgreSQL.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningEmbeddedPostgres> {
  const dataDir = path.resolve(options.dataDir);
  const passwordFile = path.join(dataDir, 'postgres-password');
  await mkdir(dataDir, { recursive: true });
  const account = await postgresAccount();
  // The `postgres` user must be able to enter the folder (it holds only the cluster's entry).
  if (account) await chmod(dataDir, 0o755);
  const binaries = await reachableBinaries(account);
  const clusterDir = await reachableClusterDir(dataDir, account);
  const log = options.log ?? (() => undefined);
  // The last lines PostgreSQL printed, to explain a failed start.
  const recentLines: string[] = [];
  const remember = (text: string) => {
    for (const line of text.split('\n').map((part) => part.trim()).filter(Boolean)) {
      recentLines.push(line);
      if (recentLines.length > 5) recentLines.shift();
      log(line);
    }
  };

  const password = existsSync(passwordFile) ? (await readFile(passwordFile, 'utf8')).trim() : randomBytes(18).toString('base64url');
  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    await initialise(binaries, clusterDir, password, account, remember);
    await writeFile(passwordFile, password, { mode: 0o600 });
  }

  const ownerFile = path.join(dataDir, 'postgres-owner.pid');
  await stopOrphanedServer(clusterDir, ownerFile, log);
  const port = options.port || (await findFreePort());
  let child: ChildProcess;
  try {
    child = await startServer(binaries, clusterDir, port, account, remember);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    const inUse = /postmaster\.pid|already exists/.test(detail) ? ' Is another gateway already running with this DATA_DIR?' : '';
    throw new Error(`The embedded PostgreSQL in ${clusterDir} did not start.${inUse} (${detail})`);
  }
  await writeFile(ownerFile, String(process.pid));
  // A hard exit (process.exit, an uncaught error) must not leave the server behind.
  const killOnExit = () => child.kill('SIGINT');
  process.once('exit', killOnExit);

  const urlFor = (database: string) => `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  const database = options.database ?? 'gateway';
  let stopped = false;
  const warn = options.warn ?? log;
  let exited!: Promise<void>;
  let restarting: Promise<void> | undefined;
  /** Ends a wait between tries at once (a stop does not wait for it). */
  let endWait: () => void = () => undefined;
  /**
   * A server that stops without being asked to (killed, out of memory, crashed) is started again
   * on the same port and data, waiting longer after each failed try: the services' connection
   * pools reconnect by themselves, so a laptop's gateway recovers without a restart of its own.
   */
  const supervise = (server: ChildProcess) => {
    exited = new Promise<void>((resolve) =>
      server.once('exit', (code, signal) => {
        resolve();
        if (!stopped) restarting = restart(signal ?? `code ${code}`);
      }),
    );
  };
  const restart = async (why: string) => {
    for (let attempt = 0; !stopped; attempt++) {
      const delayMs = RESTART_DELAYS_MS[Math.min(attempt, RESTART_DELAYS_MS.length - 1)];
      warn(`The embedded PostgreSQL stopped without being asked to (${why}): starting it again in ${delayMs} ms.`);
      await new Promise<void>((resolve) => {
        const timer = setTimeout(resolve, delayMs);
        endWait = () => {
          clearTimeout(timer);
          resolve();
        };
      });
      if (stopped) return;
      try {
        child = await startServer(binaries, clusterDir, port, account, remember);
      } catch (error) {
        why = error instanceof Error ? error.message : String(error);
        continue;
      }
      supervise(child);
      warn(`The embedded PostgreSQL runs again on 127.0.0.1:${port}.`);
      return;
    }
  };
  supervise(child);
  const stop = async () => {
    if (stopped) return;
    stopped = true;
    process.removeListener('exit', killOnExit);
    // A start under way ends first, so the server it may have started is the one stopped here.
    endWait();
    await restarting;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
    await exited;
  };
  try {
    await ensureDatabase(urlFor('postgres'), database);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url: urlFor(database), urlFor, stop };
}

/**
 * PostgreSQL runs in a process group of its own, so a gateway killed outright (SIGKILL, the
 * OOM killer) leaves it running; the next start stops that orphan
 * instead of failing on its postmaster.pid. A server whose gateway still runs is left alone.
 */
async function stopOrphanedServer(clusterDir: string, ownerFile: string, log: (text: string) => void): Promise<void> {
  const serverPid = Number((await readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  const ownerPid = Number((await readFile(ownerFile, 'utf8').catch(() => '')).trim());
  if (!serverPid || !ownerPid || !isAlive(serverPid) || isAlive(ownerPid)) return;
  log(`stopping the PostgreSQL (pid ${serverPid}) left running by a gateway that is gone (pid ${ownerPid})`);
  process.kill(serverPid, 'SIGINT');
  for (let waited = 0; isAlive(serverPid) && waited < 30_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** As root: the `postgres` account PostgreSQL runs as (created when missing). Otherwise undefined. */
async function postgresAccount(): Promise<Account | undefined> {
  if (process.getuid?.() !== 0) return undefined;
  const existing = lookUpAccount();
  if (existing) return existing;
  const created =
    spawnSync('groupadd', ['--system', USER]).status === 0 &&
    spawnSync('useradd', ['--system', '--gid', USER, '--no-create-home', '--shell', '/usr/sbin/nologin', USER]).status === 0;
  const account = created ? lookUpAccount() : undefined;
  if (!account) {
    throw new EmbeddedPostgresUnavailableError(
      `PostgreSQL refuses to run as root and there is no "${USER}" user to run it as (creating one failed): create it (useradd --system ${USER}), ${WHAT_TO_DO}.`,
    );
  }
  return account;
}

function lookUpAccount(): Account | undefined {
  const uid = spawnSync('id', ['-u', USER], { encoding: 'utf8' });
  const gid = spawnSync('id', ['-g', USER], { encoding: 'utf8' });
  if (uid.status !== 0 || gid.status !== 0) return undefined;
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Asks the kernel itself (as that user) whether `test <flag> <file>` holds, ACLs included. */
function canAccess(account: Account, flag: '-x' | '-w', file: string): boolean {
  return spawnSync('test', [flag, file], { uid: account.uid, gid: account.gid }).status === 0;
}

async function packagedBinaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform}-${process.arch}`;
  try {
    const { initdb, postgres } = (await import(name)) as Binaries;
    return { initdb, postgres };
  } catch {
    throw new EmbeddedPostgresUnavailableError(
      `There is no embedded PostgreSQL for ${process.platform}-${process.arch} (${name} is not installed): run npm ci, or set DATABASE_URL to a PostgreSQL server of your own.`,
    );
  }
}

/** The package's binaries, or as root a copy of them the `postgres` user can reach. */
async function reachableBinaries(account: Account | undefined): Promise<Binaries> {
  const packaged = await packagedBinaries();
  if (!account || (canAccess(account, '-x', packaged.initdb) && canAccess(account, '-x', packaged.postgres))) return packaged;
  const nativeDir = path.dirname(path.dirname(packaged.initdb));
  const packageFile = path.join(nativeDir, '..', 'package.json');
  const version = existsSync(packageFile) ? (JSON.parse(readFileSync(packageFile, 'utf8')) as { version?: string }).version : undefined;
  const copyDir = path.join(await sharedDir(), `postgres-${version ?? 'unknown'}-${process.platform}-${process.arch}`);
  if (!existsSync(path.join(copyDir, 'bin', path.basename(packaged.postgres)))) {
    // Copied aside and renamed into place, so a concurrent start never runs a half copy.
    const partial = await mkdtemp(path.join(path.dirname(copyDir), '.copy-'));
    await cp(nativeDir, partial, { recursive: true, verbatimSymlinks: true });
    await chmod(partial, 0o755);
    await rename(partial, copyDir).catch(() => rm(partial, { recursive: true, force: true }));
  }
  const copied = { initdb: path.join(copyDir, 'bin', path.basename(packaged.initdb)), postgres: path.join(copyDir, 'bin', path.basename(packaged.postgres)) };
  if (!canAccess(account, '-x', copied.postgres)) {
    throw new EmbeddedPostgresUnavailableError(`The "${USER}" user cannot run PostgreSQL from ${copyDir}: ${WHAT_TO_DO}.`);
  }
  return copied;
}

/**
 * `<dataDir>/postgres`, or as root, when the `postgres` user cannot enter the data folder, a
 * cluster folder under the shared folder that `<dataDir>/postgres` links to (so the data still
 * moves and is found with the data folder).
 */
async function reachableClusterDir(dataDir: string, account: Account | undefined): Promise<string> {
  const entry = path.join(dataDir, 'postgres');
  const linked = lstatSync(entry, { throwIfNoEntry: false })?.isSymbolicLink();
  let clusterDir = linked ? path.resolve(dataDir, await readlink(entry)) : entry;
  if (account && !linked && !canAccess(account, '-x', dataDir)) {
    if (existsSync(path.join(entry, 'PG_VERSION'))) {
      throw new EmbeddedPostgresUnavailableError(
        `The "${USER}" user cannot enter ${dataDir}, which holds the embedded PostgreSQL's data: let it in (chmod o+x on each parent folder), ${WHAT_TO_DO}.`,
      );
    }
    const realDataDir = await realpath(dataDir);
    const id = createHash('sha256').update(realDataDir).digest('hex').slice(0, 16);
    clusterDir = path.join(await sharedDir(), 'clusters', id);
    await mkdir(path.dirname(clusterDir), { recursive: true, mode: 0o755 });
    // Beside the cluster (initdb wants an empty folder): whose it is, once that folder is gone.
    await writeFile(dataDirRecord(clusterDir), `${realDataDir}\n`);
    await rm(entry, { recursive: true, force: true });
    await symlink(clusterDir, entry);
  }
  await mkdir(clusterDir, { recursive: true, mode: 0o700 });
  if (account) {
    await chown(clusterDir, account.uid, account.gid);
    if (!canAccess(account, '-w', clusterDir)) {
      throw new EmbeddedPostgresUnavailableError(`The "${USER}" user cannot write to ${clusterDir}: set DATA_DIR to a folder it can enter, ${WHAT_TO_DO}.`);
    }
  }
  return clusterDir;
}

/** The file beside a shared cluster that names the data folder it belongs to. */
const dataDirRecord = (clusterDir: string) => `${clusterDir}.data-dir`;
const sharedClustersDir = () => path.join(EMBEDDED_POSTGRES_SHARED_DIR, 'clusters');

/** The PostgreSQL running from `clusterDir`, if any, and the gateway that started it. */
async function runningServer(clusterDir: string, ownerFile: string): Promise<{ serverPid: number; ownerPid: number } | undefined> {
  const serverPid = Number((await readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
  if (!serverPid || !isAlive(serverPid)) return undefined;
  return { serverPid, ownerPid: Number((await readFile(ownerFile, 'utf8').catch(() => '')).trim()) };
}

/**
 * Removes a data folder (DATA_DIR) with the embedded PostgreSQL cluster it holds or, as root,
 * links to under /var/lib/inference-gateway/clusters/, which deleting a clone leaves behind.
 * Stops a PostgreSQL its gateway left running; refuses while a gateway runs on the folder.
 * Returns the folders removed.
 */
export async function removeEmbeddedData(dataDir: string, log: (text: string) => void = () => undefined): Promise<string[]> {
  const resolved = path.resolve(dataDir);
  const entry = path.join(resolved, 'postgres');
  const linked = lstatSync(entry, { throwIfNoEntry: false })?.isSymbolicLink();
  const clusterDir = linked ? path.resolve(resolved, await readlink(entry)) : entry;
  const ownerFile = path.join(resolved, 'postgres-owner.pid');
  const running = await runningServer(clusterDir, ownerFile);
  if (running && (!running.ownerPid || isAlive(running.ownerPid))) {
    const owner = running.ownerPid ? `the gateway (pid ${running.ownerPid})` : 'a process this folder does not name';
    throw new Error(`The embedded PostgreSQL (pid ${running.serverPid}) in ${clusterDir} is running for ${owner}: stop it first (Ctrl-C in its terminal), then run this again.`);
  }
  await stopOrphanedServer(clusterDir, ownerFile, log);
  const removed: string[] = [];
  if (linked && path.dirname(clusterDir) === sharedClustersDir()) {
    await rm(clusterDir, { recursive: true, force: true });
    await rm(dataDirRecord(clusterDir), { force: true });
    removed.push(clusterDir);
  }
  if (existsSync(resolved)) {
    await rm(resolved, { recursive: true, force: true });
    removed.push(resolved);
  }
  return removed;
}

/**
 * Removes the shared clusters whose data folder is gone (its clone deleted) or no longer links
 * to them, stopping any PostgreSQL still running from one. A cluster made before its data folder
 * was recorded beside it is left alone and returned under `unknown`: only its owner can tell.
 */
export async function removeOrphanedClusters(log: (text: string) => void = () => undefined): Promise<{ removed: string[]; unknown: string[] }> {
  const removed: string[] = [];
  const unknown: string[] = [];
  const clusters = await readdir(sharedClustersDir(), { withFileTypes: true }).catch(() => []);
  for (const cluster of clusters.filter((candidate) => candidate.isDirectory())) {
    const clusterDir = path.join(sharedClustersDir(), cluster.name);
    const dataDir = (await readFile(dataDirRecord(clusterDir), 'utf8').catch(() => '')).trim();
    if (!dataDir) {
      unknown.push(clusterDir);
      continue;
    }
    const entry = path.join(dataDir, 'postgres');
    const stillLinked = lstatSync(entry, { throwIfNoEntry: false })?.isSymbolicLink() && path.resolve(dataDir, await readlink(entry)) === clusterDir;
    if (stillLinked) continue;
    const serverPid = Number((await readFile(path.join(clusterDir, 'postmaster.pid'), 'utf8').catch(() => '')).split('\n')[0]);
    if (serverPid && isAlive(serverPid)) {
      log(`stopping the PostgreSQL (pid ${serverPid}) of ${dataDir}, which is gone`);
      process.kill(serverPid, 'SIGINT');
      for (let waited = 0; isAlive(serverPid) && waited < 30_000; waited += 100) await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await rm(clusterDir, { recursive: true, force: true });
    await rm(dataDirRecord(clusterDir), { force: true });
    removed.push(clusterDir);
  }
  return { removed, unknown };
}

async function sharedDir(): Promise<string> {
  try {
    await mkdir(EMBEDDED_POSTGRES_SHARED_DIR, { recursive: true, mode: 0o755 });
    const info = await stat(EMBEDDED_POSTGRES_SHARED_DIR);
    // Anyone else able to write there could swap the binaries root starts PostgreSQL from.
    if (info.uid !== 0 || (info.mode & 0o022) !== 0) throw new Error('not owned by root alone');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new EmbeddedPostgresUnavailableError(
      `The "${USER}" user cannot reach this folder and ${EMBEDDED_POSTGRES_SHARED_DIR} cannot hold PostgreSQL instead (${reason}): set DATA_DIR to a folder it can enter, ${WHAT_TO_DO}.`,
    );
  }
  return EMBEDDED_POSTGRES_SHARED_DIR;
}

function spawnAs(file: string, args: string[], account: Account | undefined, detached: boolean): ChildProcess {
  return spawn(file, args, {
    ...(account ?? {}),
    detached,
    windowsHide: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    // English messages: readiness is read from the server's output.
    env: { ...process.env, LC_MESSAGES: 'C' },
  });
}

function cannotRun(file: string, error: Error, account: Account | undefined): Error {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EACCES' && account) {
    return new EmbeddedPostgresUnavailableError(`The "${USER}" user cannot run ${file}: ${WHAT_TO_DO}.`);
  }
  return new Error(`cannot run ${file}: ${error.message}`);
}

async function initialise(binaries: Binaries, clusterDir: string, password: string, account: Account | undefined, log: (text: string) => void): Promise<void> {
  // Beside the cluster, where its user can read it and nobody else can.
  const passwordFile = `${clusterDir}.initdb-password`;
  await writeFile(passwordFile, `${password}\n`, { mode: 0o600 });
  if (account) await chown(passwordFile, account.uid, account.gid);
  try {
    await new Promise<void>((resolve, reject) => {
      const child = spawnAs(
        binaries.initdb,
        [`--pgdata=${clusterDir}`, '--auth=scram-sha-256', `--username=${USER}`, `--pwfile=${passwordFile}`, '--lc-messages=C'],
        account,
        false,
      );
      let errors = '';
      child.stdout!.on('data', (chunk: Buffer) => log(chunk.toString()));
      child.stderr!.on('data', (chunk: Buffer) => {
        errors += chunk.toString();
        log(chunk.toString());
      });
      child.once('error', (error) => reject(cannotRun(binaries.initdb, error, account)));
      child.once('close', (code, signal) => (code === 0 ? resolve() : reject(new Error(`initdb failed (${signal ?? `code ${code}`}): ${errors.trim()}`))));
    });
  } finally {
    await unlink(passwordFile).catch(() => undefined);
  }
}

function startServer(binaries: Binaries, clusterDir: string, port: number, account: Account | undefined, log: (text: string) => void): Promise<ChildProcess> {
  return new Promise((resolve, reject) => {
    const child = spawnAs(
      binaries.postgres,
      ['-D', clusterDir, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
      account,
      // Its own process group: a terminal's Ctrl-C must not stop the database under the services.
      true,
    );
    let output = '';
    child.stdout!.on('data', (chunk: Buffer) => log(chunk.toString()));
    child.stderr!.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      log(text);
      if (output.length < 4_096) output += text;
      if (/ready to accept connections/.test(text) || /ready to accept connections/.test(output)) resolve(child);
    });
    child.once('error', (error) => reject(cannotRun(binaries.postgres, error, account)));
    child.once('exit', (code, signal) => reject(new Error(`exited (${signal ?? `code ${code}`}): ${output.trim().split('\n').slice(-3).join(' ') || 'no output'}`)));
  });
}

export async function ensureDatabase(maintenanceUrl: string, database: string): Promise<void> {
  const client = new Client({ connectionString: maintenanceUrl });
  await client.connect();
  try {
    const { rowCount } = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [database]);
    if (!rowCount) await client.query(`CREATE DATABASE "${database.replace(/"/g, '""')}"`);
  } finally {
    await client.end();
  }
}

/**
 * Ports tried first by findFreePort: below Linux's ephemeral range (32768–60999 by default), where
 * no outgoing connection and no listen(0) of another process is given a port. A port from that
 * range, free when probed, could be taken by either before its user listens on it (seen in the
 * e2e runs: "another program already uses that port").
 */
export const UNASSIGNED_PORTS = { from: 20_000, to: 32_000 };

/** A port free on 127.0.0.1 when probed, for a server to listen on soon after. */
export async function findFreePort(): Promise<number> {
  for (let attempt = 0; attempt < 20; attempt++) {
    const port = UNASSIGNED_PORTS.from + Math.floor(Math.random() * (UNASSIGNED_PORTS.to - UNASSIGNED_PORTS.from));
    if (await listensOn(port)) return port;
  }
  return listenedPort(0);
}

function listensOn(port: number): Promise<boolean> {
  return listenedPort(port).then(
    () => true,
    () => false,
  );
}

/** Listens on the port (0: any the system picks) for a moment and gives back the one it had. */
function listenedPort(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(port, '127.0.0.1', () => {
      const address = probe.address();
      const listened = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(listened));
    });
  });
}
