// A token counting thread of TokenCountPool: answers each request in order, budget checks
// (`checks`) with their verdicts, texts to count whole (`texts`) with their counts.
import { setPriority } from 'node:os';
import { parentPort } from 'node:worker_threads';
import { countWithinBudget, type BudgetCheck } from './token-budget';
import { countTokens } from './token-estimate';

// The lowest priority, for this thread alone (on Linux a nice value is a thread's own): where the
// counting shares a core with the event loop (one core, a CPU limit, the bench's pinning), a
// request's answer arriving wakes the loop at once instead of waiting out a count's time slice.
// Where the loop idles, the count still gets the whole core.
try {
  setPriority(19);
} catch {
  // A platform that refuses leaves the thread at the process's priority.
}

parentPort!.on('message', ({ checks, texts }: { checks?: BudgetCheck[]; texts?: string[] }) => {
  try {
    parentPort!.postMessage(checks ? { verdicts: checks.map(countWithinBudget) } : { counts: texts!.map(countTokens) });
  } catch (error) {
    parentPort!.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
});
