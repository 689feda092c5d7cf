// The e2e specs tagged @backend-independent (e2e/support/backend-independent.cjs), run by the
// cached Nx target e2e:e2e-backend-independent. They need dist/ built and no test database.
const e2e = require('./jest.e2e.config.cjs');
const { backendIndependentSpecs } = require('./support/backend-independent.cjs');

const specs = backendIndependentSpecs();

module.exports = {
  ...e2e,
  displayName: 'e2e (backend-independent)',
  // None tagged: a pattern no file matches (an empty testMatch would match every file).
  testMatch: specs.length ? specs : ['<rootDir>/e2e/no-backend-independent-specs'],
  globalSetup: '<rootDir>/e2e/support/global-build.ts',
  globalTeardown: undefined,
  passWithNoTests: true,
};
