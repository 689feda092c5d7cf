// Admin CLI entry: `npm run cli -- <command>` (or `node dist/tools/cli/src/main.js <command>`).
// Usage text: commands.ts (USAGE), or `npm run cli -- help`.
import { runCli } from './cli';

const exit = (code: number): void => {
  // Let buffered output reach a pipe before exiting.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
};

runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then(exit, (error: unknown) => {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  exit(1);
});
