// Usage: DATABASE_URL=postgres://... node dist/tools/db/src/migrate.js   (npm run db:migrate)
// Brings every service's schema (billing, catalogue) up to date, then exits. Services also
// migrate at start, under the same advisory lock; a deployment runs this first (the Helm
// chart's pre-install/pre-upgrade Job, docker-compose's `migrate`) so that a new release's
// schema is in place before any of its pods, old or new, serves on it.
import { Logger } from '@nestjs/common';
import { createServiceDataSource, runServiceMigrations } from '@igw/persistence';
import { loadEnvironment, requireDistributedSetting, waitForDependencies } from '@igw/config';
import { serviceLogger } from '@igw/observability';
import { SERVICE_SCHEMAS } from './service-schemas';

async function main(): Promise<void> {
  const { env } = loadEnvironment();
  serviceLogger(env.LOG_LEVEL);
  const logger = new Logger('migrate');
  const databaseUrl = requireDistributedSetting(env.DATABASE_URL, 'DATABASE_URL', 'migrations run on the database of billing and catalogue');
  // The queue plays no part here: wait for PostgreSQL alone.
  await waitForDependencies({ DATABASE_URL: databaseUrl, REDIS_URL: undefined, DEPENDENCY_WAIT_MS: env.DEPENDENCY_WAIT_MS });
  for (const [service, { persistence }] of Object.entries(SERVICE_SCHEMAS)) {
    // Two connections: one holds the migration lock while the other migrates.
    const dataSource = createServiceDataSource(databaseUrl, persistence, 2);
    await dataSource.initialize();
    try {
      const applied = await runServiceMigrations(dataSource);
      logger.log(applied.length > 0 ? `${service}: applied ${applied.join(', ')}` : `${service}: schema already up to date`);
    } finally {
      await dataSource.destroy();
    }
  }
}

main().catch((error: unknown) => {
  new Logger('migrate').error(error instanceof Error ? error.message : String(error));
  process.exit(1);
});
