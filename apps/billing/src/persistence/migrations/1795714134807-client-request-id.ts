import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ClientRequestId1795714134807 implements MigrationInterface {
  name = 'ClientRequestId1795714134807';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."ledger_entries" ADD "client_request_id" text`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."ledger_entries" DROP COLUMN "client_request_id"`);
  }
}
