import { Injectable, Module, type FactoryProvider, type OnApplicationBootstrap } from '@nestjs/common';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { MessagingService, QueueName } from '@igw/messaging';
import { PostgresResponseCacheStore } from './postgres-response-cache-store';
import { RedisResponseCacheStore } from './redis-response-cache-store';
import { ResponseCache } from './response-cache';
import { RESPONSE_CACHE_STORE, type ResponseCacheStore } from './response-cache-store';

/**
 * Redis, shared by every replica, when REDIS_URL is set (connected at start, as the limits'
 * store is, so the first look-up finds it ready); else PostgreSQL, the database the queue runs
 * on, opened on first use: a gateway whose keys never turn the cache on creates no table.
 */
export const responseCacheStoreProvider: FactoryProvider<ResponseCacheStore> = {
  provide: RESPONSE_CACHE_STORE,
  inject: [SERVICE_SETTINGS],
  useFactory: async ({ env, databaseUrl }: ServiceSettings): Promise<ResponseCacheStore> => {
    if (env.REDIS_URL) {
      const store = RedisResponseCacheStore.connect(env.REDIS_URL, env.QUEUE_PREFIX, env.REDIS_COMMAND_TIMEOUT_MS);
      await store.whenReady(5_000);
      return store;
    }
    const url = databaseUrl ?? env.DATABASE_URL;
    if (!url) throw new Error('The response cache needs REDIS_URL or DATABASE_URL (the queue needs one of them as well).');
    return new OpenedOnFirstUse('postgres', () => PostgresResponseCacheStore.open(url));
  },
};

/** A store opened by its first call; an opening that fails is tried again by the next call. */
class OpenedOnFirstUse implements ResponseCacheStore {
  private opening: Promise<ResponseCacheStore> | undefined;

  constructor(
    readonly backend: ResponseCacheStore['backend'],
    private readonly open: () => Promise<ResponseCacheStore>,
  ) {}

  get: ResponseCacheStore['get'] = (address) => this.store().then((store) => store.get(address));
  set: ResponseCacheStore['set'] = (...args) => this.store().then((store) => store.set(...args));
  invalidate: ResponseCacheStore['invalidate'] = (invalidation) => this.store().then((store) => store.invalidate(invalidation));

  async close(): Promise<void> {
    const opening = this.opening;
    this.opening = undefined;
    if (opening) await (await opening.catch(() => undefined))?.close();
  }

  private store(): Promise<ResponseCacheStore> {
    this.opening ??= this.open().catch((error: unknown) => {
      this.opening = undefined;
      throw error;
    });
    return this.opening;
  }
}

/** Billing's DELETE /admin/v1/cache, asked of whichever gateway takes the job: the store is one for all. */
@Injectable()
export class ResponseCacheInvalidations implements OnApplicationBootstrap {
  constructor(
    private readonly messaging: MessagingService,
    private readonly cache: ResponseCache,
  ) {}

  onApplicationBootstrap(): void {
    this.messaging.consume(QueueName.GatewayRpc, { 'cache.invalidate': async (invalidation) => ({ removed: await this.cache.invalidate(invalidation) }) }, 4);
  }
}

/** The response cache's store and its invalidations (AnswerCache, beside the pipeline, uses it on the request path). */
@Module({
  providers: [responseCacheStoreProvider, ResponseCache, ResponseCacheInvalidations],
  exports: [ResponseCache],
})
export class ResponseCacheModule {}
