// Compiles every app, lib and tool to dist/ with SWC (about a second), rewriting the
// @igw/* path aliases into relative requires so plain `node` runs the output.
// Type checking is a separate step (`npm run typecheck`).
// dist/ is never wiped and a file is written only when its content changed, so several
// `npm run start:*` running at once (each builds first) never see a half-built tree.
// dist/.build-manifest.json remembers each source's size and mtime: a source that has not
// changed since it was compiled (with the same build configuration) is not compiled again, so
// `npm run cli` and `npm run reconcile` on a current dist/ cost a directory walk, not a build.
import { createHash } from 'node:crypto';
import { access, mkdir, readdir, readFile, rename, stat, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { swcOptions, root } = require('./swc-options.cjs');

const SOURCE_DIRS = ['apps', 'libs', 'tools'];
// The admin console's browser code: bundled by esbuild below, never compiled for Node.
const CONSOLE_SOURCE = path.join(root, 'apps/billing/console');
const CONSOLE_BUNDLE = path.join(root, 'dist/apps/billing/console');
// .lua: the Redis limit store's scripts, read beside their module at run time.
const ASSET_EXTENSIONS = new Set(['.yaml', '.yml', '.json', '.lua']);
const outDir = path.join(root, 'dist');

async function* walk(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules' && full !== CONSOLE_SOURCE) yield* walk(full);
    } else {
      yield full;
    }
  }
}

// Specs of every tier and their helpers (*.testing.ts) stay out of dist.
const isCompiled = (file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !/[.-]spec\.ts$/.test(file) && !file.endsWith('.testing.ts');
const isAsset = (file) => ASSET_EXTENSIONS.has(path.extname(file)) && !file.endsWith('project.json') && !file.endsWith('package.json') && !/tsconfig.*\.json$/.test(file);

async function writeIfChanged(file, content) {
  const existing = await readFile(file).catch(() => undefined);
  if (existing && existing.equals(Buffer.from(content))) return;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

const options = swcOptions({ resolvePaths: true });
const exists = (file) => access(file).then(() => true, () => false);
let swcModule;
const swc = () => (swcModule ??= import('@swc/core'));
const manifestFile = path.join(outDir, '.build-manifest.json');
// Anything that changes the output of every file: the SWC options (paths included), this
// script, and the SWC version.
const configKey = createHash('sha256')
  .update(JSON.stringify(options))
  .update(await readFile(new URL(import.meta.url)))
  .update(await readFile(require.resolve('@swc/core/package.json')))
  .digest('hex');
const previous = await readFile(manifestFile, 'utf8')
  .then((text) => JSON.parse(text))
  .catch(() => undefined);
const known = previous?.configKey === configKey ? previous.sources : {};
const sources = {};
const jobs = [];
for (const dir of SOURCE_DIRS) {
  for await (const file of walk(path.join(root, dir))) {
    const target = path.join(outDir, path.relative(root, file));
    if (!isCompiled(file) && !isAsset(file)) continue;
    const relative = path.relative(root, file);
    // Stat before reading: an edit during the build changes the mtime, so the next build redoes it.
    const info = await stat(file);
    const signature = `${info.size}:${info.mtimeMs}`;
    sources[relative] = signature;
    const output = isCompiled(file) ? target.replace(/\.ts$/, '.js') : target;
    if (known[relative] === signature && (await exists(output))) continue;
    if (isCompiled(file)) {
      // Loaded only when something is to be compiled: on a current dist/ it is most of the cost.
      const { transformFile } = await swc();
      jobs.push(
        transformFile(file, { ...options, filename: file, sourceFileName: path.relative(path.dirname(target), file) }).then(async (out) => {
          const js = target.replace(/\.ts$/, '.js');
          await writeIfChanged(js, `${out.code}\n//# sourceMappingURL=${path.basename(js)}.map\n`);
          if (out.map) await writeIfChanged(`${js}.map`, out.map);
        }),
      );
    } else if (isAsset(file)) {
      jobs.push(readFile(file).then((content) => writeIfChanged(target, content)));
    }
  }
}
await Promise.all(jobs);
await bundleConsole();
if (jobs.length > 0 || Object.keys(known).length !== Object.keys(sources).length) {
  // Renamed into place, so a concurrent build never reads half a manifest.
  const temporary = `${manifestFile}.${process.pid}.tmp`;
  await mkdir(outDir, { recursive: true });
  await writeFile(temporary, JSON.stringify({ configKey, sources }));
  await rename(temporary, manifestFile);
}
if (process.env.BUILD_REPORT === '1') process.stdout.write(`build: ${jobs.length} of ${Object.keys(sources).length} files compiled or copied\n`);

/**
 * The admin console billing serves at /console/: Preact and Chart.js bundled with the console's
 * code into one script and one stylesheet, so the page loads nothing from another host. Rebuilt
 * only when its sources, the bundled packages or this script change.
 */
async function bundleConsole() {
  const inputs = [];
  for await (const file of walk(path.join(CONSOLE_SOURCE, 'src'))) inputs.push(file);
  inputs.sort();
  const hash = createHash('sha256').update(await readFile(new URL(import.meta.url)));
  for (const file of inputs) hash.update(file).update(await readFile(file));
  for (const name of ['esbuild', 'preact', 'chart.js']) hash.update(await readFile(path.join(root, 'node_modules', name, 'package.json')));
  const key = hash.digest('hex');
  const keyFile = path.join(CONSOLE_BUNDLE, '.bundle-key');
  const outputs = ['app.js', 'app.css'].map((name) => path.join(CONSOLE_BUNDLE, name));
  if ((await readFile(keyFile, 'utf8').catch(() => '')) === key && (await Promise.all(outputs.map(exists))).every(Boolean)) return;
  const esbuild = await import('esbuild');
  const result = await esbuild.build({
    entryPoints: { app: path.join(CONSOLE_SOURCE, 'src/main.tsx') },
    bundle: true,
    minify: true,
    format: 'iife',
    target: ['chrome120', 'firefox120'],
    jsx: 'automatic',
    jsxImportSource: 'preact',
    legalComments: 'linked',
    define: { 'process.env.NODE_ENV': '"production"' },
    write: false,
    outdir: CONSOLE_BUNDLE,
    logLevel: 'warning',
  });
  for (const output of result.outputFiles) await writeIfChanged(output.path, output.contents);
  await writeIfChanged(keyFile, key);
}
