// The e2e specs whose result depends on the run's database and queue (`npm run test:e2e` runs
// them, then the Nx target e2e:e2e-backend-independent the rest): every e2e/*.e2e-spec.ts but
// those tagged @backend-independent (e2e/support/backend-independent.cjs).
const e2e = require('./jest.e2e.config.cjs');
const { backendIndependentSpecs } = require('./support/backend-independent.cjs');

const escape = (text) => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

module.exports = {
  ...e2e,
  testPathIgnorePatterns: ['/node_modules/', ...backendIndependentSpecs().map((file) => `^${escape(file)}$`)],
};
