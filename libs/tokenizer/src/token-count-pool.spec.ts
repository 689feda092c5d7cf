import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { countWithinBudget } from './token-budget';
import { checkTokenBudgets, countEachOffLoop, INLINE_COUNT_BYTES, TokenCountPool } from './token-count-pool';
import { countTokens } from './token-estimate';

const words = (count: number) => Array.from({ length: count }, (_, index) => `word${index % 97} and more`).join(' ');

describe('TokenCountPool', () => {
  const pool = new TokenCountPool(1);
  afterAll(() => pool.close());

  it('gives the verdicts of the same count on this thread', async () => {
    const long = words(20_000);
    const checks = [
      { texts: [long], budget: 1_000_000 },
      { texts: [long, 'tail'], budget: countTokens(long) },
      { texts: ['short'], budget: 0 },
    ];
    expect(await pool.count(checks)).toEqual(checks.map(countWithinBudget));
  });

  it('counts texts whole as this thread does, inline when they are short', async () => {
    const texts = [words(20_000), 'short', '', 'ünïcödé 日本語 text'];
    expect(await pool.countWhole(texts)).toEqual(texts.map(countTokens));
    expect(await countEachOffLoop(texts, pool)).toEqual(texts.map(countTokens));
    const short = countEachOffLoop(['a few words', 'and more'], pool);
    expect(short).toEqual([countTokens('a few words'), countTokens('and more')]);
  });

  it('never holds the event loop: short work goes on, in order, while a long prompt is counted', async () => {
    // Counted whole (the budget is its count), a few megabytes take a worker tens of milliseconds.
    const long = words(200_000);
    const budget = countTokens(long);
    const events: string[] = [];
    let longDone = false;
    const counted = pool.count([{ texts: [long], budget }]).then(([verdict]) => {
      longDone = true;
      events.push(`long counted: ${verdict.exact}`);
    });
    // Short requests meanwhile: each a small inline count, one per turn of the event loop, until the long one is done.
    let shortCounts = 0;
    await new Promise<void>((resolve) => {
      const next = () => {
        if (longDone) return resolve();
        countTokens('What is the weather in Paris?');
        shortCounts++;
        if (shortCounts === 1) events.push('short answered');
        setImmediate(next);
      };
      setImmediate(next);
    });
    await counted;
    expect(events).toEqual(['short answered', 'long counted: true']);
    expect(shortCounts).toBeGreaterThan(1);
  });

  // Linux keeps a nice value per thread (field 19 of /proc/self/task/<tid>/stat); elsewhere there is nothing to read.
  (existsSync('/proc/self/task') ? it : it.skip)('counts at the lowest priority, in its own thread only: the event loop keeps its own', async () => {
    const niceOf = (stat: string) => Number(readFileSync(stat, 'utf8').split(') ')[1].split(' ')[16]);
    const loopNice = niceOf('/proc/thread-self/stat');
    await pool.countWhole([words(20_000)]);
    const threads = readdirSync('/proc/self/task').map((thread) => niceOf(`/proc/self/task/${thread}/stat`));
    expect(threads).toContain(19);
    expect(niceOf('/proc/thread-self/stat')).toBe(loopNice);
    expect(loopNice).toBeLessThan(19);
  });

  it('queues work beyond its size and stops cleanly, failing what was left', async () => {
    const long = words(100_000);
    const first = pool.count([{ texts: [long], budget: 1_000_000 }]);
    const queued = pool.count([{ texts: [long], budget: 1_000_000 }]);
    expect(pool.workers).toBe(1);
    await pool.close();
    await expect(first).rejects.toThrow('Token counting was stopped.');
    await expect(queued).rejects.toThrow('Token counting was stopped.');
    expect(pool.workers).toBe(0);
    // The next task starts a worker again.
    expect(await pool.count([{ texts: ['again'], budget: 10 }])).toEqual([{ fits: true, tokens: 5, exact: false }]);
  });
});

describe('checkTokenBudgets', () => {
  const pool = new TokenCountPool(1);
  afterAll(() => pool.close());

  it('answers at once, without a Promise, where the bounds decide or little text is left to count', () => {
    const big = words(50_000);
    expect(checkTokenBudgets([{ texts: [big], budget: Buffer.byteLength(big) }], pool)).toEqual([{ fits: true, tokens: Buffer.byteLength(big), exact: false }]);
    expect(checkTokenBudgets([{ texts: ['x'.repeat(10_000)], budget: 10 }], pool)).toEqual([{ fits: false, tokens: 79, exact: false }]);
    const small = words(500);
    expect(Buffer.byteLength(small)).toBeLessThan(INLINE_COUNT_BYTES);
    expect(checkTokenBudgets([{ texts: [small], budget: 100 }], pool)).toEqual([countWithinBudget({ texts: [small], budget: 100 })]);
    expect(pool.workers).toBe(0);
  });

  it('hands longer undecided text to the pool, keeping each verdict in its place', async () => {
    const long = words(20_000);
    const checks = [
      { texts: ['fits by its bytes'], budget: 100 },
      { texts: [long], budget: 100 },
      { texts: [long], budget: countTokens(long) },
    ];
    const verdicts = checkTokenBudgets(checks, pool);
    expect(verdicts).toBeInstanceOf(Promise);
    expect(await verdicts).toEqual([{ fits: true, tokens: 17, exact: false }, countWithinBudget(checks[1]), { fits: true, tokens: countTokens(long), exact: true }]);
    expect(pool.workers).toBe(1);
  });
});
