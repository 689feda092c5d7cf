import type { MigrationInterface, QueryRunner } from 'typeorm';

export class InitBilling1795270721956 implements MigrationInterface {
  name = 'InitBilling1795270721956';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "billing"."accounts" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "name" text NOT NULL, "plan" text NOT NULL, "balance_micro" bigint NOT NULL, "balance_version" bigint NOT NULL DEFAULT '0', "low_balance_threshold_micro" bigint NOT NULL, "status" text NOT NULL DEFAULT 'active', "auto_debit" text NOT NULL DEFAULT 'disabled', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_5a7a02c20412299d198e097a8fe" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE TABLE "billing"."api_keys" ("id" uuid NOT NULL DEFAULT gen_random_uuid(), "account_id" uuid NOT NULL, "name" text, "prefix" text NOT NULL, "key_hash" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "revoked_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_5c8a79801b44bd27b79228e1dad" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "IDX_decaf331589778e33441b2a8d9" ON "billing"."api_keys"  ("account_id") `);
    await queryRunner.query(`CREATE UNIQUE INDEX "IDX_57384430aa1959f4578046c9b8" ON "billing"."api_keys"  ("key_hash") `);
    await queryRunner.query(`CREATE TABLE "billing"."ledger_entries" ("id" BIGSERIAL NOT NULL, "account_id" uuid NOT NULL, "kind" text NOT NULL, "request_id" text, "key_id" uuid, "model" text, "endpoint" text, "units" jsonb, "amount_micro" bigint NOT NULL, "usd" numeric(38,15) NOT NULL, "catalogue_revision" integer, "reason" text, "occurred_at" TIMESTAMP WITH TIME ZONE NOT NULL, "recorded_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_6efcb84411d3f08b08450ae75d5" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE UNIQUE INDEX "IDX_817ba4ab283e3e57bf56be27e8" ON "billing"."ledger_entries"  ("request_id") `);
    await queryRunner.query(`CREATE INDEX "IDX_f76effda15b64df05d793a4ce6" ON "billing"."ledger_entries"  ("account_id", "occurred_at") `);
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" ADD CONSTRAINT "FK_decaf331589778e33441b2a8d9e" FOREIGN KEY ("account_id") REFERENCES "billing"."accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."api_keys" DROP CONSTRAINT "FK_decaf331589778e33441b2a8d9e"`);
    await queryRunner.query(`DROP INDEX "billing"."IDX_f76effda15b64df05d793a4ce6"`);
    await queryRunner.query(`DROP INDEX "billing"."IDX_817ba4ab283e3e57bf56be27e8"`);
    await queryRunner.query(`DROP TABLE "billing"."ledger_entries"`);
    await queryRunner.query(`DROP INDEX "billing"."IDX_57384430aa1959f4578046c9b8"`);
    await queryRunner.query(`DROP INDEX "billing"."IDX_decaf331589778e33441b2a8d9"`);
    await queryRunner.query(`DROP TABLE "billing"."api_keys"`);
    await queryRunner.query(`DROP TABLE "billing"."accounts"`);
  }
}
