import type { MigrationInterface, QueryRunner } from 'typeorm';

export class AccountLimitOverrides1795274366497 implements MigrationInterface {
  name = 'AccountLimitOverrides1795274366497';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."accounts" ADD "rate_limit_rpm" integer`);
    await queryRunner.query(`ALTER TABLE "billing"."accounts" ADD "rate_limit_concurrency" integer`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."accounts" DROP COLUMN "rate_limit_concurrency"`);
    await queryRunner.query(`ALTER TABLE "billing"."accounts" DROP COLUMN "rate_limit_rpm"`);
  }
}
