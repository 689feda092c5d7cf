import { Logger } from '@nestjs/common';
import Redis from 'ioredis';
import { Client } from 'pg';
import type { Environment } from '../environment';

/** A server the service needs did not answer in time; the message names the variable, the address and what to check. */
export class DependencyUnreachableError extends Error {
  override readonly name = 'DependencyUnreachableError';
}

interface Dependency {
  variable: 'DATABASE_URL' | 'REDIS_URL';
  server: string;
  url: string;
  /** Resolves once the server answers; rejects with the reason otherwise. */
  probe(url: string, timeoutMs: number): Promise<void>;
  defaultPort: number;
}

/** Failures that waiting does not cure: the server answered, and said no. */
const FINAL_FAILURE = /password|authenticat|NOAUTH|WRONGPASS|does not exist|no pg_hba|permission denied|ERR invalid|SSL/i;
const RETRY_INTERVAL_MS = 500;
const PROBE_TIMEOUT_MS = 5_000;

/**
 * Waits at most DEPENDENCY_WAIT_MS for the PostgreSQL of DATABASE_URL and the Redis of
 * REDIS_URL to answer (a server started beside the service may come up a little later),
 * then gives up with one message instead of a stack trace or silent retries.
 */
export async function waitForDependencies(env: Pick<Environment, 'DATABASE_URL' | 'REDIS_URL' | 'DEPENDENCY_WAIT_MS'>): Promise<void> {
  const dependencies: Dependency[] = [];
  if (env.DATABASE_URL) dependencies.push({ variable: 'DATABASE_URL', server: 'PostgreSQL', url: env.DATABASE_URL, probe: probePostgres, defaultPort: 5432 });
  if (env.REDIS_URL) dependencies.push({ variable: 'REDIS_URL', server: 'Redis', url: env.REDIS_URL, probe: probeRedis, defaultPort: 6379 });
  const deadline = Date.now() + env.DEPENDENCY_WAIT_MS;
  await Promise.all(dependencies.map((dependency) => waitFor(dependency, deadline, env.DEPENDENCY_WAIT_MS)));
}

async function waitFor(dependency: Dependency, deadline: number, waitMs: number): Promise<void> {
  const address = addressOf(dependency.url, dependency.defaultPort);
  let warned = false;
  for (;;) {
    const reason = await dependency.probe(dependency.url, Math.max(1_000, Math.min(PROBE_TIMEOUT_MS, deadline - Date.now()))).then(
      () => undefined,
      (error: unknown) => describeFailure(error),
    );
    if (reason === undefined) return;
    if (FINAL_FAILURE.test(reason)) {
      throw new DependencyUnreachableError(
        `${dependency.server} at ${address} (${dependency.variable}) refused the connection: ${reason}. Check the user, password and database in ${dependency.variable}.`,
      );
    }
    if (Date.now() + RETRY_INTERVAL_MS >= deadline) {
      throw new DependencyUnreachableError(
        `Cannot reach ${dependency.server} at ${address} (${dependency.variable}): ${reason}. Check that it is running and that ${dependency.variable} names its host and port (gave up after DEPENDENCY_WAIT_MS=${waitMs}).`,
      );
    }
    if (!warned) {
      warned = true;
      new Logger('startup').warn(`waiting for ${dependency.server} at ${address} (${dependency.variable}): ${reason}`);
    }
    await new Promise((resolve) => setTimeout(resolve, RETRY_INTERVAL_MS));
  }
}

/** host:port only: the URL's user and password stay out of every message. */
function addressOf(url: string, defaultPort: number): string {
  try {
    const parsed = new URL(url);
    return `${parsed.hostname || 'localhost'}:${parsed.port || defaultPort}`;
  } catch {
    return 'an unparsable address';
  }
}

function describeFailure(error: unknown): string {
  const code = (error as NodeJS.ErrnoException | undefined)?.code;
  if (code === 'ECONNREFUSED') return 'connection refused';
  if (code === 'ENOTFOUND' || code === 'EAI_AGAIN') return 'host not found';
  if (code === 'ETIMEDOUT') return 'timed out';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'host unreachable';
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\s+/g, ' ').trim() || 'no answer';
}

async function probePostgres(url: string, timeoutMs: number): Promise<void> {
  const client = new Client({ connectionString: url, connectionTimeoutMillis: timeoutMs });
  // A connection the server drops after connect reports here; the failure is the connect call's.
  client.on('error', () => undefined);
  try {
    await client.connect();
    await client.query('SELECT 1');
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function probeRedis(url: string, timeoutMs: number): Promise<void> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: timeoutMs, maxRetriesPerRequest: 0, enableOfflineQueue: false, retryStrategy: () => null });
  let lastError: unknown;
  redis.on('error', (error) => (lastError = error));
  try {
    await redis.connect();
    await redis.ping();
  } catch (error) {
    throw lastError ?? error;
  } finally {
    redis.disconnect();
  }
}
