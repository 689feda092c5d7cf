// A token counting thread of TokenCountPool: answers each list of budget checks in order.
import { parentPort } from 'node:worker_threads';
import { countWithinBudget, type BudgetCheck } from './token-budget';

parentPort!.on('message', ({ id, checks }: { id: number; checks: BudgetCheck[] }) => {
  try {
    parentPort!.postMessage({ id, verdicts: checks.map(countWithinBudget) });
  } catch (error) {
    parentPort!.postMessage({ id, error: error instanceof Error ? error.message : String(error) });
  }
});
