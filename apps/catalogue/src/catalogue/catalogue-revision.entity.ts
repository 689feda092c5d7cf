import { Column, CreateDateColumn, Entity, PrimaryGeneratedColumn } from 'typeorm';

/** The catalogue's version history: a new row for every change, never for a no-op. */
@Entity({ name: 'revisions' })
export class CatalogueRevisionEntity {
  @PrimaryGeneratedColumn({ type: 'integer' })
  revision!: number;

  @Column({ type: 'text' })
  reason!: string;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt!: Date;
}
