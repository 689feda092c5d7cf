import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Client } from 'pg';
import { startEmbeddedPostgres } from './embedded-postgres';

export interface ScratchDatabase {
  url: string;
  drop(): Promise<void>;
}

/**
 * A throw-away database: on the server of `serverUrl` when given (e.g. DATABASE_URL),
 * else on an embedded PostgreSQL in a temporary folder.
 */
export async function createScratchDatabase(serverUrl?: string): Promise<ScratchDatabase> {
  if (serverUrl) return createDatabaseOn(serverUrl);
  const dataDir = await mkdtemp(path.join(tmpdir(), 'igw-scratch-'));
  const server = await startEmbeddedPostgres({ dataDir });
  return {
    url: server.url,
    drop: async () => {
      await server.stop();
      await rm(dataDir, { recursive: true, force: true });
    },
  };
}

export async function createDatabaseOn(serverUrl: string, namePrefix = 'igw_scratch'): Promise<ScratchDatabase> {
  const name = `${namePrefix}_${randomBytes(6).toString('hex')}`;
  const admin = new Client({ connectionString: serverUrl });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new Client({ connectionString: serverUrl });
      await client.connect();
      try {
        await client.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await client.end();
      }
    },
  };
}
