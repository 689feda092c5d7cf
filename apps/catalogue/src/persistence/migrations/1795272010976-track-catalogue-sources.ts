import type { MigrationInterface, QueryRunner } from 'typeorm';

export class TrackCatalogueSources1795272010976 implements MigrationInterface {
  name = 'TrackCatalogueSources1795272010976';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "catalogue"."models" ADD "source" text NOT NULL DEFAULT 'file'`);
    await queryRunner.query(`ALTER TABLE "catalogue"."models" ADD "file_definition" json`);
    // Converted in place (json keeps the authored key order); every row so far came from the file.
    await queryRunner.query(`ALTER TABLE "catalogue"."models" ALTER COLUMN "definition" TYPE json USING "definition"::json`);
    await queryRunner.query(`UPDATE "catalogue"."models" SET "file_definition" = "definition"`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "catalogue"."models" ALTER COLUMN "definition" TYPE jsonb USING "definition"::jsonb`);
    await queryRunner.query(`ALTER TABLE "catalogue"."models" DROP COLUMN "file_definition"`);
    await queryRunner.query(`ALTER TABLE "catalogue"."models" DROP COLUMN "source"`);
  }
}
