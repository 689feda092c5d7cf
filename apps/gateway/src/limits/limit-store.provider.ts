import type { FactoryProvider } from '@nestjs/common';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { InMemoryLimitStore } from './in-memory-limit-store';
import type { LimitStore } from './limit-store.types';
import { RedisLimitStore } from './redis-limit-store';

/** The token of the gateway's LimitStore: override it to run admission on other counters. RequestAdmission closes it on shutdown. */
export const LIMIT_STORE = Symbol('LIMIT_STORE');

/** Redis, shared by every replica, when REDIS_URL is set; else the process's own counters (standalone). */
export const limitStoreProvider: FactoryProvider<LimitStore> = {
  provide: LIMIT_STORE,
  inject: [SERVICE_SETTINGS],
  useFactory: async ({ env }: ServiceSettings): Promise<LimitStore> => {
    if (!env.REDIS_URL) return new InMemoryLimitStore();
    const store = RedisLimitStore.connect(env.REDIS_URL, env.QUEUE_PREFIX, { commandTimeoutMs: env.REDIS_COMMAND_TIMEOUT_MS });
    // The first requests should meet the shared counters, not admission's fallback.
    await store.whenReachable(5_000);
    return store;
  },
};
