import type { ServicePersistence } from '@igw/persistence';
import { GATEWAY_MIGRATIONS } from './response-cache/migrations';
import { ResponseCacheEntryEntity } from './response-cache/response-cache-entry.entity';

/** The gateway's one table, the response cache's when it lives in PostgreSQL (no REDIS_URL). */
export const gatewayPersistence: ServicePersistence = {
  schema: 'gateway',
  entities: [ResponseCacheEntryEntity],
  migrations: GATEWAY_MIGRATIONS,
};
