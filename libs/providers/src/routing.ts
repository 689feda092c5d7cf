import type { ProviderTarget } from './provider.types';
import type { UpstreamLimits } from './transport/upstream-limits';
import type { ProviderDefinition } from './provider-definition';
import type { ConnectionSet, DeploymentQuotas } from './connections/connections';

export interface CatalogueSource {
  /** The connection's name. */
  provider: string;
  model: string;
  /** The provider's own APIs the source is called through natively (catalogue `native`). */
  native?: readonly string[];
  deployment?: string;
  weight?: number;
  tier?: number;
}

/** One source as the balancer sees it: where it goes, and its place among its siblings. */
export interface RouteTarget extends ProviderTarget {
  definition: ProviderDefinition;
  native?: readonly string[];
  /** `<connection>/<upstream>`: the unit whose quotas, in-flight count and cooldown every replica shares. */
  deployment: string;
  weight: number;
  tier: number;
  quotas: DeploymentQuotas;
  /** The connection's call timeout, when it sets one. */
  timeoutMs?: number;
}

export interface RoutePlan {
  targets: RouteTarget[];
  /** What would make an unconfigured source usable (variables, or a connection of the file), for the 503 message. */
  missing: string[];
}

/**
 * A model none of whose sources sets `weight` or `tier` keeps the meaning it had before tiers:
 * its sources are tried in order, each a tier of its own.
 */
export function tiersInOrder(sources: readonly CatalogueSource[]): boolean {
  return sources.every((source) => source.weight === undefined && source.tier === undefined);
}

/**
 * Turns a model's catalogue sources into callable targets, in order, keeping only those whose
 * connection is configured. `limits` bound what each target's answers may cost the gateway.
 */
export function planRoute(sources: readonly CatalogueSource[], connections: ConnectionSet, limits?: UpstreamLimits): RoutePlan {
  const targets: RouteTarget[] = [];
  const missing: string[] = [];
  const inOrder = tiersInOrder(sources);
  for (let index = 0; index < sources.length; index++) {
    const source = sources[index];
    const connection = connections.find(source.provider);
    if (!connection) {
      missing.push(connections.missing(source.provider));
      continue;
    }
    const upstream = source.deployment ?? source.model;
    const target: RouteTarget = {
      provider: connection.name,
      model: upstream,
      baseUrl: connection.baseUrl,
      apiKey: connection.apiKey,
      definition: connection.definition,
      limits,
      deployment: `${connection.name}/${upstream}`,
      weight: source.weight ?? 1,
      tier: inOrder ? index : (source.tier ?? 0),
      quotas: connection.quotas,
    };
    if (connection.timeoutMs !== undefined) target.timeoutMs = connection.timeoutMs;
    if (Object.keys(connection.headers).length > 0) target.headers = connection.headers;
    if (source.native !== undefined) target.native = source.native;
    if (connection.cloud !== undefined) target.cloud = connection.cloud;
    if (connection.authorize !== undefined) target.authorize = connection.authorize;
    targets.push(target);
  }
  return { targets, missing: missing.length > 1 ? [...new Set(missing)] : missing };
}
