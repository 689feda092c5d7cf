// What every Jest config here shares: SWC with the build's options, the @igw/* aliases, and the
// resolver and transforms the ESM-only packages need. Each project's jest.config.cjs (the unit
// tier, `npx nx test <project>`) and the integration and e2e configs in e2e/ start from it.
const path = require('node:path');
const { swcOptions } = require('./tools/swc-options.cjs');
const { compilerOptions } = require('./tsconfig.base.json');

// Absolute: <rootDir> in a preset is the rootDir of the config that uses it.
const moduleNameMapper = {
  ...Object.fromEntries(Object.entries(compilerOptions.paths).map(([alias, [target]]) => [`^${alias}$`, path.join(__dirname, target)])),
  '^gpt-tokenizer/encoding/o200k_base$': path.join(__dirname, 'tools/jest/o200k-base.cjs'),
};

// Packages that ship ESM only: music-metadata's dependencies are found by their package.json "type": "module".
const ESM_ONLY_PACKAGES = ['@nestjs', 'music-metadata', 'strtok3', 'token-types', 'file-type', 'media-typer', '@tokenizer', '@borewit', 'uint8array-extras', 'win-guid'];

module.exports = {
  testEnvironment: path.join(__dirname, 'tools/jest/node-environment.cjs'),
  testMatch: ['<rootDir>/**/*.spec.ts'],
  transform: {
    // SWC, with named imports of the @igw/* libraries taken from the files that export them (see the file).
    '^.+\\.ts$': [path.join(__dirname, 'tools/jest/direct-imports.cjs'), { ...swcOptions({ resolvePaths: false }), swcrc: false }],
    // NestJS 12 and music-metadata (with its tokenizer packages) ship ESM only; Node 20 runs them
    // through require(esm), but Jest's module system cannot (before Node 24.9), so Jest compiles
    // them to CommonJS, with Node's interop: a default import of a CommonJS module is its
    // module.exports, even one marked __esModule (music-metadata's `import ContentType from 'content-type'`).
    '^.+\\.m?js$': ['@swc/jest', { jsc: { target: 'es2022' }, module: { type: 'commonjs', importInterop: 'node' }, swcrc: false }],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${ESM_ONLY_PACKAGES.join('|')})/)`],
  resolver: path.join(__dirname, 'tools/jest-resolver.cjs'),
  moduleNameMapper,
  maxWorkers: 2,
  // Unit specs run in the process on in-memory fakes; the longest parse megabytes of media, and
  // on a machine other work shares they still finish well inside this.
  testTimeout: 30_000,
};
