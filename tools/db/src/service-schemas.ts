import type { ServicePersistence } from '@igw/persistence';
import { billingPersistence } from '../../../apps/billing/src/persistence/billing.persistence';
import { cataloguePersistence } from '../../../apps/catalogue/src/persistence/catalogue.persistence';

/** Every service that owns tables, with the folder its migrations live in. */
export const SERVICE_SCHEMAS: Record<string, { persistence: ServicePersistence; migrationsDir: string }> = {
  billing: { persistence: billingPersistence, migrationsDir: 'apps/billing/src/persistence/migrations' },
  catalogue: { persistence: cataloguePersistence, migrationsDir: 'apps/catalogue/src/persistence/migrations' },
};
