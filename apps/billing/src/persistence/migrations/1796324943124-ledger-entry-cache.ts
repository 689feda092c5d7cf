import type { MigrationInterface, QueryRunner } from 'typeorm';

export class LedgerEntryCache1796324943124 implements MigrationInterface {
  name = 'LedgerEntryCache1796324943124';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."ledger_entries" ADD "cache" text`);
    await queryRunner.query(`ALTER TABLE "billing"."ledger_entries" ADD "cache_saved_usd" numeric`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."ledger_entries" DROP COLUMN "cache_saved_usd"`);
    await queryRunner.query(`ALTER TABLE "billing"."ledger_entries" DROP COLUMN "cache"`);
  }
}
