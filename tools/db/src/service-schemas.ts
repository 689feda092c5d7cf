import type { ServicePersistence } from '@igw/persistence';
import { billingPersistence } from '@igw/billing-app';
import { cataloguePersistence } from '@igw/catalogue-app';
import { gatewayPersistence } from '@igw/gateway-app';

/** Every service that owns tables, with the folder its migrations live in. */
export const SERVICE_SCHEMAS: Record<string, { persistence: ServicePersistence; migrationsDir: string }> = {
  billing: { persistence: billingPersistence, migrationsDir: 'apps/billing/src/persistence/migrations' },
  catalogue: { persistence: cataloguePersistence, migrationsDir: 'apps/catalogue/src/persistence/migrations' },
  gateway: { persistence: gatewayPersistence, migrationsDir: 'apps/gateway/src/response-cache/migrations' },
};
