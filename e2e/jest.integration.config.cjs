// The integration tier (`npm run test:integration`, `npx nx run e2e:integration`): every
// *.integration-spec.ts in the repository, against real PostgreSQL (DATABASE_URL's, else an
// embedded one the global setup starts), Redis when REDIS_URL is set, and BullMQ.
const path = require('node:path');

const root = path.resolve(__dirname, '..');

module.exports = {
  displayName: 'integration',
  preset: path.join(root, 'jest.preset.js'),
  rootDir: root,
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/tools', '<rootDir>/e2e'],
  testMatch: ['**/*.integration-spec.ts'],
  setupFilesAfterEnv: ['<rootDir>/tools/jest/slow-tier-timeout.cjs'],
  globalSetup: '<rootDir>/e2e/support/global-setup.ts',
  globalTeardown: '<rootDir>/e2e/support/global-teardown.ts',
};
