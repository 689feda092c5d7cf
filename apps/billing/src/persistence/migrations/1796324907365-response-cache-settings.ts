import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ResponseCacheSettings1796324907365 implements MigrationInterface {
  name = 'ResponseCacheSettings1796324907365';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."accounts" ADD "cache" jsonb`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" ADD "cache" jsonb`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" DROP COLUMN "cache"`);
    await queryRunner.query(`ALTER TABLE "billing"."accounts" DROP COLUMN "cache"`);
  }
}
