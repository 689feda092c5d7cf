// One SWC configuration (the root .swcrc) for tools/build.mjs, for Jest and for Nx's build targets
// (@nx/js:swc), so tests run the code exactly as it ships.
// Decorator metadata is required by NestJS dependency injection, class-validator and Swagger.
const { readFileSync } = require('node:fs');
const path = require('node:path');
const { compilerOptions } = require('../tsconfig.base.json');

const root = path.resolve(__dirname, '..');
// `exclude` keeps specs out of Nx's builds; build.mjs and Jest pick their own files.
const { exclude: _exclude, ...swcrc } = JSON.parse(readFileSync(path.join(root, '.swcrc'), 'utf8'));

function swcOptions({ resolvePaths }) {
  return {
    ...swcrc,
    jsc: { ...swcrc.jsc, ...(resolvePaths ? { baseUrl: root, paths: compilerOptions.paths } : {}) },
    // The options are given whole: no .swcrc is looked up again beside each file.
    swcrc: false,
  };
}

module.exports = { swcOptions, root };
