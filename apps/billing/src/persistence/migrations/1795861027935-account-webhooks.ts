import type { MigrationInterface, QueryRunner } from 'typeorm';

export class AccountWebhooks1795861027935 implements MigrationInterface {
  name = 'AccountWebhooks1795861027935';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "billing"."account_webhooks" ("account_id" uuid NOT NULL, "url" text NOT NULL, "secret" text NOT NULL, "balance_threshold_micro" bigint, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_da9df9aba3151826c30b95e1118" PRIMARY KEY ("account_id"))`);
    await queryRunner.query(`CREATE TABLE "billing"."webhook_events" ("id" uuid NOT NULL, "account_id" uuid NOT NULL, "type" text NOT NULL, "dedupe_key" text NOT NULL, "body" text NOT NULL, "status" text NOT NULL DEFAULT 'pending', "attempts" integer NOT NULL DEFAULT '0', "last_status" integer, "last_error" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "delivered_at" TIMESTAMP WITH TIME ZONE, CONSTRAINT "PK_4cba37e6a0acb5e1fc49c34ebfd" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE UNIQUE INDEX "IDX_c64daa91cce26db387bc965e00" ON "billing"."webhook_events"  ("dedupe_key") `);
    await queryRunner.query(`CREATE INDEX "IDX_webhook_events_pending" ON "billing"."webhook_events"  ("created_at") WHERE status = 'pending'`);
    await queryRunner.query(`CREATE INDEX "IDX_25ffceb2ea51fdc8b21d84c0ec" ON "billing"."webhook_events"  ("account_id", "created_at") `);
    await queryRunner.query(`ALTER TABLE "billing"."account_webhooks" ADD CONSTRAINT "FK_da9df9aba3151826c30b95e1118" FOREIGN KEY ("account_id") REFERENCES "billing"."accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."account_webhooks" DROP CONSTRAINT "FK_da9df9aba3151826c30b95e1118"`);
    await queryRunner.query(`DROP INDEX "billing"."IDX_25ffceb2ea51fdc8b21d84c0ec"`);
    await queryRunner.query(`DROP INDEX "billing"."IDX_webhook_events_pending"`);
    await queryRunner.query(`DROP INDEX "billing"."IDX_c64daa91cce26db387bc965e00"`);
    await queryRunner.query(`DROP TABLE "billing"."webhook_events"`);
    await queryRunner.query(`DROP TABLE "billing"."account_webhooks"`);
  }
}
