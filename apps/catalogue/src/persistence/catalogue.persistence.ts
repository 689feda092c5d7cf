import type { ServicePersistence } from '@igw/persistence';
import { CatalogueModelEntity } from '../catalogue/catalogue-model.entity';
import { CatalogueRevisionEntity } from '../catalogue/catalogue-revision.entity';
import { CATALOGUE_MIGRATIONS } from './migrations';

export const cataloguePersistence: ServicePersistence = {
  schema: 'catalogue',
  entities: [CatalogueModelEntity, CatalogueRevisionEntity],
  migrations: CATALOGUE_MIGRATIONS,
};
