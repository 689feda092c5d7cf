import { measureSchemaDrift, type ScratchDatabase } from '@igw/persistence';
import { createTestDatabase } from '@igw/testing';
import { SERVICE_SCHEMAS } from '../../tools/db/src/service-schemas';

/**
 * Migrations are the only way the schema changes (no synchronize), so the entities must
 * need nothing beyond them. On failure: `npm run db:generate -- <service> <Name>`.
 */
describe.each(Object.entries(SERVICE_SCHEMAS))('the %s schema', (_service, { persistence }) => {
  let database: ScratchDatabase;

  beforeAll(async () => {
    database = await createTestDatabase();
  });

  afterAll(async () => {
    await database?.drop();
  });

  it('is fully described by its migrations', async () => {
    const drift = await measureSchemaDrift(database.url, persistence);
    expect(drift.up).toEqual([]);
  });
});

it('gives every owning service a Postgres schema of its own', () => {
  const schemas = Object.values(SERVICE_SCHEMAS).map(({ persistence }) => persistence.schema);
  expect(new Set(schemas).size).toBe(schemas.length);
});
