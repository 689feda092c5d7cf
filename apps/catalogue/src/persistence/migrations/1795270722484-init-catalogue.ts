import type { MigrationInterface, QueryRunner } from 'typeorm';

export class InitCatalogue1795270722484 implements MigrationInterface {
  name = 'InitCatalogue1795270722484';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`CREATE TABLE "catalogue"."models" ("id" text NOT NULL, "definition" jsonb NOT NULL, "status" text NOT NULL DEFAULT 'active', "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), "updated_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_ef9ed7160ea69013636466bf2d5" PRIMARY KEY ("id"))`);
    await queryRunner.query(`CREATE TABLE "catalogue"."revisions" ("revision" SERIAL NOT NULL, "reason" text NOT NULL, "created_at" TIMESTAMP WITH TIME ZONE NOT NULL DEFAULT now(), CONSTRAINT "PK_7156b0ad93dee8590e31d259e29" PRIMARY KEY ("revision"))`);
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`DROP TABLE "catalogue"."revisions"`);
    await queryRunner.query(`DROP TABLE "catalogue"."models"`);
  }
}
