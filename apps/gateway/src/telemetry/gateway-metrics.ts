import { Gauge } from 'prom-client';
import type { DeploymentReport } from '@igw/messaging/connections-report';
import { CREDIT_SCALE } from '@igw/domain';
import { LATENCY_BUCKETS, processMetric, SeriesCounter, SeriesHistogram, SeriesScaledCounter } from '@igw/observability';

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

/** A deployment's state as the gauges show it. */
export interface DeploymentGaugeState {
  report: DeploymentReport;
  quotas: { rpm?: number; tpm?: number; maxConcurrent?: number };
}

/** The gateways of the process whose deployments the gauges read at each scrape. */
export const deploymentSources = new Set<() => Promise<DeploymentGaugeState[]>>();
/** The usage recorders of the process whose backlog the gauges read at each scrape. */
export const usageSources = new Set<{ pendingEvents(): number; spillingToJournal(): boolean }>();

const DEPLOYMENT_STATES: ReadonlyArray<DeploymentReport['state']> = ['serving', 'cooling', 'over-quota'];

async function deploymentStates(): Promise<DeploymentGaugeState[]> {
  const states: DeploymentGaugeState[] = [];
  for (const source of deploymentSources) states.push(...(await source().catch(() => [])));
  return states;
}

/** Read at each scrape from the shared state (Redis or the process): nothing on the request path. */
export const deploymentState = processMetric(
  'igw_deployment_state',
  () =>
    new Gauge({
      name: 'igw_deployment_state',
      help: "1 for a deployment's current state (serving, cooling, over-quota), 0 for the others, by deployment (<connection>/<upstream>)",
      labelNames: ['deployment', 'state'] as const,
      async collect() {
        this.reset();
        for (const { report } of await deploymentStates()) {
          for (const state of DEPLOYMENT_STATES) this.set({ deployment: report.deployment, state }, report.state === state ? 1 : 0);
        }
      },
    }),
);

export const deploymentInFlight = processMetric(
  'igw_deployment_in_flight',
  () =>
    new Gauge({
      name: 'igw_deployment_in_flight',
      help: 'Calls in flight on a deployment, across every replica sharing its state',
      labelNames: ['deployment'] as const,
      async collect() {
        this.reset();
        for (const { report } of await deploymentStates()) this.set({ deployment: report.deployment }, report.inFlight);
      },
    }),
);

export const deploymentQuotaUsed = processMetric(
  'igw_deployment_quota_used_ratio',
  () =>
    new Gauge({
      name: 'igw_deployment_quota_used_ratio',
      help: "This minute's requests (rpm), tokens (tpm) and the calls in flight (concurrent) over the deployment's quota, for each quota it has",
      labelNames: ['deployment', 'quota'] as const,
      async collect() {
        this.reset();
        for (const { report, quotas } of await deploymentStates()) {
          if (quotas.rpm) this.set({ deployment: report.deployment, quota: 'rpm' }, report.requestsThisMinute / quotas.rpm);
          if (quotas.tpm) this.set({ deployment: report.deployment, quota: 'tpm' }, report.tokensThisMinute / quotas.tpm);
          if (quotas.maxConcurrent) this.set({ deployment: report.deployment, quota: 'concurrent' }, report.inFlight / quotas.maxConcurrent);
        }
      },
    }),
);

export const deploymentCooldowns = processMetric(
  'igw_deployment_cooldowns_total',
  () => new SeriesCounter('igw_deployment_cooldowns_total', "Attempts whose outcome cooled their deployment, by deployment and reason (rate-limited, failing, refused)", ['deployment', 'reason']),
);

export const deploymentRetries = processMetric(
  'igw_deployment_retries_total',
  () => new SeriesCounter('igw_deployment_retries_total', 'Requests that moved on to another deployment after this one failed them', ['deployment']),
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
    case 'generateContent':
      return 'chat';
    case 'embeddings':
      return 'embeddings';
    case 'images.generations':
    case 'images.edits':
      return 'generate_content';
    default:
      return endpoint;
  }
}

export const responseCacheLookups = processMetric(
  'igw_response_cache_lookups_total',
  () => new SeriesCounter('igw_response_cache_lookups_total', 'Response cache look-ups, by result (hit, miss, bypass: the store failed) and backend', ['result', 'backend']),
);

export const responseCacheStoredBytes = processMetric(
  'igw_response_cache_stored_bytes_total',
  () => new SeriesCounter('igw_response_cache_stored_bytes_total', 'Bytes of response cache entries written (compressed), by backend', ['backend']),
);

export const responseCacheEvictions = processMetric(
  'igw_response_cache_evictions_total',
  () => new SeriesCounter('igw_response_cache_evictions_total', "Response cache entries removed before their time to keep an account within RESPONSE_CACHE_ACCOUNT_BYTES, by backend", ['backend']),
);

export const responseCacheSavedCredits = processMetric(
  'igw_response_cache_saved_credits_total',
  () => new SeriesScaledCounter('igw_response_cache_saved_credits_total', 'Credits cache hits did not charge: what their usage costs at full price minus what they were charged, by backend', ['backend'], CREDIT_SCALE),
);
