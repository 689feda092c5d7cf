// One Jest run for the whole monorepo: unit specs sit next to the code (*.spec.ts),
// tests against real Postgres/Redis/BullMQ are *.integration-spec.ts, and tests that
// start whole processes live in e2e/ (*.e2e-spec.ts).
const { swcOptions } = require('./tools/swc-options.cjs');
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = Object.fromEntries(
  Object.entries(compilerOptions.paths).map(([alias, [target]]) => [`^${alias}$`, `<rootDir>/${target}`]),
);

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/tools', '<rootDir>/e2e'],
  testMatch: ['**/*.spec.ts', '**/*.integration-spec.ts', '**/*.e2e-spec.ts'],
  transform: { '^.+\\.ts$': ['@swc/jest', { ...swcOptions({ resolvePaths: false }), swcrc: false }] },
  moduleNameMapper,
  maxWorkers: 2,
  testTimeout: 60_000,
  globalSetup: '<rootDir>/e2e/support/global-setup.ts',
};
