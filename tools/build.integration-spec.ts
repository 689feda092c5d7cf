import { execFileSync } from 'node:child_process';
import { readFile, stat, utimes } from 'node:fs/promises';
import path from 'node:path';

// `npm run cli` and `npm run reconcile` build first: on a current dist/ the build must compile
// nothing, and still pick up a source changed since.
const ROOT = path.resolve(__dirname, '..');
const build = (): string =>
  execFileSync(process.execPath, [path.join(ROOT, 'tools/build.mjs')], { cwd: ROOT, env: { ...process.env, BUILD_REPORT: '1' }, encoding: 'utf8' });

describe('tools/build.mjs', () => {
  it('compiles nothing when dist/ is current, and only a source touched since', async () => {
    build();
    expect(build()).toMatch(/^build: 0 of \d+ files compiled or copied\n$/);

    const source = path.join(ROOT, 'tools/cli/src/main.ts');
    const output = path.join(ROOT, 'dist/tools/cli/src/main.js');
    const before = await readFile(output, 'utf8');
    const { atime, mtime } = await stat(source);
    await utimes(source, atime, new Date(mtime.getTime() + 1000));
    expect(build()).toMatch(/^build: 1 of \d+ files compiled or copied\n$/);
    expect(await readFile(output, 'utf8')).toBe(before);
    expect(build()).toMatch(/^build: 0 of /);
  }, 60_000);
});
