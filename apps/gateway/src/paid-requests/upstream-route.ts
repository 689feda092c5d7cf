import { HttpStatus } from '@nestjs/common';
import { ErrorMessages, type CatalogueModel, type UpstreamSource } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import type { ServiceSettings } from '@igw/config';
import { planRoute, type ConnectionSet, type RoutePlan, type RouteTarget, type UpstreamLimits } from '@igw/providers';
import { gatewayConnections } from './upstream-estate';

export type UpstreamTarget = RouteTarget;


/** Which of the model's sources to run, from `provider` (auto: all of them; a connection's name: its sources alone). */
export function selectSources(model: CatalogueModel, provider: string | undefined): CatalogueModel['routing']['sources'] {
  const sources = model.routing.sources;
  const wanted = (provider ?? 'auto').toLowerCase();
  if (wanted === 'auto') return sources;
  // `fallback` runs the chain's fallback source (its second) alone; a one-source chain has only its first.
  if (wanted === 'fallback') return [sources[Math.min(1, sources.length - 1)]];
  const pinned = sources.filter((source) => source.provider.toLowerCase() === wanted);
  if (pinned.length === 0) {
    const allowed = [...new Set(['auto', 'fallback', ...sources.map((source) => source.provider)])].map((name) => `'${name}'`).join(', ');
    throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} provider: Expected one of ${allowed}. Received '${provider}'`);
  }
  return pinned;
}

/**
 * Plans per connection set, sources and limits, each of which is replaced rather than changed
 * (a providers file's edit, a catalogue revision): a request reuses its model's targets instead
 * of making them again. A target is never changed per request.
 */
const plans = new WeakMap<ConnectionSet, WeakMap<readonly UpstreamSource[], WeakMap<UpstreamLimits, RoutePlan>>>();

function plannedRoute(sources: readonly UpstreamSource[], connections: ConnectionSet, limits: UpstreamLimits): RoutePlan {
  let bySources = plans.get(connections);
  if (!bySources) plans.set(connections, (bySources = new WeakMap()));
  let byLimits = bySources.get(sources);
  if (!byLimits) bySources.set(sources, (byLimits = new WeakMap()));
  let plan = byLimits.get(limits);
  if (!plan) byLimits.set(limits, (plan = planRoute(sources, connections, limits)));
  return plan;
}

/** The sources that have credentials, in order; none is a 503 naming the variables to set. */
export function planTargets(model: CatalogueModel, sources: CatalogueModel['routing']['sources'], settings: ServiceSettings): readonly UpstreamTarget[] {
  const plan = plannedRoute(sources, gatewayConnections(settings).current, upstreamLimitsOf(model, settings));
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
 * read): the model's `routing.timeoutSeconds`, else its connection's `timeoutSeconds`, else UPSTREAM_TIMEOUT_MS. A call that runs into
 * it after its prompt was sent is billed the prompt and tried on no other source (upstream-billing.ts).
 */
export function upstreamTimeoutMsOf(model: CatalogueModel, settings: ServiceSettings, target?: Pick<RouteTarget, 'timeoutMs'>): number {
  const seconds = model.routing.timeoutSeconds;
  if (seconds !== undefined) return seconds * 1000;
  return target?.timeoutMs ?? settings.env.UPSTREAM_TIMEOUT_MS;
}
