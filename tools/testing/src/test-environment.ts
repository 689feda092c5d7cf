import { randomBytes } from 'node:crypto';
import { dropRedisNamespace, type QueueBackendOptions } from '@igw/messaging';
import { createDatabaseOn, type ScratchDatabase } from '@igw/persistence';
import { Client } from 'pg';

import { TEST_DATABASE_SERVER_VARIABLE } from './constants';

/** A database of its own for one test file, dropped after: leftovers never decide a result. */
export function createTestDatabase(): Promise<ScratchDatabase> {
  const server = process.env[TEST_DATABASE_SERVER_VARIABLE];
  if (!server) throw new Error(`${TEST_DATABASE_SERVER_VARIABLE} is not set: run the tests through jest (global setup sets it)`);
  return createDatabaseOn(server, 'igw_test');
}

/** A Redis key prefix of its own per test run. */
export function uniqueQueuePrefix(): string {
  return `igwtest${randomBytes(5).toString('hex')}`;
}

/** The queue backend of this test run: Redis when REDIS_URL is set (CI's second pass), else PostgreSQL. */
export function testQueueBackend(databaseUrl: string): QueueBackendOptions {
  return process.env.REDIS_URL
    ? { kind: 'redis', url: process.env.REDIS_URL, prefix: uniqueQueuePrefix() }
    : { kind: 'postgres', url: databaseUrl, schema: 'bullmq' };
}

/** Deletes every Redis key a test run made under its prefix (Postgres queues go with their database). */
export async function dropQueueData(backend: QueueBackendOptions | { prefix?: string; url?: string } | undefined): Promise<void> {
  if (!backend || !('prefix' in backend) || !backend.prefix || !backend.url?.startsWith('redis')) return;
  await dropRedisNamespace(backend.url, backend.prefix);
}

/** Runs one statement on a test database over a connection of its own, and answers its rows. */
export async function queryRows<Row>(databaseUrl: string, text: string, params: unknown[] = []): Promise<Row[]> {
  const client = new Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as Row[];
  } finally {
    await client.end();
  }
}
