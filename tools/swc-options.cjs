// One SWC configuration for the build and for Jest, so tests run the code exactly as it ships.
// Decorator metadata is required by NestJS dependency injection, class-validator and Swagger.
const path = require('node:path');
const { compilerOptions } = require('../tsconfig.base.json');

const root = path.resolve(__dirname, '..');

function swcOptions({ resolvePaths }) {
  return {
    jsc: {
      parser: { syntax: 'typescript', decorators: true },
      transform: { legacyDecorator: true, decoratorMetadata: true },
      target: 'es2022',
      keepClassNames: true,
      ...(resolvePaths ? { baseUrl: root, paths: compilerOptions.paths } : {}),
    },
    module: { type: 'commonjs' },
    sourceMaps: true,
  };
}

module.exports = { swcOptions, root };
