import { Gauge } from 'prom-client';
import { CREDIT_SCALE } from '@igw/domain';
import { LATENCY_BUCKETS, processMetric, SeriesCounter, SeriesHistogram, SeriesScaledCounter } from '@igw/platform';

// The gateway's per-request metrics. Label values are bounded: catalogue model ids (`modelLabel`),
// provider names the gateway knows, endpoint names of the ledger.

export const timeToFirstToken = processMetric(
  'igw_time_to_first_token_seconds',
  () =>
    new SeriesHistogram('igw_time_to_first_token_seconds', "A stream's first upstream chunk, counted from the request's arrival, by model and provider", ['model', 'provider'], LATENCY_BUCKETS),
);

export const tokensCounted = processMetric(
  'igw_tokens_total',
  () =>
    new SeriesCounter('igw_tokens_total', 'Tokens charged, by model, provider and direction (input: every kind of prompt token, output: generated)', ['model', 'provider', 'direction']),
);

export const creditsCharged = processMetric(
  'igw_credits_charged_total',
  () =>
    new SeriesScaledCounter('igw_credits_charged_total', 'Credits charged (as journaled for the ledger), by model and endpoint', ['model', 'endpoint'], CREDIT_SCALE),
);

/** A source's circuit breaker as the gauge shows it. */
export interface BreakerState {
  endpoint: string;
  provider: string;
  upstreamModel: string;
  open: boolean;
}

/** The gateways of the process whose breakers the gauge reads at each scrape. */
export const breakerSources = new Set<() => Iterable<BreakerState>>();
/** The usage recorders of the process whose backlog the gauges read at each scrape. */
export const usageSources = new Set<{ pendingEvents(): number; spillingToJournal(): boolean }>();

/** Set at each scrape from the breakers' states: nothing on the request path. */
export const circuitBreakerOpen = processMetric(
  'igw_upstream_circuit_breaker_open',
  () =>
    new Gauge({
      name: 'igw_upstream_circuit_breaker_open',
      help: "1 while a source's circuit breaker is open (the source is skipped), 0 once closed, by endpoint, provider and upstream model",
      labelNames: ['endpoint', 'provider', 'upstream_model'] as const,
      collect() {
        this.reset();
        for (const source of breakerSources) {
          for (const state of source()) this.set({ endpoint: state.endpoint, provider: state.provider, upstream_model: state.upstreamModel }, state.open ? 1 : 0);
        }
      },
    }),
);

export const usageBacklog = processMetric(
  'igw_usage_backlog_events',
  () =>
    new Gauge({
      name: 'igw_usage_backlog_events',
      help: 'Usage events recorded and not yet accepted by the queue, in memory',
      collect() {
        let events = 0;
        for (const source of usageSources) events += source.pendingEvents();
        this.set(events);
      },
    }),
);

export const usageJournalSpilling = processMetric(
  'igw_usage_journal_spilling',
  () =>
    new Gauge({
      name: 'igw_usage_journal_spilling',
      help: '1 while the in-memory backlog is full and new usage events wait in the usage journal only',
      collect() {
        let spilling = false;
        for (const source of usageSources) spilling ||= source.spillingToJournal();
        this.set(spilling ? 1 : 0);
      },
    }),
);

/** The GenAI semantic conventions' operation name of a ledger endpoint. */
export function genAiOperation(endpoint: string): string {
  switch (endpoint) {
    case 'responses':
    case 'chat.completions':
    case 'messages':
      return 'chat';
    case 'embeddings':
      return 'embeddings';
    case 'images.generations':
      return 'generate_content';
    default:
      return endpoint;
  }
}
