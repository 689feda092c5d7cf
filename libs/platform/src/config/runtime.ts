import type { QueueBackendOptions } from '@igw/messaging';
import type { Environment } from './environment';
import { EnvironmentError } from './environment';

export const SERVICE_SETTINGS = Symbol('SERVICE_SETTINGS');

/** Settings resolved once at start and handed to each service's root module. */
export interface ServiceSettings {
  env: Environment;
  /** Upstream provider variables, e.g. { OPENAI_API_KEY: '...' }. */
  providers: Record<string, string>;
  /** Set for services that own tables (billing, catalogue). */
  databaseUrl?: string;
  queue: QueueBackendOptions;
  adminToken?: string;
}

/** BullMQ on Redis when REDIS_URL is set, else on the PostgreSQL of `databaseUrl`. */
export function resolveQueueBackend(env: Environment, databaseUrl: string | undefined): QueueBackendOptions {
  if (env.REDIS_URL) return { kind: 'redis', url: env.REDIS_URL, prefix: env.QUEUE_PREFIX };
  if (databaseUrl) return { kind: 'postgres', url: databaseUrl, schema: env.QUEUE_SCHEMA };
  throw new EnvironmentError('Set REDIS_URL (or DATABASE_URL for BullMQ on PostgreSQL): the services talk over BullMQ.');
}

/** For a service started alone (distributed mode): every setting must come from the environment. */
export function requireDistributedSetting<T>(value: T | undefined, name: string, why: string): T {
  if (value === undefined || value === '') throw new EnvironmentError(`${name} is required when a service starts alone: ${why}`);
  return value;
}
