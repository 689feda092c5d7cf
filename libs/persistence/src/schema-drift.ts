import { createServiceDataSource, runServiceMigrations, type ServicePersistence } from './service-data-source';

export interface SchemaDrift {
  up: string[];
  down: string[];
}

/**
 * Runs a service's migrations on an empty database and asks TypeORM what it would still
 * change to match the entities. Empty lists mean entities and migrations agree.
 */
export async function measureSchemaDrift(databaseUrl: string, persistence: ServicePersistence): Promise<SchemaDrift> {
  const dataSource = createServiceDataSource(databaseUrl, persistence, 2);
  await dataSource.initialize();
  try {
    await runServiceMigrations(dataSource);
    const sql = await dataSource.driver.createSchemaBuilder().log();
    return {
      up: sql.upQueries.map((query) => query.query),
      down: sql.downQueries.map((query) => query.query).reverse(),
    };
  } finally {
    await dataSource.destroy();
  }
}
