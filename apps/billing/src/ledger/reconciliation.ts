import { microToCredits } from '@igw/domain';

/**
 * Anything that runs SQL: a TypeORM DataSource or EntityManager (answers rows) or a pg
 * Client/Pool (answers `{ rows }`). No Nest, so the command line can use it with a bare pg client.
 */
export interface SqlQueryable {
  query(text: string, parameters?: unknown[]): Promise<unknown>;
}

export interface BalanceMismatch {
  accountId: string;
  /** The account's stored balance, in credits. */
  balance: number;
  /** The sum of the account's ledger entries, in credits. */
  ledger: number;
  /** balance - ledger, in credits. */
  difference: number;
  /** The same three amounts in micro-credits, exact (integers as strings). */
  balanceMicro: string;
  ledgerMicro: string;
  differenceMicro: string;
}

/** An account whose running usage total (what gateways count their unapplied spending against) is not its ledger's. */
export interface UsageTotalMismatch {
  accountId: string;
  /** The account's stored total of usage charges, micro-credits. */
  usageSpentMicro: string;
  /** The sum of its usage ledger entries' charges, micro-credits. */
  ledgerUsageMicro: string;
}

export interface ReconciliationReport {
  /** Accounts checked. */
  accounts: number;
  mismatches: BalanceMismatch[];
  usageMismatches: UsageTotalMismatch[];
  /** When the database took the snapshot that was checked, ISO 8601. */
  checkedAt: string;
}

interface ReconciliationRow {
  accounts: string;
  checked_at: Date | string;
  mismatches: Array<{ accountId: string; balanceMicro: string; ledgerMicro: string }> | null;
  usage_mismatches: UsageTotalMismatch[] | null;
}

/**
 * Checks that every account's balance_micro equals the sum of its ledger entries' amount_micro,
 * and its usage_spent_micro the charges of its usage entries.
 * One statement, so balances and entries are read from the same snapshot even while usage is
 * being applied (a balance moves in the same transaction as its entry).
 */
export async function reconcileBalances(database: SqlQueryable): Promise<ReconciliationReport> {
  const result = await database.query(
    `WITH ledger AS (
       SELECT account_id, sum(amount_micro) AS total, -COALESCE(sum(amount_micro) FILTER (WHERE kind = 'usage'), 0) AS usage_total
         FROM "billing"."ledger_entries" GROUP BY account_id
     ),
     checked AS (
       SELECT a.id, a.balance_micro, a.usage_spent_micro, COALESCE(l.total, 0) AS ledger_total, COALESCE(l.usage_total, 0) AS ledger_usage_total
         FROM "billing"."accounts" a LEFT JOIN ledger l ON l.account_id = a.id
     )
     SELECT (SELECT count(*) FROM checked)::text AS accounts,
            now() AS checked_at,
            (SELECT json_agg(json_build_object('accountId', id, 'balanceMicro', balance_micro::text, 'ledgerMicro', ledger_total::text) ORDER BY id)
               FROM checked WHERE balance_micro <> ledger_total) AS mismatches,
            (SELECT json_agg(json_build_object('accountId', id, 'usageSpentMicro', usage_spent_micro::text, 'ledgerUsageMicro', ledger_usage_total::text) ORDER BY id)
               FROM checked WHERE usage_spent_micro <> ledger_usage_total) AS usage_mismatches`,
  );
  const rows = (Array.isArray(result) ? result : (result as { rows: unknown[] }).rows) as ReconciliationRow[];
  const row = rows[0];
  if (!row) throw new Error('The reconciliation query answered no row');
  const mismatches = (row.mismatches ?? []).map((mismatch): BalanceMismatch => {
    const balanceMicro = BigInt(mismatch.balanceMicro);
    const ledgerMicro = BigInt(mismatch.ledgerMicro);
    const differenceMicro = balanceMicro - ledgerMicro;
    return {
      accountId: mismatch.accountId,
      balance: microToCredits(balanceMicro),
      ledger: microToCredits(ledgerMicro),
      difference: microToCredits(differenceMicro),
      balanceMicro: balanceMicro.toString(),
      ledgerMicro: ledgerMicro.toString(),
      differenceMicro: differenceMicro.toString(),
    };
  });
  return { accounts: Number(row.accounts), mismatches, usageMismatches: row.usage_mismatches ?? [], checkedAt: new Date(row.checked_at).toISOString() };
}
