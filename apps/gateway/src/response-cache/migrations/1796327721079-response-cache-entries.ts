import type { MigrationInterface, QueryRunner } from 'typeorm';

export class ResponseCacheEntries1796327721079 implements MigrationInterface {
  name = 'ResponseCacheEntries1796327721079';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE UNLOGGED TABLE "gateway"."response_cache_entries" ("account_id" uuid NOT NULL, "key_id" text NOT NULL, "hash" text NOT NULL, "writer_key_id" text NOT NULL, "model" text NOT NULL, "value" bytea NOT NULL, "bytes" integer NOT NULL, "stored_at" TIMESTAMP WITH TIME ZONE NOT NULL, "expires_at" TIMESTAMP WITH TIME ZONE NOT NULL, CONSTRAINT "PK_55452df765f844eb7ca7ae0f3d6" PRIMARY KEY ("account_id", "key_id", "hash"))`);
    await queryRunner.query(`CREATE INDEX "response_cache_entries_expiry" ON "gateway"."response_cache_entries"  ("expires_at") `);
    await queryRunner.query(`CREATE INDEX "response_cache_entries_account_stored" ON "gateway"."response_cache_entries"  ("account_id", "stored_at") `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "gateway"."response_cache_entries_account_stored"`);
    await queryRunner.query(`DROP INDEX "gateway"."response_cache_entries_expiry"`);
    await queryRunner.query(`DROP TABLE "gateway"."response_cache_entries"`);
  }
}
