// Any spec of any tier by its path (`npx jest <paths>`), each in its own tier with only that
// tier's global setup: Jest runs a project's globalSetup only when one of that project's tests is
// selected, so a unit spec starts no database and builds nothing.
// The tiers: each project's jest.config.cjs (unit, `npx nx test <project>`),
// e2e/jest.integration.config.cjs and e2e/jest.e2e.config.cjs.
const { readdirSync, existsSync } = require('node:fs');
const path = require('node:path');

const unitProjects = ['apps', 'libs', 'tools'].flatMap((dir) =>
  readdirSync(path.join(__dirname, dir), { withFileTypes: true })
    .filter((entry) => entry.isDirectory())
    .map((entry) => path.join(__dirname, dir, entry.name, 'jest.config.cjs'))
    .filter((config) => existsSync(config))
    // passWithNoTests lets `nx test` pass a project with no specs yet; as a project of this
    // config it is an option Jest warns about on every run, and this run has specs.
    .map((config) => {
      const { passWithNoTests: _passWithNoTests, ...project } = require(config);
      return project;
    }),
);

module.exports = {
  projects: [...unitProjects, '<rootDir>/e2e/jest.integration.config.cjs', '<rootDir>/e2e/jest.e2e.config.cjs'],
  // Options Jest takes from the top-level config only, as the preset sets them for the unit tier
  // (the integration and e2e tiers raise the timeout in tools/jest/slow-tier-timeout.cjs).
  maxWorkers: 2,
  testTimeout: 30_000,
};
