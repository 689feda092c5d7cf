import { existsSync } from 'node:fs';
import { availableParallelism } from 'node:os';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { countWithinBudget, tokenBounds, type BudgetCheck, type BudgetVerdict } from './token-budget';
import { countTokens } from './token-estimate';

/**
 * Undecided text counted on the calling thread, in UTF-8 bytes: about half a millisecond of
 * tokenizer time, less than handing it to a worker and back is worth.
 */
export const INLINE_COUNT_BYTES = 16_384;

/** What a worker is asked: budget checks, or texts to count whole. */
type Request = { checks: readonly BudgetCheck[] } | { texts: readonly string[] };
type Reply = { verdicts: BudgetVerdict[] } | { counts: number[] } | { error: string };

interface Task {
  request: Request;
  resolve: (reply: Reply) => void;
  reject: (error: Error) => void;
}

interface Slot {
  worker: Worker;
  task?: Task;
}

/**
 * Worker threads that count tokens, so that a long prompt never holds the event loop (and every
 * other request) for the tens of milliseconds its count takes. Started on first use, one at a
 * time as the load needs them, up to `size`; each loads its own tokenizer (about 80 MB and half
 * a second). Tasks wait in order when all are busy. An idle worker does not keep the process
 * alive; `close()` stops them all (the next task starts a new one).
 */
export class TokenCountPool {
  private readonly slots = new Set<Slot>();
  private readonly idle: Slot[] = [];
  private readonly queue: Task[] = [];
  private dispatchScheduled = false;

  constructor(readonly size: number) {}

  count(checks: readonly BudgetCheck[]): Promise<BudgetVerdict[]> {
    return this.ask({ checks }).then((reply) => (reply as { verdicts: BudgetVerdict[] }).verdicts);
  }

  /** The tokens of each text, counted whole (countTokens). */
  countWhole(texts: readonly string[]): Promise<number[]> {
    return this.ask({ texts }).then((reply) => (reply as { counts: number[] }).counts);
  }

  /** Workers running (busy or idle). */
  get workers(): number {
    return this.slots.size;
  }

  async close(): Promise<void> {
    const slots = [...this.slots];
    this.slots.clear();
    this.idle.length = 0;
    const stopped = new Error('Token counting was stopped.');
    for (const task of this.queue.splice(0)) task.reject(stopped);
    await Promise.all(
      slots.map((slot) => {
        slot.task?.reject(stopped);
        return slot.worker.terminate();
      }),
    );
  }

  private dispatch(): void {
    while (this.queue.length > 0) {
      const slot = this.idle.pop() ?? (this.slots.size < this.size ? this.start() : undefined);
      if (!slot) return;
      const task = this.queue.shift()!;
      slot.task = task;
      slot.worker.ref();
      slot.worker.postMessage(task.request);
    }
  }

  /**
   * Tasks are handed to the workers once the current turn of the event loop is over: posting
   * copies every text (a few hundred microseconds for thousands of messages), and what the turn
   * already has in hand goes first.
   */
  private ask(request: Request): Promise<Reply> {
    return new Promise((resolve, reject) => {
      this.queue.push({ request, resolve, reject });
      if (this.dispatchScheduled) return;
      this.dispatchScheduled = true;
      setImmediate(() => {
        this.dispatchScheduled = false;
        this.dispatch();
      });
    });
  }

  private start(): Slot {
    const slot: Slot = { worker: startWorker() };
    this.slots.add(slot);
    slot.worker.on('message', (reply: Reply) => {
      const task = slot.task;
      slot.task = undefined;
      slot.worker.unref();
      this.idle.push(slot);
      if ('error' in reply) task?.reject(new Error(`Token counting failed: ${reply.error}`));
      else task?.resolve(reply);
      this.dispatch();
    });
    slot.worker.on('error', (error) => this.retire(slot, error));
    slot.worker.on('exit', (code) => this.retire(slot, new Error(`The token counting worker exited with code ${code}.`)));
    return slot;
  }

  /** A worker that failed or exited: its task fails, the next one gets a new worker. */
  private retire(slot: Slot, error: Error): void {
    if (!this.slots.delete(slot)) return;
    const idle = this.idle.indexOf(slot);
    if (idle >= 0) this.idle.splice(idle, 1);
    slot.task?.reject(error);
    slot.task = undefined;
    this.dispatch();
  }
}

const COMPILED_WORKER = path.join(__dirname, 'token-count.worker.js');

function startWorker(): Worker {
  if (existsSync(COMPILED_WORKER)) return new Worker(COMPILED_WORKER);
  // Running from the TypeScript sources (as Jest does): the worker compiles them with SWC as it loads them.
  const source = path.join(__dirname, 'token-count.worker.ts');
  const swc = require.resolve('@swc/core');
  const options = { jsc: { parser: { syntax: 'typescript' }, target: 'es2022' }, module: { type: 'commonjs' }, swcrc: false };
  return new Worker(
    `const { transformFileSync } = require(${JSON.stringify(swc)});
     require.extensions['.ts'] = (module, filename) => module._compile(transformFileSync(filename, ${JSON.stringify(options)}).code, filename);
     require(${JSON.stringify(source)});`,
    { eval: true },
  );
}

/** The pool the gateway counts long prompts with: one worker per spare core, at most two. */
export const tokenCountPool = new TokenCountPool(Math.min(2, Math.max(1, availableParallelism() - 1)));

/**
 * Decides each check, counting only what the cheap bounds leave undecided (tokenBounds): on
 * this thread when that is a little text, else in the worker pool. Returns a Promise only when
 * the pool counts.
 */
export function checkTokenBudgets(checks: readonly BudgetCheck[], pool: TokenCountPool = tokenCountPool): BudgetVerdict[] | Promise<BudgetVerdict[]> {
  const verdicts: Array<BudgetVerdict | undefined> = [];
  const undecided: number[] = [];
  let undecidedBytes = 0;
  for (const [index, check] of checks.entries()) {
    const bytes = check.texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
    const { fewest, most } = tokenBounds(bytes);
    if (most <= check.budget) verdicts.push({ fits: true, tokens: most, exact: bytes === 0 });
    else if (fewest > check.budget) verdicts.push({ fits: false, tokens: fewest, exact: false });
    else {
      verdicts.push(undefined);
      undecided.push(index);
      undecidedBytes += bytes;
    }
  }
  if (undecidedBytes <= INLINE_COUNT_BYTES) return checks.map((check, index) => verdicts[index] ?? countWithinBudget(check));
  return pool.count(undecided.map((index) => checks[index])).then((counted) => {
    undecided.forEach((index, position) => (verdicts[index] = counted[position]));
    return verdicts as BudgetVerdict[];
  });
}

/**
 * `next` applied to a result that is a Promise only when the token counting workers count: at
 * once when it is at hand, so a count on this thread costs no turn of the event loop.
 */
export function whenCounted<T, R>(counted: T | Promise<T>, next: (value: T) => R | Promise<R>): R | Promise<R> {
  return counted instanceof Promise ? counted.then(next) : next(counted);
}

/**
 * The tokens of each text (countTokens, exact): on this thread when they are a little text,
 * else in the worker pool. Returns a Promise only when the pool counts.
 */
export function countEachOffLoop(texts: readonly string[], pool: TokenCountPool = tokenCountPool): number[] | Promise<number[]> {
  if (utf8Bytes(texts) <= INLINE_COUNT_BYTES) return texts.map(countTokens);
  // What is billed must be counted: should the pool fail (stopped by a shutdown), this thread counts.
  return pool.countWhole(texts).catch(() => texts.map(countTokens));
}

/** The texts' UTF-8 size: what decides whether they are counted on the calling thread. */
export function utf8Bytes(texts: readonly string[]): number {
  let bytes = 0;
  for (const text of texts) bytes += Buffer.byteLength(text);
  return bytes;
}

/** The tokens of the texts together, as {@link countEachOffLoop} counts them. */
export function countAllOffLoop(texts: readonly string[], pool: TokenCountPool = tokenCountPool): number | Promise<number> {
  return whenCounted(countEachOffLoop(texts, pool), (each) => each.reduce((total, count) => total + count, 0));
}
