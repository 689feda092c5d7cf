import { createHash } from 'node:crypto';
import { DataSource, type EntitySchema, type MixedList } from 'typeorm';

/** What a service declares about the tables it owns. */
export interface ServicePersistence {
  /** The Postgres schema owned by the service; nobody else reads it. */
  schema: string;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  entities: MixedList<Function | string | EntitySchema>;
  // eslint-disable-next-line @typescript-eslint/no-unsafe-function-type
  migrations: MixedList<Function | string>;
}

export function createServiceDataSource(url: string, persistence: ServicePersistence, poolSize = 10): DataSource {
  return new DataSource({
    type: 'postgres',
    url,
    schema: persistence.schema,
    entities: persistence.entities,
    migrations: persistence.migrations,
    migrationsTableName: 'migrations',
    // gen_random_uuid() is built into PostgreSQL 13+; no extension to install.
    uuidExtension: 'pgcrypto',
    synchronize: false,
    migrationsRun: false,
    extra: { max: poolSize },
  });
}

/**
 * Runs the service's pending migrations. A session advisory lock makes concurrent
 * starters (replicas booting together) wait for the first instead of racing it.
 */
export async function runServiceMigrations(dataSource: DataSource): Promise<string[]> {
  const schema = (dataSource.options as { schema?: string }).schema ?? 'public';
  const lockKey = advisoryLockKey(`igw-migrations:${schema}`);
  const runner = dataSource.createQueryRunner();
  await runner.connect();
  try {
    await runner.query('SELECT pg_advisory_lock($1)', [lockKey]);
    await runner.query(`CREATE SCHEMA IF NOT EXISTS "${schema}"`);
    const applied = await dataSource.runMigrations({ transaction: 'each' });
    return applied.map((migration) => migration.name);
  } finally {
    await runner.query('SELECT pg_advisory_unlock($1)', [lockKey]).catch(() => undefined);
    await runner.release();
  }
}

/** Opens the data source and brings its schema up to date. */
export async function openServiceDataSource(url: string, persistence: ServicePersistence, poolSize?: number): Promise<DataSource> {
  const dataSource = createServiceDataSource(url, persistence, poolSize);
  await dataSource.initialize();
  try {
    await runServiceMigrations(dataSource);
  } catch (error) {
    await dataSource.destroy();
    throw error;
  }
  return dataSource;
}

function advisoryLockKey(name: string): string {
  return createHash('sha256').update(name).digest().readBigInt64BE(0).toString();
}
