import { Counter, Gauge, register } from 'prom-client';

/** Job states counted by the queue depth gauge: waiting to run, running, waiting for a retry, failed for good (kept for an operator). */
const COUNTED_STATES = ['waiting', 'active', 'delayed', 'failed'] as const;

/** Something that can count its queues' jobs by state, at scrape time. */
export interface QueueDepthSource {
  jobCounts(): Promise<Array<{ queue: string; counts: Record<string, number> }>>;
}

/** The messaging services of the process whose consumed queues the gauge counts at each scrape. */
export const queueDepthSources = new Set<QueueDepthSource>();

function metric<M>(name: string, create: () => M): M {
  return (register.getSingleMetric(name) as M | undefined) ?? create();
}

export const queueJobs = metric(
  'igw_queue_jobs',
  () =>
    new Gauge({
      name: 'igw_queue_jobs',
      help: 'Jobs of the queues this process consumes, by queue and state (waiting, active, delayed, failed), read from the queue at each scrape',
      labelNames: ['queue', 'state'] as const,
      async collect() {
        this.reset();
        // A queue server that does not answer must not hold the scrape: its queues are left out.
        const answers = await Promise.all([...queueDepthSources].map((source) => withinScrape(source.jobCounts())));
        for (const { queue, counts } of answers.flat()) {
          for (const state of COUNTED_STATES) this.set({ queue, state }, counts[state] ?? 0);
        }
      },
    }),
);

export const queueJobFailures = metric(
  'igw_queue_job_failures_total',
  () =>
    new Counter({
      name: 'igw_queue_job_failures_total',
      help: 'Job attempts that failed in this process, by queue (a failed usage batch is retried: see igw_queue_jobs{state="failed"} for those that gave up)',
      labelNames: ['queue'] as const,
    }),
);

export { COUNTED_STATES };

const SCRAPE_WAIT_MS = 2_000;

function withinScrape<T>(answer: Promise<T[]>): Promise<T[]> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T[]>((resolve) => (timer = setTimeout(() => resolve([]), SCRAPE_WAIT_MS)));
  return Promise.race([answer.catch(() => []), late]).finally(() => clearTimeout(timer));
}
