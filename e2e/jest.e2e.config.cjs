// The e2e tier (`npm run test:e2e`, `npx nx run e2e:e2e`): e2e/*.e2e-spec.ts start the services
// as whole processes from dist/, which the global setup builds before it picks PostgreSQL.
const path = require('node:path');

const root = path.resolve(__dirname, '..');

module.exports = {
  displayName: 'e2e',
  preset: path.join(root, 'jest.preset.js'),
  rootDir: root,
  roots: ['<rootDir>/e2e'],
  testMatch: ['<rootDir>/e2e/*.e2e-spec.ts'],
  setupFilesAfterEnv: ['<rootDir>/tools/jest/slow-tier-timeout.cjs'],
  globalSetup: '<rootDir>/e2e/support/global-setup.ts',
  globalTeardown: '<rootDir>/e2e/support/global-teardown.ts',
};
