import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { type GatewayUpstreams, MessagingService } from '@igw/messaging';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { planRoute } from '@igw/providers';
import { CatalogueSnapshotService } from '../catalogue/catalogue-snapshot.service';
import { gatewayConnections, UpstreamEstate } from '../paid-requests/upstream-estate';

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
    private readonly estate: UpstreamEstate,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.messaging.subscribe('gateway.upstreams.asked', ({ askId }) => this.upstreams().then((upstreams) => this.messaging.publish('gateway.upstreams.answered', { askId, ...upstreams })));
  }

  async upstreams(): Promise<GatewayUpstreams> {
    const index = this.catalogue.current;
    const models = index?.models ?? [];
    const connections = gatewayConnections(this.settings).current;
    return {
      revision: index ? index.revision : null,
      providers: [...connections.all()].map((connection) => connection.name),
      answerable: models.filter((model) => planRoute(model.routing.sources, connections).targets.length > 0).map((model) => model.id),
      connections: await this.estate.report(models),
    };
  }
}
