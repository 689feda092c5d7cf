import { Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { QueueName, type CatalogueModel } from '@igw/contracts';
import { CatalogueIndex } from '@igw/domain';
import { MessagingService } from '@igw/messaging';

const RETRY_MS = 2_000;

/**
 * The gateway's in-memory copy of the catalogue. Requests read it without any I/O; a new
 * revision announced by the catalogue service replaces it as a whole.
 */
@Injectable()
export class CatalogueSnapshotService implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(CatalogueSnapshotService.name);
  private index?: CatalogueIndex<CatalogueModel>;
  private refreshing?: Promise<void>;
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

  /** Weak ETag of the current revision: it changes whenever any entry changes. */
  get etag(): string {
    return `W/"catalogue-${this.index?.revision ?? 0}"`;
  }

  private onRevision(revision: number): void {
    this.wantedRevision = Math.max(this.wantedRevision, revision);
    if (!this.index || revision > this.index.revision) void this.refresh();
  }

  /** Fetches the snapshot; concurrent calls share one fetch, failures retry in the background. */
  refresh(): Promise<void> {
    this.refreshing ??= this.fetch().finally(() => {
      this.refreshing = undefined;
    });
    return this.refreshing;
  }

  private async fetch(): Promise<void> {
    clearTimeout(this.retryTimer);
    try {
      const snapshot = await this.messaging.request(QueueName.CatalogueRpc, 'catalogue.snapshot', {});
      if (!this.index || snapshot.revision >= this.index.revision) {
        this.index = new CatalogueIndex(snapshot.revision, snapshot.models);
        this.logger.log(`catalogue revision ${snapshot.revision} (${snapshot.models.length} models)`);
      }
      if (snapshot.revision < this.wantedRevision) this.scheduleRetry();
    } catch (error) {
      this.logger.warn(`catalogue snapshot unavailable (${error instanceof Error ? error.message : String(error)}); retrying`);
      this.scheduleRetry();
    }
  }

  private scheduleRetry(): void {
    clearTimeout(this.retryTimer);
    this.retryTimer = setTimeout(() => void this.refresh(), RETRY_MS);
    this.retryTimer.unref();
  }
}
