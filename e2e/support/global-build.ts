import { execFileSync } from 'node:child_process';
import path from 'node:path';

/** Builds dist/: end-to-end tests start the real entry points. */
export default function globalBuild(): void {
  const root = path.resolve(__dirname, '../..');
  execFileSync(process.execPath, [path.join(root, 'tools/build.mjs')], { cwd: root, stdio: 'inherit' });
}
