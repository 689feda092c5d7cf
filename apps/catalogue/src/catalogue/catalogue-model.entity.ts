import { Column, CreateDateColumn, Entity, PrimaryColumn, UpdateDateColumn } from 'typeorm';
import type { CatalogueModel } from '@igw/contracts';

export type CatalogueModelStatus = 'active' | 'retired';

/** One model of the catalogue; retired models stay as history. */
@Entity({ name: 'models' })
export class CatalogueModelEntity {
  @PrimaryColumn({ type: 'text' })
  id!: string;

  /** The whole entry as defined (public fields and routing). */
  @Column({ type: 'jsonb' })
  definition!: CatalogueModel;

  @Column({ type: 'text', default: 'active' })
  status!: CatalogueModelStatus;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;

  @UpdateDateColumn({ name: 'updated_at', type: 'timestamptz' })
  updatedAt!: Date;
}
