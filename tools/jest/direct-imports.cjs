// Jest transform: SWC (as the preset configures it), after rewriting each named import from an
// @igw/* library (`import { a, b } from '@igw/http'`) into imports of the files that export
// those names. Jest evaluates every module again for each spec file; through the index files
// every spec would load the whole library (Nest's HTTP stack, Swagger, OpenTelemetry, every
// DTO) whatever it uses, and that loading was most of a unit run. The modules are the same
// files the index re-exports, so the code under test is unchanged; the build, the integration
// and the e2e tiers still load the index files as the services do.
// A name this file cannot place (an unusual export form) keeps its import from the index, which
// is slower but loads the same module.
const { createHash } = require('node:crypto');
const { existsSync, readFileSync } = require('node:fs');
const path = require('node:path');
const swcJest = require('@swc/jest');
const { compilerOptions } = require('../../tsconfig.base.json');

const root = path.resolve(__dirname, '../..');

function resolveSource(fromFile, specifier) {
  const base = path.resolve(path.dirname(fromFile), specifier);
  for (const candidate of [`${base}.ts`, path.join(base, 'index.ts')]) if (existsSync(candidate)) return candidate;
  return undefined;
}

/** Every name `file` exports, with the file it is declared or re-exported from (never an index). */
function exportedNames(file, names = new Map(), seen = new Set()) {
  if (seen.has(file)) return names;
  seen.add(file);
  // Comments out, so a commented-out export is not taken for one.
  const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//g, '').replace(/^\s*\/\/.*$/gm, '');
  const place = (name, from) => {
    if (!names.has(name)) names.set(name, from);
  };
  for (const match of text.matchAll(/^export\s+(?:declare\s+)?(?:abstract\s+)?(?:async\s+)?(?:const\s+enum|const|let|var|function\*?|class|interface|type|enum|namespace)\s+([A-Za-z_$][\w$]*)/gm)) {
    place(match[1], file);
  }
  for (const match of text.matchAll(/^export\s+(type\s+)?\{([^}]*)\}\s*(?:from\s+['"]([^'"]+)['"])?/gm)) {
    const source = match[3];
    // A re-export from a relative file: the name is importable from this file, which loads only that one.
    if (source && !source.startsWith('.')) continue;
    for (const specifier of match[2].split(',').map((part) => part.trim()).filter(Boolean)) {
      const exported = specifier.replace(/^type\s+/, '').split(/\s+as\s+/).pop().trim();
      place(exported, file);
    }
  }
  for (const match of text.matchAll(/^export\s+\*\s+from\s+['"](\.[^'"]+)['"]/gm)) {
    const target = resolveSource(file, match[1]);
    if (target) exportedNames(target, names, seen);
  }
  return names;
}

/** For each @igw/* alias: the name → file map of what its index exports, entry by entry. */
function libraryExports() {
  const libraries = new Map();
  for (const [alias, [indexPath]] of Object.entries(compilerOptions.paths)) {
    const index = path.join(root, indexPath);
    const names = new Map();
    const text = readFileSync(index, 'utf8');
    // Each entry of the index separately: an index's own `export { a } from './x'` points at x.
    for (const match of text.matchAll(/^export\s+(?:\*|(?:type\s+)?\{[^}]*\})\s+from\s+['"](\.[^'"]+)['"]/gm)) {
      const target = resolveSource(index, match[1]);
      if (!target) continue;
      const all = exportedNames(target);
      const braces = /^export\s+(?:type\s+)?\{([^}]*)\}/.exec(match[0]);
      const wanted = braces
        ? braces[1].split(',').map((part) => part.trim().replace(/^type\s+/, '')).filter(Boolean).map((part) => part.split(/\s+as\s+/))
        : [...all.keys()].map((name) => [name]);
      // An index entry names a file: importing it loads that file and what it imports, so it is the target.
      for (const [local, exported = local] of wanted) if (!names.has(exported.trim()) && all.has(local.trim())) names.set(exported.trim(), target);
    }
    libraries.set(alias, names);
  }
  return libraries;
}

const libraries = libraryExports();
const mapKey = createHash('sha256')
  .update(JSON.stringify([...libraries].map(([alias, names]) => [alias, [...names].map(([name, file]) => [name, path.relative(root, file)])])))
  .update(readFileSync(__filename))
  .digest('hex');

const NAMED_IMPORT = /^import\s+\{([^}]*)\}\s+from\s+'(@igw\/[a-z-]+)';?/gm;

function rewrite(source) {
  return source.replace(NAMED_IMPORT, (statement, list, alias) => {
    const names = libraries.get(alias);
    if (!names) return statement;
    const byFile = new Map();
    const types = [];
    const unplaced = [];
    for (const specifier of list.split(',').map((part) => part.trim()).filter(Boolean)) {
      if (specifier.startsWith('type ')) {
        types.push(specifier);
        continue;
      }
      const file = names.get(specifier.split(/\s+as\s+/)[0].trim());
      if (!file) unplaced.push(specifier);
      else byFile.set(file, [...(byFile.get(file) ?? []), specifier]);
    }
    const statements = [...byFile].map(([file, specifiers]) => `import { ${specifiers.join(', ')} } from ${JSON.stringify(file.replace(/\.ts$/, ''))};`);
    if (unplaced.length) statements.push(`import { ${unplaced.join(', ')} } from '${alias}';`);
    // Type-only: compiled away, never loaded.
    if (types.length) statements.push(`import type { ${types.map((specifier) => specifier.replace(/^type\s+/, '')).join(', ')} } from '${alias}';`);
    // As many lines as the original statement, so stack traces point at the right lines.
    return statements.join(' ') + '\n'.repeat(statement.split('\n').length - 1);
  });
}

module.exports = {
  createTransformer(options) {
    const swc = swcJest.createTransformer(options);
    return {
      ...swc,
      process(source, filename, transformOptions) {
        return swc.process(filename.endsWith('.ts') ? rewrite(source) : source, filename, transformOptions);
      },
      getCacheKey(source, filename, transformOptions) {
        return createHash('sha256').update(swc.getCacheKey(source, filename, transformOptions)).update(mapKey).digest('hex');
      },
    };
  },
};
