import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { countWithinBudget } from './token-budget';

// A process of its own on dist/ (which the integration tier's global setup builds): what the unit specs cannot see.
describe('the built pool (dist/, as the services run it)', () => {
  it('counts in its compiled worker, and an idle worker does not keep the process from exiting', async () => {
    const built = path.resolve(__dirname, '../../../dist/libs/tokenizer/src/token-count-pool.js');
    const script = `
      const { tokenCountPool } = require(${JSON.stringify(built)});
      const text = 'lorem ipsum dolor sit amet '.repeat(2000);
      tokenCountPool.count([{ texts: [text], budget: 20000 }]).then((verdicts) => console.log(JSON.stringify(verdicts)));`;
    // No close(): the process must end on its own once the answer is printed.
    const { stdout } = await promisify(execFile)(process.execPath, ['-e', script], { timeout: 30_000 });
    expect(JSON.parse(stdout)).toEqual([countWithinBudget({ texts: ['lorem ipsum dolor sit amet '.repeat(2000)], budget: 20_000 })]);
  });
});
