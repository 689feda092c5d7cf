import type { ProviderTarget } from './provider.types';
import { findProvider, providerVariables, type ProviderDefinition } from './registry';

export interface ProviderCredentials {
  apiKey?: string;
  baseUrl?: string;
}

export interface CatalogueSource {
  provider: string;
  model: string;
}

export interface RoutePlan {
  targets: Array<ProviderTarget & { definition: ProviderDefinition }>;
  /** Variables that would make an unconfigured source usable, for the 503 message. */
  missing: string[];
}

/**
 * Turns a model's catalogue sources into callable targets, in order, keeping only the
 * sources whose provider has credentials configured.
 */
export function planRoute(sources: readonly CatalogueSource[], credentials: Record<string, ProviderCredentials>): RoutePlan {
  const targets: RoutePlan['targets'] = [];
  const missing: string[] = [];
  for (const source of sources) {
    const definition = findProvider(source.provider);
    if (!definition) {
      missing.push(`a provider named "${source.provider}" (unknown to this gateway)`);
      continue;
    }
    const configured = credentials[definition.name] ?? {};
    const variables = providerVariables(definition.name);
    const baseUrl = configured.baseUrl ?? definition.defaultBaseUrl;
    if (!baseUrl) {
      missing.push(variables.baseUrl);
      continue;
    }
    if (!configured.apiKey && !definition.keyless) {
      missing.push(variables.apiKey);
      continue;
    }
    targets.push({ provider: definition.name, model: source.model, baseUrl, apiKey: configured.apiKey, definition });
  }
  return { targets, missing };
}
