import type { MigrationInterface, QueryRunner } from 'typeorm';

export class StoredResponseKeys1796170000000 implements MigrationInterface {
  name = 'StoredResponseKeys1796170000000';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."responses" ADD "key_id" uuid`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."responses" DROP COLUMN "key_id"`);
  }
}
