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

/** A key whose stored spend (in its budget's period) or usage total is not the sum of its usage ledger entries. */
export interface KeySpendMismatch {
  keyId: string;
  /** The key's stored spend in the period it counts, micro-credits (0 without a budget). */
  spentMicro: string;
  /** The charges of its usage entries that occurred in that period, micro-credits. */
  ledgerSpentMicro: string;
  /** The key's stored total of usage charges, micro-credits. */
  usageAppliedMicro: string;
  /** The charges of all its usage entries, micro-credits. */
  ledgerUsageMicro: string;
}

export interface ReconciliationReport {
  /** Accounts checked. */
  accounts: number;
  mismatches: BalanceMismatch[];
  usageMismatches: UsageTotalMismatch[];
  keyMismatches: KeySpendMismatch[];
  /** When the database took the snapshot that was checked, ISO 8601. */
  checkedAt: string;
}

interface ReconciliationRow {
  accounts: string;
  checked_at: Date | string;
  mismatches: Array<{ accountId: string; balanceMicro: string; ledgerMicro: string }> | null;
  usage_mismatches: UsageTotalMismatch[] | null;
  key_mismatches: KeySpendMismatch[] | null;
}

/**
 * Checks that every account's balance_micro equals the sum of its ledger entries' amount_micro,
 * and its usage_spent_micro the charges of its usage entries; and every key's usage total and
 * spend in its budget's period (UTC) the charges of its usage entries (in that period).
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
     ),
     key_periods AS (
       SELECT id, spent_micro, usage_applied_micro, spend_period_start AS period_start,
              CASE budget_period
                WHEN 'day' THEN spend_period_start + interval '1 day'
                WHEN 'month' THEN (spend_period_start AT TIME ZONE 'UTC' + interval '1 month') AT TIME ZONE 'UTC'
              END AS period_end
         FROM "billing"."api_keys"
     ),
     key_checked AS (
       SELECT k.id, k.spent_micro, k.usage_applied_micro,
              COALESCE(-sum(e.amount_micro) FILTER (WHERE k.period_start IS NOT NULL AND e.occurred_at >= k.period_start AND (k.period_end IS NULL OR e.occurred_at < k.period_end)), 0) AS ledger_spent,
              COALESCE(-sum(e.amount_micro), 0) AS ledger_usage
         FROM key_periods k LEFT JOIN "billing"."ledger_entries" e ON e.key_id = k.id AND e.kind = 'usage'
        GROUP BY k.id, k.spent_micro, k.usage_applied_micro
     )
     SELECT (SELECT count(*) FROM checked)::text AS accounts,
            now() AS checked_at,
            (SELECT json_agg(json_build_object('accountId', id, 'balanceMicro', balance_micro::text, 'ledgerMicro', ledger_total::text) ORDER BY id)
               FROM checked WHERE balance_micro <> ledger_total) AS mismatches,
            (SELECT json_agg(json_build_object('accountId', id, 'usageSpentMicro', usage_spent_micro::text, 'ledgerUsageMicro', ledger_usage_total::text) ORDER BY id)
               FROM checked WHERE usage_spent_micro <> ledger_usage_total) AS usage_mismatches,
            (SELECT json_agg(json_build_object('keyId', id, 'spentMicro', spent_micro::text, 'ledgerSpentMicro', ledger_spent::text,
                                               'usageAppliedMicro', usage_applied_micro::text, 'ledgerUsageMicro', ledger_usage::text) ORDER BY id)
               FROM key_checked WHERE spent_micro <> ledger_spent OR usage_applied_micro <> ledger_usage) AS key_mismatches`,
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
  return {
    accounts: Number(row.accounts),
    mismatches,
    usageMismatches: row.usage_mismatches ?? [],
    keyMismatches: row.key_mismatches ?? [],
    checkedAt: new Date(row.checked_at).toISOString(),
  };
}
