// One Jest run for the whole monorepo: unit specs sit next to the code (*.spec.ts),
// tests against real Postgres/Redis/BullMQ are *.integration-spec.ts, and tests that
// start whole processes live in e2e/ (*.e2e-spec.ts).
const { swcOptions } = require('./tools/swc-options.cjs');
const { compilerOptions } = require('./tsconfig.base.json');

const moduleNameMapper = Object.fromEntries(
  Object.entries(compilerOptions.paths).map(([alias, [target]]) => [`^${alias}$`, `<rootDir>/${target}`]),
);

// Packages that ship ESM only: music-metadata's dependencies are found by their package.json "type": "module".
const ESM_ONLY_PACKAGES = ['@nestjs', 'music-metadata', 'strtok3', 'token-types', 'file-type', 'media-typer', '@tokenizer', '@borewit', 'uint8array-extras', 'win-guid'];

module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/apps', '<rootDir>/libs', '<rootDir>/tools', '<rootDir>/e2e'],
  testMatch: ['**/*.spec.ts', '**/*.integration-spec.ts', '**/*.e2e-spec.ts'],
  transform: {
    '^.+\\.ts$': ['@swc/jest', { ...swcOptions({ resolvePaths: false }), swcrc: false }],
    // NestJS 12 and music-metadata (with its tokenizer packages) ship ESM only; Node 20 runs them
    // through require(esm), but Jest's module system cannot (before Node 24.9), so Jest compiles
    // them to CommonJS, with Node's interop: a default import of a CommonJS module is its
    // module.exports, even one marked __esModule (music-metadata's `import ContentType from 'content-type'`).
    '^.+\\.m?js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs', importInterop: 'node' }, swcrc: false }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY_PACKAGES.join('|')})/)`],
  resolver: '<rootDir>/tools/jest-resolver.cjs',
  moduleNameMapper,
  maxWorkers: 2,
  testTimeout: 60_000,
  globalSetup: '<rootDir>/e2e/support/global-setup.ts',
  globalTeardown: '<rootDir>/e2e/support/global-teardown.ts',
};
