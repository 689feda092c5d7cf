import type { MigrationInterface, QueryRunner } from 'typeorm';

export class StoredResponseOwnersAndQuotas1796168731018 implements MigrationInterface {
  name = 'StoredResponseOwnersAndQuotas1796168731018';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."responses" ADD "key_id" uuid`);
    await queryRunner.query(`CREATE INDEX "IDX_5b842131fdf862311b19232041" ON "billing"."responses"  ("account_id", "created_at") `);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP INDEX "billing"."IDX_5b842131fdf862311b19232041"`);
    await queryRunner.query(`ALTER TABLE "billing"."responses" DROP COLUMN "key_id"`);
  }
}
