import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import type { GatewayUpstreams } from '@igw/contracts';
import { MessagingService } from '@igw/messaging';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/platform';
import { configuredProviders, planRoute } from '@igw/providers';
import { CatalogueSnapshotService } from '../catalogue/catalogue-snapshot.service';

/**
 * Answers billing's console which providers this gateway has credentials for and which
 * catalogue models it can route: only the gateway holds the provider keys, so only it can tell.
 * The question and the answer travel as relay broadcasts, not as a queue job: a queue worker in
 * the gateway (BullMQ on PostgreSQL) let a database outage crash the process through a pooled
 * connection that dropped while checked out, and the gateway needs no worker for anything else.
 */
@Injectable()
export class UpstreamsWorker implements OnApplicationBootstrap {
  constructor(
    private readonly messaging: MessagingService,
    private readonly catalogue: CatalogueSnapshotService,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.messaging.subscribe('gateway.upstreams.asked', ({ askId }) => this.messaging.publish('gateway.upstreams.answered', { askId, ...this.upstreams() }));
  }

  upstreams(): GatewayUpstreams {
    const index = this.catalogue.current;
    const models = index?.models ?? [];
    return {
      revision: index ? index.revision : null,
      providers: configuredProviders(this.settings.providers).map((definition) => definition.name),
      answerable: models.filter((model) => planRoute(model.routing.sources, this.settings.providers).targets.length > 0).map((model) => model.id),
      connections: { providersFile: null, connections: [] },
    };
  }
}
