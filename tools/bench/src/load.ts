import { Agent, request } from 'undici';

export interface LoadResult {
  requests: number;
  errors: number;
  seconds: number;
  /** Latency of whole requests (ms), sorted. */
  latencies: number[];
  /** For streams: time to the first chunk (ms), sorted. */
  firstChunk: number[];
}

export interface LoadPlan {
  url: string;
  headers: Record<string, string>;
  body: string;
  concurrency: number;
  durationMs: number;
  maxRequests: number;
  stream: boolean;
}

/** Runs a closed-loop load: `concurrency` workers, each sending the next request as soon as its last one ended. */
export async function runLoad(plan: LoadPlan): Promise<LoadResult> {
  const agent = new Agent({ connections: plan.concurrency, keepAliveTimeout: 60_000, pipelining: 1 });
  const latencies: number[] = [];
  const firstChunk: number[] = [];
  let errors = 0;
  let sent = 0;
  const started = performance.now();
  const deadline = started + plan.durationMs;
  const worker = async () => {
    while (performance.now() < deadline && sent < plan.maxRequests) {
      sent++;
      const begin = performance.now();
      try {
        const response = await request(plan.url, { method: 'POST', dispatcher: agent, headers: plan.headers, body: plan.body });
        let first = 0;
        for await (const piece of response.body) {
          if (!first && piece.length > 0) first = performance.now();
        }
        if (response.statusCode !== 200) errors++;
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
  await agent.close();
  return { requests: latencies.length, errors, seconds, latencies: latencies.sort((a, b) => a - b), firstChunk: firstChunk.sort((a, b) => a - b) };
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
