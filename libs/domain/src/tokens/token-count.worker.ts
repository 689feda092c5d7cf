// A token counting thread of TokenCountPool: answers each request in order, budget checks
// (`checks`) with their verdicts, texts to count whole (`texts`) with their counts.
import { parentPort } from 'node:worker_threads';
import { countWithinBudget, type BudgetCheck } from './token-budget';
import { countTokens } from './token-estimate';

parentPort!.on('message', ({ checks, texts }: { checks?: BudgetCheck[]; texts?: string[] }) => {
  try {
    parentPort!.postMessage(checks ? { verdicts: checks.map(countWithinBudget) } : { counts: texts!.map(countTokens) });
  } catch (error) {
    parentPort!.postMessage({ error: error instanceof Error ? error.message : String(error) });
  }
});
