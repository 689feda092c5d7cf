// Admin CLI entry: `npx igw <command>` (tools/cli/bin/igw.js), `npm run -s cli -- <command>`,
// or `node dist/tools/cli/src/main.js <command>`. Usage text: commands.ts (USAGE), or `npx igw help`.
import { runCli } from './cli';

// `npx igw ... | head -1`: a reader that stops early must not turn into a crash report.
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code !== 'EPIPE') throw error;
  });
}

const exit = (code: number): void => {
  // Let buffered output reach a pipe before exiting.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
};

runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env }).then(exit, (error: unknown) => {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  exit(1);
});
