// Compiles every app, lib and tool to dist/ with SWC (about a second), rewriting the
// @igw/* path aliases into relative requires so plain `node` runs the output.
// Type checking is a separate step (`npm run typecheck`).
// dist/ is never wiped and a file is written only when its content changed, so several
// `npm run start:*` running at once (each builds first) never see a half-built tree.
import { transformFile } from '@swc/core';
import { mkdir, readdir, readFile, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import path from 'node:path';

const require = createRequire(import.meta.url);
const { swcOptions, root } = require('./swc-options.cjs');

const SOURCE_DIRS = ['apps', 'libs', 'tools'];
const ASSET_EXTENSIONS = new Set(['.yaml', '.yml', '.json']);
const outDir = path.join(root, 'dist');

async function* walk(dir) {
  for (const entry of await readdir(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name !== 'node_modules') yield* walk(full);
    } else {
      yield full;
    }
  }
}

// Specs and their helpers (*.testing.ts) stay out of dist.
const isCompiled = (file) => file.endsWith('.ts') && !file.endsWith('.d.ts') && !file.endsWith('.spec.ts') && !file.endsWith('.testing.ts');
const isAsset = (file) => ASSET_EXTENSIONS.has(path.extname(file)) && !file.endsWith('project.json') && !/tsconfig.*\.json$/.test(file);

async function writeIfChanged(file, content) {
  const existing = await readFile(file).catch(() => undefined);
  if (existing && existing.equals(Buffer.from(content))) return;
  await mkdir(path.dirname(file), { recursive: true });
  await writeFile(file, content);
}

const options = swcOptions({ resolvePaths: true });
const jobs = [];
for (const dir of SOURCE_DIRS) {
  for await (const file of walk(path.join(root, dir))) {
    const target = path.join(outDir, path.relative(root, file));
    if (isCompiled(file)) {
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
