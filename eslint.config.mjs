// Flat config for the whole monorepo: `npm run lint` (Nx's cached `workspace:lint`, `eslint . --max-warnings 0`).
// Type-aware rules are deliberately not enabled, to keep a CI lint run to a few seconds.
import nx from '@nx/eslint-plugin';
import { createProjectGraphAsync } from '@nx/devkit';
import { defineConfig } from 'eslint/config';
import prettier from 'eslint-config-prettier/flat';
import tseslint from 'typescript-eslint';

// @nx/enforce-module-boundaries only reads the *cached* project graph (.nx/workspace-data);
// with no cache (a fresh clone in CI) it prints a notice and silently checks nothing. Building
// the graph here (no daemon, incremental) makes every lint run enforce fresh boundaries. Not
// while Nx itself builds the graph (its ESLint plugin reads this file: building it here would wait
// on itself), nor in a lint task Nx runs (Nx has just built and cached it).
const insideNx = globalThis.NX_GRAPH_CREATION || process.env.NX_TASK_TARGET_PROJECT;
if (!insideNx) await createProjectGraphAsync({ exitOnError: true });

// Tags on two axes (see each project.json): scope:* says whose code it is, type:* what it is.
// Every constraint whose sourceTag a project has must hold; every project matches a type:* one.
const depConstraints = [
  // type axis
  { sourceTag: 'type:contracts', onlyDependOnLibsWithTags: ['type:contracts'] },
  // The validation engine and the JSON encoder: below the DTOs, importing none of them.
  { sourceTag: 'layer:engine', onlyDependOnLibsWithTags: ['layer:engine'] },
  { sourceTag: 'type:domain', onlyDependOnLibsWithTags: ['type:domain'] },
  // The tokenizer and its worker pool: beside domain, neither importing the other (pricing needs no tokenizer).
  { sourceTag: 'type:tokenizer', onlyDependOnLibsWithTags: ['type:tokenizer'] },
  { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib', 'type:contracts', 'type:domain', 'type:tokenizer'] },
  { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib', 'type:contracts', 'type:domain', 'type:tokenizer'] },
  // apps/standalone composes the four service apps in one process (and, in demo mode, the emulator tool).
  { sourceTag: 'type:composer', onlyDependOnLibsWithTags: ['type:app', 'type:tool', 'type:lib', 'type:contracts', 'type:domain', 'type:tokenizer'] },
  { sourceTag: 'type:tool', onlyDependOnLibsWithTags: ['type:tool', 'type:app', 'type:lib', 'type:contracts', 'type:domain', 'type:tokenizer'] },
  // tools/testing: the helpers the integration and e2e specs share, on the libraries only.
  { sourceTag: 'type:testing', onlyDependOnLibsWithTags: ['type:lib', 'type:contracts', 'type:domain', 'type:tokenizer'] },
  { sourceTag: 'type:e2e', onlyDependOnLibsWithTags: ['*'] },
  // scope axis
  { sourceTag: 'scope:shared', onlyDependOnLibsWithTags: ['scope:shared'] },
  { sourceTag: 'scope:gateway', onlyDependOnLibsWithTags: ['scope:gateway', 'scope:shared'] },
  { sourceTag: 'scope:catalogue', onlyDependOnLibsWithTags: ['scope:catalogue', 'scope:shared'] },
  { sourceTag: 'scope:billing', onlyDependOnLibsWithTags: ['scope:billing', 'scope:shared'] },
  { sourceTag: 'scope:decisions', onlyDependOnLibsWithTags: ['scope:decisions', 'scope:shared'] },
  {
    sourceTag: 'scope:standalone',
    onlyDependOnLibsWithTags: ['scope:standalone', 'scope:gateway', 'scope:catalogue', 'scope:billing', 'scope:decisions', 'scope:tooling', 'scope:shared'],
  },
  { sourceTag: 'scope:tooling', onlyDependOnLibsWithTags: ['*'] },
];

// The Nx rule rejects, before it ever looks at tags, (a) any import of an application project
// and (b) any relative import that lands in another project. The sanctioned imports of an app
// are listed here per importing folder, each through the app's entry point (@igw/<app>-app,
// @igw/emulator), never by a relative path into its sources. An `allow` entry skips every
// check for the imports it matches; those that are neither `x/*` nor `x/**` are regular
// expressions on the import string.
const boundaries = (allow = []) => [
  'error',
  {
    enforceBuildableLibDependency: false,
    allowCircularSelfDependency: false,
    banTransitiveDependencies: false,
    checkDynamicDependenciesExceptions: [],
    depConstraints,
    allow,
  },
];

export default defineConfig(
  {
    ignores: ['**/dist/', '**/node_modules/', '.nx/', '**/coverage/', '**/.data/', 'bench-results/', '**/*.js', '**/*.mjs', '**/*.cjs'],
  },
  tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': boundaries(),
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-unused-vars': [
        'error',
        { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrorsIgnorePattern: '^_', ignoreRestSiblings: true },
      ],
      // Not enabled on purpose: @typescript-eslint/consistent-type-imports. Nest's DI reads
      // constructor parameter types via emitDecoratorMetadata, which needs runtime imports.
      eqeqeq: ['error', 'always'],
      'no-console': 'error',
    },
  },
  {
    files: ['tools/**/*.ts', '**/main.ts'],
    rules: { 'no-console': 'off' },
  },
  // tools/db reads the services' persistence declarations (entities + migrations) to generate migrations.
  {
    files: ['tools/db/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': boundaries(['^@igw/(billing|catalogue|gateway)-app$']) },
  },
  // tools/bench drives the upstream emulator in-process.
  {
    files: ['tools/bench/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': boundaries(['^(\\.\\./)+emulator/src/']) },
  },
  // apps/standalone wires the four service apps into one process; its demo mode starts the emulator.
  {
    files: ['apps/standalone/**/*.ts'],
    rules: {
      '@nx/enforce-module-boundaries': boundaries(['^@igw/(gateway|catalogue|billing|decisions)-app$', '^@igw/emulator$']),
    },
  },
  // An app's integration specs, beside its code, use the shared test helpers and start the emulator.
  {
    files: ['apps/**/*.integration-spec.ts'],
    rules: { '@nx/enforce-module-boundaries': boundaries(['^@igw/testing$', '^@igw/emulator$']) },
  },
  // Cross-service tests start the apps as processes, and the tools (the emulator, the migration
  // checks) in-process.
  {
    files: ['e2e/**/*.ts'],
    rules: { '@nx/enforce-module-boundaries': boundaries(['^(\\.\\./)+tools/']) },
  },
  prettier,
);
