import { HttpStatus, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { QueueName, MessagingService } from '@igw/messaging';
import type { CatalogueModel } from '@igw/contracts';
import { CatalogueIndex } from '@igw/domain';
import { GatewayException } from '@igw/http';
import { setLabelledModels } from '@igw/observability';

/** Said after an unknown model in a request. */
const LIST_THE_MODELS = 'GET /v1/models lists the model ids and aliases a request can use.';

/** After a failed fetch. */
const RETRY_MS = 2_000;
/** After a snapshot older than an announced revision: the catalogue commits before it announces, so this is a race and soon over. */
const STALE_RETRY_MS = 200;

/**
 * The gateway's in-memory copy of the catalogue. Requests read it without any I/O; a new
 * revision announced by the catalogue service replaces it as a whole.
 */
@Injectable()
export class CatalogueSnapshotService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(CatalogueSnapshotService.name);
  private index?: CatalogueIndex<CatalogueModel>;
  private refreshing?: Promise<void>;
  private fetchAgain = false;
  private wantedRevision = 0;
  private retryTimer?: NodeJS.Timeout;

  constructor(private readonly messaging: MessagingService) {}

  async onApplicationBootstrap(): Promise<void> {
    await this.messaging.subscribe('catalogue.revision.changed', ({ revision }) => this.onRevision(revision));
    this.messaging.onRelayRecovered(() => void this.refresh());
    await this.refresh();
  }

  onApplicationShutdown(): void {
    clearTimeout(this.retryTimer);
  }

  get current(): CatalogueIndex<CatalogueModel> | undefined {
    return this.index;
  }

  /**
   * The entry a request names (id or alias) and the revision it was read from: its prices
   * are the ones the request is charged at, whatever changes while it runs.
   */
  resolveModel(name: string): { model: CatalogueModel; revision: number } {
    const index = this.index;
    if (!index) throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'Service Unavailable: the model catalogue is not loaded yet. Retry shortly.');
    const model = index.resolve(name);
    // A request's model is the first thing a newcomer gets wrong (a typo, another gateway's id): point at the list.
    if (!model) throw new GatewayException(HttpStatus.NOT_FOUND, `Not Found: no model named '${name}' in the catalogue. ${LIST_THE_MODELS}`);
    return { model, revision: index.revision };
  }

  /** Weak ETag of the current revision: it changes whenever any entry changes. */
  get etag(): string {
    return `W/"catalogue-${this.index?.revision ?? 0}"`;
  }

  private onRevision(revision: number): void {
    this.wantedRevision = Math.max(this.wantedRevision, revision);
    if (!this.index || revision > this.index.revision) void this.refresh();
  }

  /**
   * Fetches the snapshot; failures retry in the background. A call while a fetch is under
   * way does not join it (that fetch may have been answered before the change it is told
   * about): one more fetch follows it.
   */
  refresh(): Promise<void> {
    if (this.refreshing) {
      this.fetchAgain = true;
      return this.refreshing;
    }
    this.refreshing = this.fetchWhileAsked().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async fetchWhileAsked(): Promise<void> {
    do {
      this.fetchAgain = false;
      await this.fetch();
    } while (this.fetchAgain);
  }

  private async fetch(): Promise<void> {
    clearTimeout(this.retryTimer);
    try {
      const snapshot = await this.messaging.request(QueueName.CatalogueRpc, 'catalogue.snapshot', {});
      if (!this.index || snapshot.revision >= this.index.revision) {
        this.index = new CatalogueIndex(snapshot.revision, snapshot.models);
        setLabelledModels(snapshot.models.map((model) => model.id));
        this.logger.log(`catalogue revision ${snapshot.revision} (${snapshot.models.length} models)`);
      }
      if (snapshot.revision < this.wantedRevision) this.scheduleRetry(STALE_RETRY_MS);
    } catch (error) {
      this.logger.warn(`catalogue snapshot unavailable (${error instanceof Error ? error.message : String(error)}); retrying`);
      this.scheduleRetry(RETRY_MS);
    }
  }

  private scheduleRetry(delayMs: number): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.refresh(), delayMs);
    this.retryTimer.unref();
  }
}
