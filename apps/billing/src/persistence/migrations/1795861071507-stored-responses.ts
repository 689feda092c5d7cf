import type { MigrationInterface, QueryRunner } from 'typeorm';

export class StoredResponses1795861071507 implements MigrationInterface {
  name = 'StoredResponses1795861071507';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "billing"."responses" ("id" text NOT NULL, "account_id" uuid NOT NULL, "previous_response_id" text, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL, "response" jsonb NOT NULL, "items_bytes" integer NOT NULL, CONSTRAINT "PK_be3bdac59bd243dff421ad7bf70" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE INDEX "IDX_1e71b69ad19a1e4eb74d243c13" ON "billing"."responses"  ("created_at") `);
    await queryRunner.query(`CREATE TABLE "billing"."response_items" ("response_id" text NOT NULL, "position" integer NOT NULL, "is_output" boolean NOT NULL, "account_id" uuid NOT NULL, "item_id" text NOT NULL, "item" jsonb NOT NULL, CONSTRAINT "PK_9c10df7842e33cae550761a1b27" PRIMARY KEY ("response_id", "position"))`);
    await queryRunner.query(`CREATE INDEX "IDX_d0caa3eb6aace47de82a79271a" ON "billing"."response_items"  ("account_id", "item_id") `);
    await queryRunner.query(`ALTER TABLE "billing"."responses" ADD CONSTRAINT "FK_fd933193e10846614748375ab3d" FOREIGN KEY ("account_id") REFERENCES "billing"."accounts"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
    await queryRunner.query(`ALTER TABLE "billing"."response_items" ADD CONSTRAINT "FK_e7fb6da8103c73247821e901f40" FOREIGN KEY ("response_id") REFERENCES "billing"."responses"("id") ON DELETE CASCADE ON UPDATE NO ACTION`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."response_items" DROP CONSTRAINT "FK_e7fb6da8103c73247821e901f40"`);
    await queryRunner.query(`ALTER TABLE "billing"."responses" DROP CONSTRAINT "FK_fd933193e10846614748375ab3d"`);
    await queryRunner.query(`DROP INDEX "billing"."IDX_d0caa3eb6aace47de82a79271a"`);
    await queryRunner.query(`DROP TABLE "billing"."response_items"`);
    await queryRunner.query(`DROP INDEX "billing"."IDX_1e71b69ad19a1e4eb74d243c13"`);
    await queryRunner.query(`DROP TABLE "billing"."responses"`);
  }
}
