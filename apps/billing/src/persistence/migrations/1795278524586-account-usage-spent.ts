import type { MigrationInterface, QueryRunner } from 'typeorm';

export class AccountUsageSpent1795278524586 implements MigrationInterface {
  name = 'AccountUsageSpent1795278524586';

  async up(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."accounts" ADD "usage_spent_micro" bigint NOT NULL DEFAULT '0'`);
    // Existing accounts start from what their ledger already charged for usage.
    await queryRunner.query(
      `UPDATE "billing"."accounts" a
          SET usage_spent_micro = spent.total
         FROM (SELECT account_id, -SUM(amount_micro) AS total FROM "billing"."ledger_entries" WHERE kind = 'usage' GROUP BY account_id) spent
        WHERE spent.account_id = a.id`,
    );
  }

  async down(queryRunner: QueryRunner): Promise<void> {
    await queryRunner.query(`ALTER TABLE "billing"."accounts" DROP COLUMN "usage_spent_micro"`);
  }
}
