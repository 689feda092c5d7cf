import type { ScratchDatabase } from '@igw/persistence';
import { createTestDatabase, queryRows } from '@igw/testing';
import { SERVICE_SCHEMAS } from '../tools/db/src/service-schemas';
import { runNode } from './support/admin-tools-harness';

/**
 * The deployments' migration step (the Helm chart's hook Job, docker-compose's `migrate`):
 * the built command migrates every service's schema on an empty database, then finds
 * nothing to do, and fails with the reason when the database cannot be reached.
 */
describe('db migrate (node dist/tools/db/src/migrate.js)', () => {
  let database: ScratchDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database?.drop();
  });

  const migrationNames = (migrations: unknown) => (migrations as { name: string }[]).map((migration) => migration.name).sort();

  it('applies every migration of billing and the catalogue, then exits 0', async () => {
    const result = await runNode('tools/db/src/migrate.js', [], { DATABASE_URL: database.url });
    expect({ code: result.code, stderr: result.stderr }).toEqual({ code: 0, stderr: '' });
    for (const [service, { persistence }] of Object.entries(SERVICE_SCHEMAS)) {
      const applied = await queryRows<{ name: string }>(database.url, `SELECT name FROM "${persistence.schema}".migrations`);
      expect({ service, applied: applied.map((row) => row.name).sort() }).toEqual({ service, applied: migrationNames(persistence.migrations) });
      expect(result.stdout).toContain(`${service}: applied `);
    }
  });

  it('finds nothing to do on a migrated database', async () => {
    const result = await runNode('tools/db/src/migrate.js', [], { DATABASE_URL: database.url });
    expect(result.code).toBe(0);
    expect(result.stdout).toContain('billing: schema already up to date');
    expect(result.stdout).toContain('catalogue: schema already up to date');
  });

  it('exits 1 naming DATABASE_URL when it is missing or its server does not answer', async () => {
    const missing = await runNode('tools/db/src/migrate.js', [], {});
    expect(missing.code).toBe(1);
    expect(missing.stdout + missing.stderr).toMatch(/DATABASE_URL is required/);
    const unreachable = await runNode('tools/db/src/migrate.js', [], { DATABASE_URL: 'postgres://nobody@127.0.0.1:1/none', DEPENDENCY_WAIT_MS: '500' });
    expect(unreachable.code).toBe(1);
    expect(unreachable.stdout + unreachable.stderr).toMatch(/Cannot reach PostgreSQL at 127\.0\.0\.1:1 \(DATABASE_URL\)/);
  });
});
