import { HttpStatus, Injectable } from '@nestjs/common';
import { QueueName, MessagingService } from '@igw/messaging';
import type { CatalogueModel } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import { GatewayUpstreamsAsk } from '../connections/gateway-upstreams';
import type { ConsoleCatalogue, ConsoleModel } from './console-catalogue.types';

export type { ConsoleCatalogue, ConsoleModel } from './console-catalogue.types';

/** Short: the page waits for it. */
const CATALOGUE_TIMEOUT_MS = 3_000;

/**
 * The catalogue page's data: the entries from the catalogue service, "configured" from a
 * gateway (the only service holding provider credentials), asked on the relay.
 */
@Injectable()
export class ConsoleCatalogueService {
  constructor(
    private readonly messaging: MessagingService,
    private readonly gateways: GatewayUpstreamsAsk,
  ) {}

  async read(): Promise<ConsoleCatalogue> {
    const [snapshot, upstreams] = await Promise.all([
      this.messaging.request(QueueName.CatalogueRpc, 'catalogue.snapshot', {}, CATALOGUE_TIMEOUT_MS).catch((error: unknown) => {
        throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, `Service Unavailable: the catalogue service did not answer (${describe(error)}). Retry shortly.`);
      }),
      this.gateways.ask(),
    ]);
    const answerable = upstreams ? new Set(upstreams.answerable) : null;
    return {
      revision: snapshot.revision,
      gateway: upstreams ? { revision: upstreams.revision, providers: upstreams.providers } : null,
      models: snapshot.models.map((model) => toConsoleModel(model, answerable)),
    };
  }
}

function toConsoleModel(model: CatalogueModel, answerable: Set<string> | null): ConsoleModel {
  return {
    id: model.id,
    name: model.info.name,
    developer: model.info.developer,
    type: model.type,
    aliases: model.aliases,
    contextLength: model.info.contextLength ?? null,
    outputMax: model.info.outputMax ?? null,
    capabilities: model.capabilities ?? [],
    modalities: model.modalities ?? null,
    prices: (model.pricing?.units ?? []).map(({ unit, price, per, promptTokensAbove }) => ({ unit, price, per, ...(promptTokensAbove === undefined ? {} : { promptTokensAbove }) })),
    providers: [...new Set(model.routing.sources.map((source) => source.provider))],
    configured: answerable ? answerable.has(model.id) : null,
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
