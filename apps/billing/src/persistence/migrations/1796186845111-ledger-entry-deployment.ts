import type { MigrationInterface, QueryRunner } from 'typeorm';

export class LedgerEntryDeployment1796186845111 implements MigrationInterface {
  name = 'LedgerEntryDeployment1796186845111';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."ledger_entries" ADD "deployment" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."ledger_entries" DROP COLUMN "deployment"`);
  }
}
