import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { CatalogueModel } from '@igw/contracts';

export type CatalogueModelStatus = 'active' | 'retired';
/** Where the current definition came from: the shipped file, or the admin API. */
export type CatalogueModelSource = 'file' | 'admin';

/** One model of the catalogue; retired models stay as history. */
@Entity({ name: 'models' })
export class CatalogueModelEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  /** The whole entry as served (public fields and routing); `json` keeps the authored key order. */
  @Column({ type: 'json' })
  definition!: CatalogueModel;

  @Column({ type: 'text', default: 'active' })
  status!: CatalogueModelStatus;

  @Column({ type: 'text', default: 'file' })
  source!: CatalogueModelSource;

  /**
   * The entry as the shipped file last defined it. Reconciling compares the file with this,
   * not with `definition`, so an admin's change survives restarts until the file changes
   * that entry itself.
   */
  @Column({ name: 'file_definition', type: 'json', nullable: true })
  fileDefinition!: CatalogueModel | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
