import { HttpStatus, Inject, Injectable, Logger, type OnApplicationBootstrap } from '@nestjs/common';
import { QueueName, MessagingService } from '@igw/messaging';
import type { CatalogueModel, CatalogueSnapshot, ModelPricing, ModelResponseCache } from '@igw/contracts';
import { CatalogueIndex } from '@igw/domain';
import { GatewayException } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { isDeepStrictEqual } from 'node:util';
import { DataSource, type EntityManager } from 'typeorm';
import { DEFAULT_CATALOGUE_FILE, readCatalogueFile } from './catalogue-file';
import { CatalogueModelEntity } from './catalogue-model.entity';
import { CatalogueRevisionEntity } from './catalogue-revision.entity';

/** Keep the last announced revision for late subscribers (a gateway starting later). */
const REVISION_RETAIN_MS = 7 * 24 * 3600 * 1000;
/** Serialises every change of the catalogue, across replicas. */
const CATALOGUE_LOCK_KEY = 42_000_001;

export interface CatalogueChange {
  revision: number;
  model?: CatalogueModelEntity;
}

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
    await this.announce(revision);
    this.logger.log(`catalogue at revision ${revision} (${definitions.length} models in ${file})`);
  }

  /**
   * Applies the shipped file: adds its new entries, updates the entries the file changed
   * since it was last read, retires entries the file dropped. An admin's change to an entry
   * stays until the file changes that entry. A revision is written only if something changed.
   */
  async reconcile(definitions: CatalogueModel[], reason: string): Promise<number> {
    return this.change(reason, async (manager, changes) => {
      const repository = manager.getRepository(CatalogueModelEntity);
      const existing = new Map((await repository.find()).map((row) => [row.id, row]));
      for (const definition of definitions) {
        const row = existing.get(definition.id);
        existing.delete(definition.id);
        if (row && isDeepStrictEqual(row.fileDefinition, definition)) continue;
        await repository.save({ id: definition.id, definition, fileDefinition: definition, source: 'file', status: 'active' });
        changes.push(row ? `updated ${definition.id} from the file` : `added ${definition.id}`);
      }
      for (const row of existing.values()) {
        if (row.fileDefinition === null) continue; // created through the admin API: not the file's to retire
        await repository.update({ id: row.id }, { status: 'retired', fileDefinition: null });
        if (row.status === 'active') changes.push(`retired ${row.id}`);
      }
    }).then(({ revision }) => revision);
  }

  async list(): Promise<CatalogueModelEntity[]> {
    return this.dataSource.getRepository(CatalogueModelEntity).find({ order: { id: 'ASC' } });
  }

  async get(id: string): Promise<CatalogueModelEntity> {
    const row = await this.dataSource.getRepository(CatalogueModelEntity).findOneBy({ id });
    if (!row) throw new GatewayException(HttpStatus.NOT_FOUND, `Not Found: no catalogue entry with id '${id}'.`);
    return row;
  }

  /** Creates or replaces an entry (and reactivates a retired one). */
  async upsert(definition: CatalogueModel): Promise<CatalogueChange> {
    return this.change(`upsert ${definition.id}`, async (manager, changes) => {
      const repository = manager.getRepository(CatalogueModelEntity);
      const row = await repository.findOneBy({ id: definition.id });
      if (row && row.status === 'active' && isDeepStrictEqual(row.definition, definition)) return row;
      const saved = await repository.save({ ...row, id: definition.id, definition, status: 'active', source: 'admin', fileDefinition: row?.fileDefinition ?? null });
      changes.push(row ? `replaced ${definition.id}` : `added ${definition.id}`);
      return saved;
    });
  }

  async retire(id: string): Promise<CatalogueChange> {
    return this.change(`retire ${id}`, async (manager, changes) => {
      const row = await this.activeRow(manager, id);
      await manager.getRepository(CatalogueModelEntity).update({ id }, { status: 'retired', source: 'admin' });
      changes.push(`retired ${id}`);
      return { ...row, status: 'retired' as const };
    });
  }

  /** Adds aliases and/or replaces the price list or the response cache rules of an active entry; the result is checked like a file entry. */
  async amend(
    id: string,
    amendment: { aliases?: string[]; pricing?: ModelPricing; responseCache?: ModelResponseCache },
    check: (definition: CatalogueModel) => CatalogueModel,
  ): Promise<CatalogueChange> {
    return this.change(`amend ${id}`, async (manager, changes) => {
      const row = await this.activeRow(manager, id);
      const definition: CatalogueModel = { ...row.definition };
      const newAliases = (amendment.aliases ?? []).filter((alias) => !definition.aliases.some((known) => known.toLowerCase() === alias.toLowerCase()));
      if (newAliases.length > 0) {
        definition.aliases = [...definition.aliases, ...newAliases];
        changes.push(`aliases ${newAliases.join(', ')} for ${id}`);
      }
      if (amendment.pricing && !isDeepStrictEqual(amendment.pricing, definition.pricing)) {
        definition.pricing = amendment.pricing;
        changes.push(`new prices for ${id}`);
      }
      if (amendment.responseCache && !isDeepStrictEqual(amendment.responseCache, definition.responseCache)) {
        definition.responseCache = amendment.responseCache;
        changes.push(`new response cache rules for ${id}`);
      }
      if (changes.length === 0) return row;
      return manager.getRepository(CatalogueModelEntity).save({ ...row, definition: check(definition), source: 'admin' });
    });
  }

  /**
   * The active entries and the revision they belong to, read in one repeatable-read
   * transaction: two separate reads could pair old entries with a newer revision number,
   * and a gateway holding that pair would never fetch the entries it misses.
   */
  async snapshot(): Promise<CatalogueSnapshot> {
    return this.dataSource.transaction('REPEATABLE READ', async (manager) => {
      const revision = await this.currentRevision(manager);
      const rows = await manager.getRepository(CatalogueModelEntity).find({ where: { status: 'active' }, order: { id: 'ASC' } });
      return { revision, models: rows.map((row) => row.definition) };
    });
  }

  /**
   * Runs one change of the catalogue in a transaction under the catalogue lock. When the
   * body reports changes, the active set is checked (no name used twice), a revision is
   * written, and after commit every gateway is told.
   */
  private async change<T>(
    reason: string,
    body: (manager: EntityManager, changes: string[]) => Promise<T>,
  ): Promise<{ revision: number; model?: T }> {
    const changes: string[] = [];
    const result = await this.dataSource.transaction(async (manager) => {
      await manager.query('SELECT pg_advisory_xact_lock($1)', [CATALOGUE_LOCK_KEY]);
      const model = await body(manager, changes);
      if (changes.length === 0) return { revision: await this.currentRevision(manager), model };
      await this.checkNames(manager);
      const created = await manager.getRepository(CatalogueRevisionEntity).save({ reason: `${reason}: ${changes.join(', ')}`.slice(0, 2000) });
      this.logger.log(`revision ${created.revision}: ${changes.join(', ')}`);
      return { revision: created.revision, model };
    });
    if (changes.length > 0) await this.announce(result.revision);
    return result;
  }

  private async checkNames(manager: EntityManager): Promise<void> {
    const active = await manager.getRepository(CatalogueModelEntity).find({ where: { status: 'active' } });
    try {
      new CatalogueIndex(0, active.map((row) => row.definition));
    } catch (error) {
      throw new GatewayException(HttpStatus.CONFLICT, `Conflict: ${error instanceof Error ? error.message : String(error)}.`);
    }
  }

  private async activeRow(manager: EntityManager, id: string): Promise<CatalogueModelEntity> {
    const row = await manager.getRepository(CatalogueModelEntity).findOneBy({ id, status: 'active' });
    if (!row) throw new GatewayException(HttpStatus.NOT_FOUND, `Not Found: no active catalogue entry with id '${id}'.`);
    return row;
  }

  private async currentRevision(manager: EntityManager): Promise<number> {
    return (await manager.getRepository(CatalogueRevisionEntity).maximum('revision')) ?? 0;
  }

  private announce(revision: number): Promise<void> {
    return this.messaging.publish('catalogue.revision.changed', { revision }, { retainMs: REVISION_RETAIN_MS });
  }
}
