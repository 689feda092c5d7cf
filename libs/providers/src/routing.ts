import type { ProviderTarget } from './provider.types';
import type { UpstreamLimits } from './transport/upstream-limits';
import { findProvider, type ProviderDefinition } from './registry';

/** Provider variables by name, e.g. { OPENAI_API_KEY: 'sk-...' } (from the environment). */
export type ProviderVariables = Readonly<Record<string, string | undefined>>;

export interface CatalogueSource {
  provider: string;
  model: string;
  /** The provider's own APIs the source is called through natively (catalogue `native`). */
  native?: readonly string[];
}

export interface RoutePlan {
  targets: Array<ProviderTarget & { definition: ProviderDefinition; native?: readonly string[] }>;
  /** Variables that would make an unconfigured source usable, for the 503 message. */
  missing: string[];
}

/**
 * Turns a model's catalogue sources into callable targets, in order, keeping only the
 * sources whose provider has credentials configured. `limits` bound what each target's
 * answers may cost the gateway.
 */
export function planRoute(sources: readonly CatalogueSource[], variables: ProviderVariables, limits?: UpstreamLimits): RoutePlan {
  const targets: RoutePlan['targets'] = [];
  const missing: string[] = [];
  for (const source of sources) {
    const definition = findProvider(source.provider);
    if (!definition) {
      missing.push(`a provider named "${source.provider}" (unknown to this gateway)`);
      continue;
    }
    const apiKey = variables[definition.variables.apiKey] || undefined;
    const baseUrl = (variables[definition.variables.baseUrl] || definition.defaultBaseUrl)?.replace(/\/+$/, '');
    if (!baseUrl) {
      missing.push(definition.variables.baseUrl);
      continue;
    }
    if (!apiKey && !definition.keyless) {
      missing.push(definition.variables.apiKey);
      continue;
    }
    const target: RoutePlan['targets'][number] = { provider: definition.name, model: source.model, baseUrl, apiKey, definition, limits };
    if (source.native !== undefined) target.native = source.native;
    targets.push(target);
  }
  return { targets, missing };
}
