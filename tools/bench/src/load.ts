import { readFileSync } from 'node:fs';
import { Agent, request } from 'undici';
import { cpuSeconds } from './services';

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  /** Latency of whole requests (ms), sorted. */
  latencies: number[];
  /** For streams: time to the first chunk (ms), sorted. */
  firstChunk: number[];
  /** Share of the machine's CPU time the hypervisor gave to other guests during the run (%; NaN where unknown). */
  stolenPercent: number;
  /** User + system time of the plan's `cpuOfPid` process during the run (ms; NaN without one). */
  cpuMs: number;
}

export interface LoadPlan {
  url: string;
  headers: Record<string, string>;
  body: string;
  concurrency: number;
  durationMs: number;
  maxRequests: number;
  stream: boolean;
  /**
   * For streams of an API whose events are named (Responses, Messages): the text that opens its
   * first event, whose arrival is the first chunk, and the text of its last event, without which
   * the stream counts as an error (an `error` event ends a stream with status 200). Without it the
   * first chunk is the first bytes of the body, as for chat completions' `data:` chunks.
   */
  streamEvents?: StreamEvents;
  /** The process whose CPU time the run measures (the gateway's). */
  cpuOfPid?: number;
  /**
   * Worker n sends its first request n × this later (ms). Closed-loop workers started together
   * stay in step on paced streams (all of them start, pause and end together, every chunk of
   * theirs arriving in one burst); spread over a stream's length they arrive as clients do,
   * at moments of their own.
   */
  startSpreadMs?: number;
}

export interface StreamEvents {
  first: string;
  last: string;
}

const clientFor = (plan: LoadPlan) => new Agent({ connections: plan.concurrency, keepAliveTimeout: 60_000, pipelining: 1 });

/**
 * Runs a closed-loop load: `concurrency` workers, each sending the next request as soon as its
 * last one ended. `client`: connections kept from an earlier run of the same plan (else new ones).
 */
export async function runLoad(plan: LoadPlan, client?: Agent): Promise<LoadResult> {
  const agent = client ?? clientFor(plan);
  const latencies: number[] = [];
  const firstChunk: number[] = [];
  let errors = 0;
  let sent = 0;
  const stealBefore = stolenTicks();
  const cpuBefore = plan.cpuOfPid === undefined ? Number.NaN : await cpuSeconds(plan.cpuOfPid);
  const started = performance.now();
  const deadline = started + plan.durationMs;
  const worker = async (_: unknown, index: number) => {
    if (plan.startSpreadMs) await new Promise((resolve) => setTimeout(resolve, index * plan.startSpreadMs!));
    while (performance.now() < deadline && sent < plan.maxRequests) {
      sent++;
      const begin = performance.now();
      try {
        const response = await request(plan.url, { method: 'POST', dispatcher: agent, headers: plan.headers, body: plan.body });
        let first = 0;
        const events = plan.streamEvents ? new EventMarks(plan.streamEvents) : undefined;
        for await (const piece of response.body as AsyncIterable<Buffer>) {
          if (events) {
            if (events.read(piece) && !first) first = performance.now();
          } else if (!first && piece.length > 0) {
            first = performance.now();
          }
        }
        if (response.statusCode !== 200 || (events && !events.ended)) errors++;
        const end = performance.now();
        latencies.push(end - begin);
        if (plan.stream) firstChunk.push((first || end) - begin);
      } catch {
        errors++;
      }
    }
  };
  await Promise.all(Array.from({ length: plan.concurrency }, worker));
  const seconds = (performance.now() - started) / 1000;
  const stealAfter = stolenTicks();
  const cpuMs = plan.cpuOfPid === undefined ? Number.NaN : ((await cpuSeconds(plan.cpuOfPid)) - cpuBefore) * 1000;
  if (!client) await agent.close();
  const stolenPercent = ((stealAfter.stolen - stealBefore.stolen) / (stealAfter.total - stealBefore.total)) * 100;
  return { requests: latencies.length, errors, seconds, latencies: latencies.sort((a, b) => a - b), firstChunk: firstChunk.sort((a, b) => a - b), stolenPercent, cpuMs };
}

/** Watches a stream's bytes for its first and last events (markers split across pieces included). */
class EventMarks {
  ended = false;
  private started = false;
  /** The end of what was read, as long as a marker less one byte: where a split marker begins. */
  private tail = '';
  private readonly keep: number;

  constructor(private readonly marks: StreamEvents) {
    this.keep = Math.max(marks.first.length, marks.last.length) - 1;
  }

  /** Reads a piece; true once the first event has arrived. */
  read(piece: Buffer): boolean {
    // Latin-1 keeps every byte one character: the markers are ASCII, and no decoding can fail mid-character.
    const text = this.tail + piece.toString('latin1');
    if (!this.started) this.started = text.includes(this.marks.first);
    if (this.started && !this.ended) this.ended = text.includes(this.marks.last);
    this.tail = text.slice(-this.keep);
    return this.started;
  }
}

/** A measurement taken while the hypervisor ran other guests on this VM's cores is repeated, up to this many times... */
const STEAL_RETRIES = Number(process.env.BENCH_STEAL_RETRIES ?? 4);
/** ...when more than this share of the CPU time was stolen (%). */
const MAX_STOLEN_PERCENT = Number(process.env.BENCH_MAX_STEAL ?? 1);

/**
 * Runs the load, again while the hypervisor stole more than BENCH_MAX_STEAL % of the VM's CPU
 * time (up to BENCH_STEAL_RETRIES times), and keeps the run with the least stolen: time the
 * VM did not run is no property of what is measured, and on a shared host it comes in bursts
 * that would decide a percentile on their own.
 */
export async function runLoadUnstolen(plan: LoadPlan, client?: Agent): Promise<LoadResult> {
  let best = await runLoad(plan, client);
  for (let retry = 0; retry < STEAL_RETRIES && best.stolenPercent > MAX_STOLEN_PERCENT; retry++) {
    const again = await runLoad(plan, client);
    if (again.stolenPercent < best.stolenPercent) best = again;
  }
  return best;
}

/**
 * Runs the plans in turns of `durationMs / turns` each (each turn as runLoadUnstolen does),
 * `turns` times round, and gives each plan's turns merged into one result. The machine's speed
 * drifts within seconds here (the emulator shares its core with the load generator): one long
 * run per plan would put that drift between the plans compared, turns spread it over all of
 * them. Each plan keeps its connections from turn to turn, as a run of its own would.
 */
export async function runTakingTurns(plans: readonly LoadPlan[], turns: number): Promise<LoadResult[]> {
  const clients = plans.map(clientFor);
  const results: LoadResult[][] = plans.map(() => []);
  try {
    for (let turn = 0; turn < turns; turn++) {
      for (const [index, plan] of plans.entries()) {
        results[index].push(await runLoadUnstolen({ ...plan, durationMs: plan.durationMs / turns }, clients[index]));
      }
    }
  } finally {
    await Promise.all(clients.map((client) => client.close()));
  }
  return results.map(merged);
}

function merged(results: readonly LoadResult[]): LoadResult {
  const all = <T>(pick: (result: LoadResult) => T[]) => results.flatMap(pick);
  const sum = (pick: (result: LoadResult) => number) => results.reduce((total, result) => total + pick(result), 0);
  return {
    requests: sum((result) => result.requests),
    errors: sum((result) => result.errors),
    seconds: sum((result) => result.seconds),
    latencies: all((result) => result.latencies).sort((a, b) => a - b),
    firstChunk: all((result) => result.firstChunk).sort((a, b) => a - b),
    stolenPercent: sum((result) => result.stolenPercent) / results.length,
    cpuMs: sum((result) => result.cpuMs),
  };
}

/** The machine's stolen and total CPU ticks so far (the `cpu` line of /proc/stat; zeros where there is none). */
function stolenTicks(): { stolen: number; total: number } {
  let fields: number[];
  try {
    fields = readFileSync('/proc/stat', 'utf8').slice(0, 200).split('\n')[0].trim().split(/\s+/).slice(1).map(Number);
  } catch {
    return { stolen: 0, total: 0 };
  }
  return { stolen: fields[7] ?? 0, total: fields.reduce((sum, ticks) => sum + ticks, 0) };
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
