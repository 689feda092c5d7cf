import { HttpStatus, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { QueueName, type CatalogueModel, type GatewayUpstreams } from '@igw/contracts';
import { MessagingService } from '@igw/messaging';
import { GatewayException } from '@igw/platform';
import type { ConsoleCatalogue, ConsoleModel } from './console-catalogue.types';

export type { ConsoleCatalogue, ConsoleModel } from './console-catalogue.types';

/** Short: the page waits for it, and a gateway that does not answer in this time is reported as such. */
const ASK_TIMEOUT_MS = 3_000;

/**
 * The catalogue page's data: the entries from the catalogue service, "configured" from a
 * gateway (the only service holding provider credentials), asked on the relay.
 */
@Injectable()
export class ConsoleCatalogueService implements OnApplicationBootstrap {
  private readonly logger = new Logger(ConsoleCatalogueService.name);
  /** Asks waiting for the first gateway's answer, by ask id. */
  private readonly asks = new Map<string, (answer: GatewayUpstreams) => void>();

  constructor(private readonly messaging: MessagingService) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.messaging.subscribe('gateway.upstreams.answered', ({ askId, ...answer }) => this.asks.get(askId)?.(answer));
  }

  /** The first answer of any gateway within ASK_TIMEOUT_MS, or null. */
  private async askGateways(): Promise<GatewayUpstreams | null> {
    const askId = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const answered = new Promise<GatewayUpstreams | null>((resolve) => {
      this.asks.set(askId, resolve);
      timer = setTimeout(() => resolve(null), ASK_TIMEOUT_MS);
    });
    try {
      await this.messaging.publish('gateway.upstreams.asked', { askId });
      const answer = await answered;
      if (answer === null) this.logger.warn(`no gateway answered within ${ASK_TIMEOUT_MS} ms which providers it has`);
      return answer;
    } catch (error) {
      this.logger.warn(`could not ask the gateways which providers they have: ${describe(error)}`);
      return null;
    } finally {
      clearTimeout(timer);
      this.asks.delete(askId);
    }
  }

  async read(): Promise<ConsoleCatalogue> {
    const [snapshot, upstreams] = await Promise.all([
      this.messaging.request(QueueName.CatalogueRpc, 'catalogue.snapshot', {}, ASK_TIMEOUT_MS).catch((error: unknown) => {
        throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, `Service Unavailable: the catalogue service did not answer (${describe(error)}). Retry shortly.`);
      }),
      this.askGateways(),
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
