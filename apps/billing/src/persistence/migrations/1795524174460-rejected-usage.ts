import type { MigrationInterface, QueryRunner } from 'typeorm';

export class RejectedUsage1795524174460 implements MigrationInterface {
  name = 'RejectedUsage1795524174460';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "billing"."rejected_usage" ("id" BIGSERIAL NOT NULL, "request_id" text, "account_id" text, "reason" text NOT NULL, "event" jsonb NOT NULL, "rejected_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_9c7c20cca6328141860da1278e4" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE UNIQUE INDEX "IDX_2ac21bb071dbdf9e1983cb1f18" ON "billing"."rejected_usage"  ("request_id") `);
    await queryRunner.query(`CREATE INDEX "IDX_f457be3122108d9a8816272d60" ON "billing"."rejected_usage"  ("rejected_at") `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "billing"."IDX_f457be3122108d9a8816272d60"`);
    await queryRunner.query(`DROP INDEX "billing"."IDX_2ac21bb071dbdf9e1983cb1f18"`);
    await queryRunner.query(`DROP TABLE "billing"."rejected_usage"`);
  }
}
