// Any spec of any tier by its path (`npx jest <paths>`), through the same global setup as the
// integration and e2e tiers. The tiers themselves: each project's jest.config.cjs (unit,
// `npx nx test <project>`), e2e/jest.integration.config.cjs and e2e/jest.e2e.config.cjs.
const integration = require('./e2e/jest.integration.config.cjs');

module.exports = {
  ...integration,
  displayName: undefined,
  testMatch: ['**/*.spec.ts', '**/*.integration-spec.ts', '**/*.e2e-spec.ts'],
};
