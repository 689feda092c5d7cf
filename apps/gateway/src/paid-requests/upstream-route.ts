import { HttpStatus } from '@nestjs/common';
import { ErrorMessages, type CatalogueModel } from '@igw/contracts';
import { fallbacksTaken, GatewayException, type ServiceSettings } from '@igw/platform';
import { CircuitBreaker, planRoute, runWithFallback, type CancelSignal, type RoutePlan, type UpstreamLimits } from '@igw/providers';
import type { BreakerState } from '../telemetry/gateway-metrics';
import { logAccountRefusal, toClientError } from './upstream-error.mapper';

/** A `retry-after` up to this long is waited for; longer ones move on to the next source. */
const RETRY_AFTER_CAP_MS = 2_000;

export type UpstreamTarget = RoutePlan['targets'][number];

/** The deployment a target calls, `<connection>/<upstream>`: what the ledger, the access log and `x-gateway-deployment` name. */
export function deploymentOf(target: { model: string; definition: { name: string }; deployment?: string }): string {
  return target.deployment ?? `${target.definition.name}/${target.model}`;
}

/** Which of the model's sources to run, from `provider` (auto: the whole chain). */
export function selectSources(model: CatalogueModel, provider: string | undefined): CatalogueModel['routing']['sources'] {
  const sources = model.routing.sources;
  const wanted = (provider ?? 'auto').toLowerCase();
  if (wanted === 'auto') return sources;
  // `fallback` runs the chain's fallback source (its second) alone; a one-source chain has only its first.
  if (wanted === 'fallback') return [sources[Math.min(1, sources.length - 1)]];
  const pinned = sources.find((source) => source.provider.toLowerCase() === wanted);
  if (!pinned) {
    const allowed = ['auto', 'fallback', ...sources.map((source) => source.provider)].map((name) => `'${name}'`).join(', ');
    throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} provider: Expected one of ${allowed}. Received '${provider}'`);
  }
  return [pinned];
}

/** The sources that have credentials, in order; none is a 503 naming the variables to set. */
export function planTargets(model: CatalogueModel, sources: CatalogueModel['routing']['sources'], settings: ServiceSettings): UpstreamTarget[] {
  const plan = planRoute(sources, settings.providers, upstreamLimitsOf(model, settings));
  if (plan.targets.length === 0) {
    throw new GatewayException(
      HttpStatus.SERVICE_UNAVAILABLE,
      `Service Unavailable: no upstream is configured for model '${model.id}'. Set ${plan.missing.join(' or ')}.`,
    );
  }
  return plan.targets;
}

/** Per settings (one per process): the environment's bounds, and each catalogue entry's (entries are replaced, never changed). */
const limitsCache = new WeakMap<ServiceSettings, { base: UpstreamLimits; byModel: WeakMap<CatalogueModel, UpstreamLimits> }>();

/** What an upstream answer for this model may cost the gateway: the environment's bounds, the model's own stream duration. */
export function upstreamLimitsOf(model: CatalogueModel, settings: ServiceSettings): UpstreamLimits {
  let cache = limitsCache.get(settings);
  if (!cache) {
    const env = settings.env;
    const base = {
      maxResponseBytes: env.UPSTREAM_MAX_RESPONSE_BYTES,
      maxErrorBytes: env.UPSTREAM_MAX_ERROR_BYTES,
      maxEventBytes: env.UPSTREAM_MAX_EVENT_BYTES,
      maxStreamMs: env.UPSTREAM_STREAM_MAX_MS,
    };
    cache = { base, byModel: new WeakMap() };
    limitsCache.set(settings, cache);
  }
  let limits = cache.byModel.get(model);
  if (!limits) {
    const seconds = model.routing.maxStreamSeconds;
    limits = seconds === undefined ? cache.base : { ...cache.base, maxStreamMs: seconds * 1000 };
    cache.byModel.set(model, limits);
  }
  return limits;
}

/**
 * How long one upstream call of this model may wait for its answer (and, streamed, for each
 * read): the model's `routing.timeoutSeconds`, else UPSTREAM_TIMEOUT_MS. A call that runs into
 * it after its prompt was sent is billed the prompt and tried on no other source (upstream-billing.ts).
 */
export function upstreamTimeoutMsOf(model: CatalogueModel, settings: ServiceSettings): number {
  const seconds = model.routing.timeoutSeconds;
  return seconds === undefined ? settings.env.UPSTREAM_TIMEOUT_MS : seconds * 1000;
}

/**
 * Runs a call on the first source that takes it: the next one on connection errors, timeouts,
 * 429, 5xx and refusals of the operator's account (logged), until `signal` says no other source
 * may be tried (upstream-billing.ts); a source that keeps failing is skipped for a while.
 * Failures reach the client as the spec's statuses. One per endpoint, so a source's health is
 * judged per capability.
 */
export class UpstreamFallback {
  private readonly breaker = new CircuitBreaker();
  private readonly onFallback: (source: { provider: string }, error: unknown) => void;

  /** `endpoint` names the fallback in the metrics. */
  constructor(readonly endpoint = 'unnamed') {
    this.onFallback = (source, error) => {
      fallbacksTaken.inc(fallbacksTaken.series(endpoint, source.provider));
      logAccountRefusal(error);
    };
  }

  async run<T>(targets: readonly UpstreamTarget[], attempt: (target: UpstreamTarget) => Promise<T>, signal: CancelSignal): Promise<T> {
    try {
      return await runWithFallback(targets, attempt, { breaker: this.breaker, retryAfterCapMs: RETRY_AFTER_CAP_MS, signal, onFallback: this.onFallback });
    } catch (error) {
      throw toClientError(error);
    }
  }

  /** The sources that failed lately, for the circuit breaker gauge. */
  *breakerStates(): Generator<BreakerState> {
    for (const { key, open } of this.breaker.breakerStates()) {
      const colon = key.indexOf(':');
      yield { endpoint: this.endpoint, provider: key.slice(0, colon), upstreamModel: key.slice(colon + 1), open };
    }
  }
}
