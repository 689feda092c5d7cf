import type { MigrationInterface, QueryRunner } from 'typeorm';

export class RecordLedgerPrices1795272087058 implements MigrationInterface {
  name = 'RecordLedgerPrices1795272087058';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."ledger_entries" ADD "prices" jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."ledger_entries" DROP COLUMN "prices"`);
  }
}
