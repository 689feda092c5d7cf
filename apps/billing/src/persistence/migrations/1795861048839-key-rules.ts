import type { MigrationInterface, QueryRunner } from 'typeorm';

export class KeyRules1795861048839 implements MigrationInterface {
  name = 'KeyRules1795861048839';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" ADD "metadata" jsonb NOT NULL DEFAULT '{}'`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" ADD "budget_limit" text`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" ADD "budget_unit" text`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" ADD "budget_period" text`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" ADD "models" jsonb`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" ADD "rate_limit_rpm" integer`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" ADD "rate_limit_concurrency" integer`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" ADD "expires_at" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" ADD "spend_period_start" TIMESTAMP WITH TIME ZONE`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" ADD "spent_micro" bigint NOT NULL DEFAULT '0'`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" ADD "spent_usd" numeric(38,15) NOT NULL DEFAULT '0'`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" ADD "usage_applied_micro" bigint NOT NULL DEFAULT '0'`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" ADD "spend_version" bigint NOT NULL DEFAULT '0'`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" DROP COLUMN "spend_version"`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" DROP COLUMN "usage_applied_micro"`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" DROP COLUMN "spent_usd"`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" DROP COLUMN "spent_micro"`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" DROP COLUMN "spend_period_start"`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" DROP COLUMN "expires_at"`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" DROP COLUMN "rate_limit_concurrency"`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" DROP COLUMN "rate_limit_rpm"`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" DROP COLUMN "models"`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" DROP COLUMN "budget_period"`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" DROP COLUMN "budget_unit"`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" DROP COLUMN "budget_limit"`);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" DROP COLUMN "metadata"`);
  }
}
