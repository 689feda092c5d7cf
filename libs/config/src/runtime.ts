import { Logger } from '@nestjs/common';
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
}

/**
 * What a service that never checks the admin token (the internet-facing gateway, decisions)
 * holds of its settings, whatever it was handed (the standalone app has the token at hand):
 * the admin token cannot leak from a process, a heap dump or a module that does not have it.
 */
export function withoutAdminToken(settings: ServiceSettings): ServiceSettings {
  const { ADMIN_TOKEN: _dropped, ...env } = settings.env;
  return { env, providers: settings.providers, databaseUrl: settings.databaseUrl, queue: settings.queue };
}

/** The gateway and decisions started alone do not read ADMIN_TOKEN: one left in their environment is a secret exposed for nothing. */
export function warnOfUnusedAdminToken(service: string, env: Pick<Environment, 'ADMIN_TOKEN'>): void {
  if (env.ADMIN_TOKEN) new Logger(service).warn(`ADMIN_TOKEN is set, but the ${service} does not use it: remove it from this service's environment (only billing and the catalogue check it).`);
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
