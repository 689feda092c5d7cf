import { Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { QueueName, type CatalogueModel, type CatalogueSnapshot } from '@igw/contracts';
import { MessagingService } from '@igw/messaging';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/platform';
import { isDeepStrictEqual } from 'node:util';
import { DataSource } from 'typeorm';
import { DEFAULT_CATALOGUE_FILE, readCatalogueFile } from './catalogue-file';
import { CatalogueModelEntity } from './catalogue-model.entity';
import { CatalogueRevisionEntity } from './catalogue-revision.entity';

/** Keep the last announced revision for late subscribers (a gateway starting later). */
const REVISION_RETAIN_MS = 7 * 24 * 3600 * 1000;
const RECONCILE_LOCK_KEY = 42_000_001;

@Injectable()
export class CatalogueService implements OnApplicationBootstrap {
  private readonly logger = new Logger(CatalogueService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly messaging: MessagingService,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const file = this.settings.env.CATALOGUE_FILE ?? DEFAULT_CATALOGUE_FILE;
    const definitions = await readCatalogueFile(file);
    const revision = await this.reconcile(definitions, `loaded ${file}`);
    this.messaging.consume(QueueName.CatalogueRpc, { 'catalogue.snapshot': () => this.snapshot() }, 4);
    await this.messaging.publish('catalogue.revision.changed', { revision }, { retainMs: REVISION_RETAIN_MS });
    this.logger.log(`catalogue at revision ${revision} (${definitions.length} models in ${file})`);
  }

  /**
   * Makes the table match the definitions: adds new models, updates changed ones, retires
   * missing ones (kept as history). A new revision is written only when something changed.
   */
  async reconcile(definitions: CatalogueModel[], reason: string): Promise<number> {
    return this.dataSource.transaction(async (manager) => {
      // Replicas starting together reconcile one after the other.
      await manager.query('SELECT pg_advisory_xact_lock($1)', [RECONCILE_LOCK_KEY]);
      const repository = manager.getRepository(CatalogueModelEntity);
      const existing = new Map((await repository.find()).map((row) => [row.id, row]));
      const changes: string[] = [];
      for (const definition of definitions) {
        const row = existing.get(definition.id);
        if (!row || row.status !== 'active' || !isDeepStrictEqual(row.definition, definition)) {
          await repository.save({ id: definition.id, definition, status: 'active' });
          changes.push(row ? `updated ${definition.id}` : `added ${definition.id}`);
        }
        existing.delete(definition.id);
      }
      for (const row of existing.values()) {
        if (row.status === 'active') {
          await repository.update({ id: row.id }, { status: 'retired' });
          changes.push(`retired ${row.id}`);
        }
      }
      const revisions = manager.getRepository(CatalogueRevisionEntity);
      if (changes.length > 0) {
        const created = await revisions.save({ reason: `${reason}: ${changes.length} change(s)` });
        this.logger.log(`revision ${created.revision}: ${changes.join(', ')}`);
        return created.revision;
      }
      return (await revisions.maximum('revision')) ?? 0;
    });
  }

  async snapshot(): Promise<CatalogueSnapshot> {
    const [rows, revision] = await Promise.all([
      this.dataSource.getRepository(CatalogueModelEntity).find({ where: { status: 'active' }, order: { id: 'ASC' } }),
      this.dataSource.getRepository(CatalogueRevisionEntity).maximum('revision'),
    ]);
    return { revision: revision ?? 0, models: rows.map((row) => row.definition) };
  }
}
