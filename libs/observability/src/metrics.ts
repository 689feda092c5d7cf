import { collectDefaultMetrics, register, type Registry } from 'prom-client';
import { SeriesCounter, SeriesHistogram } from './series';

/**
 * The process's Prometheus registry. One per process: in the standalone app the four services
 * share it, so `/metrics` on either of its ports shows them all.
 */
export const metricsRegistry: Registry = register;

let defaultsCollected = false;

/**
 * Node's own figures (CPU, memory, event loop delay, GC), once per process, under prom-client's
 * standard names (`process_cpu_seconds_total`, `nodejs_eventloop_lag_p99_seconds`): what stock
 * Node.js dashboards and alerts query. Only the gateway's own metrics carry `igw_`.
 */
export function collectProcessMetrics(): void {
  if (defaultsCollected) return;
  defaultsCollected = true;
  collectDefaultMetrics({ register: metricsRegistry });
}

/** A metric of the process, created on first use: the standalone app starts modules that define the same ones. */
export function processMetric<M>(name: string, create: () => M): M {
  return (metricsRegistry.getSingleMetric(name) as M | undefined) ?? create();
}

/** Latency buckets in seconds, from a fast proxy hop to a long generation. */
export const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** Every HTTP request a service answered, by route pattern (never the raw path), and for paid ones the model and provider. */
export const httpRequests = processMetric(
  'igw_http_requests_total',
  () =>
    new SeriesCounter(
      'igw_http_requests_total',
      'HTTP requests answered, by service, route pattern, method, status, catalogue model and provider (none for unpaid routes)',
      ['service', 'route', 'method', 'status', 'model', 'provider'],
    ),
);

export const httpRequestDuration = processMetric(
  'igw_http_request_duration_seconds',
  () =>
    new SeriesHistogram(
      'igw_http_request_duration_seconds',
      'Time from the request arriving to its answer finishing (a stream: its last event), by service and route pattern',
      ['service', 'route'],
      LATENCY_BUCKETS,
    ),
);

/** The label of a request that names no catalogue model or provider. */
// Upstream calls, recorded by whichever service makes them (the gateway, the decisions service).
export const upstreamDuration = processMetric(
  'igw_upstream_request_duration_seconds',
  () =>
    new SeriesHistogram('igw_upstream_request_duration_seconds', 'One upstream attempt, from sending to the answer (a stream: to its headers), by endpoint, provider and outcome (ok or error); the gateway and the decisions service both record theirs', ['endpoint', 'provider', 'outcome'], LATENCY_BUCKETS),
);

export const fallbacksTaken = processMetric(
  'igw_upstream_fallbacks_total',
  () =>
    new SeriesCounter('igw_upstream_fallbacks_total', 'Requests moved on to the next source after one failed, by endpoint and the provider that failed', ['endpoint', 'provider']),
);

/** Runs one upstream attempt, timed in `igw_upstream_request_duration_seconds` by endpoint, provider and outcome. */
export async function timedUpstreamAttempt<T>(endpoint: string, provider: string, send: () => Promise<T>): Promise<T> {
  const started = performance.now();
  try {
    const answer = await send();
    upstreamDuration.observe(upstreamDuration.series(endpoint, provider, 'ok'), (performance.now() - started) / 1000);
    return answer;
  } catch (error) {
    upstreamDuration.observe(upstreamDuration.series(endpoint, provider, 'error'), (performance.now() - started) / 1000);
    throw error;
  }
}

export const NO_LABEL = 'none';
/** The label of a model id that is not (or no longer) in the catalogue: it keeps the series bounded. */
export const OTHER_LABEL = 'other';

let catalogueModelIds: ReadonlySet<string> = new Set();

/** The catalogue's model ids: the only model label values besides `other` and `none`. */
export function setLabelledModels(ids: Iterable<string>): void {
  catalogueModelIds = new Set(ids);
}

/** `id` when it is a catalogue model, `other` for anything else (so a client cannot create series). */
export function modelLabel(id: string | undefined): string {
  if (id === undefined) return NO_LABEL;
  return catalogueModelIds.has(id) ? id : OTHER_LABEL;
}

/** The metrics in Prometheus' text format, with its content type. */
export async function renderMetrics(): Promise<{ contentType: string; body: string }> {
  return { contentType: metricsRegistry.contentType, body: await metricsRegistry.metrics() };
}
