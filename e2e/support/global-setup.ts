import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
// Jest's global setup runs outside its module mapper, so the libs are reached by path.
// eslint-disable-next-line @nx/enforce-module-boundaries
import { startEmbeddedPostgres } from '../../libs/persistence/src/embedded-postgres';
import { TEST_DATABASE_SERVER_VARIABLE } from '../../tools/testing/src/constants';
import globalBuild from './global-build';

/**
 * Builds dist/ (end-to-end tests start the real entry points) and picks the PostgreSQL
 * server tests make their databases on: DATABASE_URL's, else an embedded one.
 */
export default async function globalSetup(): Promise<void> {
  globalBuild();
  if (process.env.DATABASE_URL) {
    process.env[TEST_DATABASE_SERVER_VARIABLE] = process.env.DATABASE_URL;
    return;
  }
  const dataDir = await mkdtemp(path.join(tmpdir(), 'igw-test-pg-'));
  const server = await startEmbeddedPostgres({ dataDir, database: 'postgres' });
  process.env[TEST_DATABASE_SERVER_VARIABLE] = server.url;
  (globalThis as { __embeddedPostgres?: { stop(): Promise<void>; dataDir: string } }).__embeddedPostgres = { stop: server.stop, dataDir };
}
