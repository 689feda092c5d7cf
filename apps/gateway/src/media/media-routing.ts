import { HttpStatus } from '@nestjs/common';
import { ErrorMessages, type CatalogueModel } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import type { ServiceSettings } from '@igw/config';
import { sourceDefinition, type ProviderKind } from '@igw/providers';
import { planTargets, selectSources, type UpstreamTarget } from '../paid-requests/upstream-route';

/**
 * The model's upstream targets for one capability, as embeddings plans them: `provider` picks
 * the sources; sources whose provider kind has no adapter for the capability are dropped
 * (unknown providers stay so the planner names them); a pinned source without one is the
 * client's choice (400), a model left with none a catalogue problem (503).
 */
export function mediaTargets(
  model: CatalogueModel,
  provider: string | undefined,
  settings: ServiceSettings,
  capability: { name: string; supports: (kind: ProviderKind) => boolean },
  /** What a model none of whose sources offers the capability is: the catalogue's problem (503), or the client's when only some models of the kind have it (400). */
  noSourceStatus: HttpStatus.SERVICE_UNAVAILABLE | HttpStatus.BAD_REQUEST = HttpStatus.SERVICE_UNAVAILABLE,
): readonly UpstreamTarget[] {
  const selected = selectSources(model, provider);
  const usable = selected.filter((source) => {
    const definition = sourceDefinition(source.provider);
    return definition === undefined || capability.supports(definition.kind);
  });
  if (usable.length === 0) {
    const names = [...new Set(selected.map((source) => source.provider))].join(', ');
    const pinned = provider !== undefined && provider.toLowerCase() !== 'auto';
    if (pinned) throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} provider: ${names} offers no ${capability.name} API; pick another source of ${model.id}.`);
    if (noSourceStatus === HttpStatus.BAD_REQUEST) {
      throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} model: no source of '${model.id}' offers ${capability.name} (${names} has no ${capability.name} API).`);
    }
    throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, `Service Unavailable: no source of model '${model.id}' offers ${capability.name} (${names} has no ${capability.name} API).`);
  }
  return planTargets(model, usable, settings);
}

/** A request's cost for a body that is not JSON: the same numbers as `meta.usage`, in headers. */
export function costHeaders(usage: { credits_used: number; usd_spent: number }): Record<string, string> {
  return { 'x-credits-used': String(usage.credits_used), 'x-usd-spent': String(usage.usd_spent) };
}
