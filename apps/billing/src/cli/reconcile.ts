// `npm run reconcile` (or `node dist/apps/billing/src/cli/reconcile.js` with DATABASE_URL set):
// prints the balance-vs-ledger report; exit 0 all agree, 1 mismatches, 2 could not check.
import { runReconcile } from './reconcile-command';

const exit = (code: number): void => {
  // Let buffered output reach a pipe before exiting.
  process.stdout.write('', () => process.stderr.write('', () => process.exit(code)));
};

runReconcile({ stdout: process.stdout, stderr: process.stderr, env: process.env }).then(exit, (error: unknown) => {
  process.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
  exit(2);
});
