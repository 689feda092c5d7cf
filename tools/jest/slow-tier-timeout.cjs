// The integration and e2e tiers' test timeout. Jest reads `testTimeout` from the top-level config
// only, so when the root jest.config.js runs the tiers as projects a project's own value would be
// ignored; set per test file here, it holds whichever config starts the run.
jest.setTimeout(60_000);
