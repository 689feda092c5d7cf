import { Injectable, Logger, type BeforeApplicationShutdown } from '@nestjs/common';
import type { KeySpendWire } from '@igw/contracts';
import { CREDIT_SCALE, formatScaled, parseDecimal, periodEndOf, periodStartOf, toScaledUnits, USD_SCALE, type BudgetPeriod } from '@igw/domain';
import { MessagingService } from '@igw/messaging';
import type { EntityManager } from 'typeorm';

/** Usage of one key that occurred on one UTC day, as the ledger transaction just inserted it. */
export interface KeyUsage {
  keyId: string;
  /** The UTC day the usage occurred on (a day and a month period never split one). */
  day: Date;
  /** Charged, as a positive amount. */
  spentMicro: bigint;
  /** Charged in USD, as a positive exact decimal. */
  spentUsd: string;
}

/** Told, inside the ledger transaction, how keys' spend moved (see KeySpendLedger.addListener). */
export type KeySpendListener = (manager: EntityManager, changes: readonly KeySpendChange[]) => Promise<void>;

/** A key's spend in the period it counts. */
export interface KeySpendState {
  /** Start of the period counted; null without a budget. */
  periodStart: Date | null;
  spentMicro: bigint;
  /** Exact decimal string. */
  spentUsd: string;
}

/**
 * What one ledger transaction did to a key's spend: before and after, with the budget in force.
 * This is the hook for whatever must know when a key crosses a share of its budget (alerts):
 * `KeySpendLedger.applyUsage` returns these inside the transaction that wrote the ledger rows.
 */
export interface KeySpendChange {
  keyId: string;
  accountId: string;
  /** The key's name as the transaction read it (alerts show it), null when it has none. */
  keyName: string | null;
  budget: { limit: string; unit: 'usd' | 'credits'; period: BudgetPeriod } | null;
  before: KeySpendState;
  after: KeySpendState;
  /** Every usage charge of the key ever applied, after this transaction. */
  appliedMicro: bigint;
  version: number;
}

/**
 * Whether a change took the key's spend across `percent` % of its budget (80, 100): below it
 * before, at or above it after. A new period starts from nothing. Exact: compared in the
 * budget's unit as integers.
 */
export function crossedBudgetPercent(change: KeySpendChange, percent: number): boolean {
  const budget = change.budget;
  if (!budget) return false;
  const scale = budget.unit === 'credits' ? CREDIT_SCALE : USD_SCALE;
  const limit = toScaledUnits(parseDecimal(budget.limit), scale);
  const spent = (state: KeySpendState) => (budget.unit === 'credits' ? state.spentMicro : usdUnits(state.spentUsd));
  const reached = (state: KeySpendState) => spent(state) * 100n >= BigInt(percent) * limit && spent(state) > 0n;
  const samePeriod = change.before.periodStart?.getTime() === change.after.periodStart?.getTime();
  return !(samePeriod && reached(change.before)) && reached(change.after);
}

interface LockedKey {
  id: string;
  account_id: string;
  name: string | null;
  budget_limit: string | null;
  budget_unit: 'usd' | 'credits' | null;
  budget_period: BudgetPeriod | null;
  spend_period_start: Date | null;
  spent_micro: string;
  spent_usd: string;
  usage_applied_micro: string;
  spend_version: string;
}

const usdUnits = (decimal: string): bigint => toScaledUnits(parseDecimal(decimal), USD_SCALE);
const usdText = (units: bigint): string => formatScaled(units, USD_SCALE);

/**
 * Keeps each key's spend in its budget's current period exactly: moved in the transaction that
 * writes the ledger rows it sums (after the accounts, so every writer locks in the same order),
 * and recomputed from the ledger when the budget changes. A row counts in the period it occurred
 * in (UTC); a row that arrives after its period ended counts in no current period.
 */
@Injectable()
export class KeySpendLedger {
  private readonly listeners: KeySpendListener[] = [];

  /**
   * Runs `listener` inside every ledger transaction that moved keys' spend, after the move: what
   * it writes with `manager` commits or rolls back with the ledger rows (e.g. an alert's outbox
   * row, once per crossing). A listener that throws fails the transaction, which is retried.
   */
  addListener(listener: KeySpendListener): void {
    this.listeners.push(listener);
  }

  /** Moves the spend of every key in `usage` and returns each key's before and after (see KeySpendChange). */
  async applyUsage(manager: EntityManager, usage: readonly KeyUsage[]): Promise<KeySpendChange[]> {
    if (usage.length === 0) return [];
    const byKey = new Map<string, KeyUsage[]>();
    for (const entry of usage) {
      const id = entry.keyId.toLowerCase();
      let list = byKey.get(id);
      if (!list) byKey.set(id, (list = []));
      list.push(entry);
    }
    const locked: LockedKey[] = await manager.query(
      `SELECT id::text, account_id::text, name, budget_limit, budget_unit, budget_period, spend_period_start, spent_micro, spent_usd::text, usage_applied_micro, spend_version
         FROM "billing"."api_keys" WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`,
      [[...byKey.keys()]],
    );
    const changes: KeySpendChange[] = [];
    for (const key of locked) {
      const entries = (byKey.get(key.id) ?? []).sort((a, b) => a.day.getTime() - b.day.getTime());
      const before: KeySpendState = { periodStart: key.spend_period_start, spentMicro: BigInt(key.spent_micro), spentUsd: usdText(usdUnits(key.spent_usd)) };
      let periodStart = before.periodStart;
      let spentMicro = before.spentMicro;
      let spentUsd = usdUnits(before.spentUsd);
      let appliedMicro = BigInt(key.usage_applied_micro);
      for (const entry of entries) {
        appliedMicro += entry.spentMicro;
        if (!key.budget_period) continue;
        const start = periodStartOf(key.budget_period, entry.day);
        if (periodStart === null || start.getTime() > periodStart.getTime()) {
          periodStart = start;
          spentMicro = 0n;
          spentUsd = 0n;
        }
        if (start.getTime() === periodStart.getTime()) {
          spentMicro += entry.spentMicro;
          spentUsd += usdUnits(entry.spentUsd);
        }
      }
      changes.push({
        keyId: key.id,
        accountId: key.account_id,
        keyName: key.name,
        budget: key.budget_limit !== null && key.budget_unit && key.budget_period ? { limit: key.budget_limit, unit: key.budget_unit, period: key.budget_period } : null,
        before,
        after: { periodStart, spentMicro, spentUsd: usdText(spentUsd) },
        appliedMicro,
        version: Number(key.spend_version) + 1,
      });
    }
    if (changes.length > 0) {
      await manager.query(
        `UPDATE "billing"."api_keys" k
            SET spend_period_start = c.period_start, spent_micro = c.spent_micro, spent_usd = c.spent_usd,
                usage_applied_micro = c.applied_micro, spend_version = c.version
           FROM unnest($1::uuid[], $2::timestamptz[], $3::bigint[], $4::numeric[], $5::bigint[], $6::bigint[])
             AS c(id, period_start, spent_micro, spent_usd, applied_micro, version)
          WHERE k.id = c.id`,
        [
          changes.map((change) => change.keyId),
          changes.map((change) => change.after.periodStart?.toISOString() ?? null),
          changes.map((change) => change.after.spentMicro.toString()),
          changes.map((change) => change.after.spentUsd),
          changes.map((change) => change.appliedMicro.toString()),
          changes.map((change) => change.version),
        ],
      );
      for (const listener of this.listeners) await listener(manager, changes);
    }
    return changes;
  }

  /**
   * Sets a key's spend to the sum of its usage rows in the period `now` falls in (or clears it
   * without a budget), inside the caller's transaction, which has locked the key's row: a ledger
   * transaction waiting on that lock adds its rows after, one that committed before is summed.
   */
  async recompute(manager: EntityManager, keyId: string, period: BudgetPeriod | null, now: Date): Promise<KeySpendState> {
    if (!period) return { periodStart: null, spentMicro: 0n, spentUsd: '0' };
    const periodStart = periodStartOf(period, now);
    const periodEnd = periodEndOf(period, periodStart);
    const [row]: Array<{ spent_micro: string; spent_usd: string }> = await manager.query(
      `SELECT COALESCE(-SUM(amount_micro), 0)::text AS spent_micro, COALESCE(-SUM(usd), 0)::text AS spent_usd
         FROM "billing"."ledger_entries"
        WHERE key_id = $1 AND kind = 'usage' AND occurred_at >= $2 AND ($3::timestamptz IS NULL OR occurred_at < $3)`,
      [keyId, periodStart.toISOString(), periodEnd?.toISOString() ?? null],
    );
    return { periodStart, spentMicro: BigInt(row.spent_micro), spentUsd: usdText(usdUnits(row.spent_usd)) };
  }
}

/** Usage moves a busy key's spend many times a second; gateways need only the latest. */
const COALESCE_MS = 100;

/** Tells every gateway about key spend changes: the newest version per key at most every 100 ms (rule changes at once). */
@Injectable()
export class KeySpendAnnouncer implements BeforeApplicationShutdown {
  private readonly logger = new Logger(KeySpendAnnouncer.name);
  private readonly pending = new Map<string, KeySpendWire>();
  private timer?: NodeJS.Timeout;

  constructor(private readonly messaging: MessagingService) {}

  static wire(keyId: string, version: number, spend: KeySpendState, appliedMicro: bigint): KeySpendWire {
    return { keyId, version, periodStart: spend.periodStart?.getTime() ?? 0, spentMicro: spend.spentMicro.toString(), appliedMicro: appliedMicro.toString() };
  }

  async now(spend: KeySpendWire): Promise<void> {
    this.pending.delete(spend.keyId);
    await this.messaging.publish('billing.keys.spend.changed', spend);
  }

  soon(changes: readonly KeySpendChange[]): void {
    for (const change of changes) {
      // Gateways hold only budgeted keys to their spend; a budget set later comes with its own announcement.
      if (!change.budget) continue;
      const known = this.pending.get(change.keyId);
      if (!known || change.version > known.version) this.pending.set(change.keyId, KeySpendAnnouncer.wire(change.keyId, change.version, change.after, change.appliedMicro));
    }
    if (this.pending.size > 0) this.timer ??= setTimeout(() => void this.flush(), COALESCE_MS);
  }

  async beforeApplicationShutdown(): Promise<void> {
    await this.flush();
  }

  private async flush(): Promise<void> {
    clearTimeout(this.timer);
    this.timer = undefined;
    const spends = [...this.pending.values()];
    this.pending.clear();
    await Promise.all(
      spends.map((spend) =>
        this.messaging.publish('billing.keys.spend.changed', spend).catch((error: unknown) => this.logger.warn(`spend of key ${spend.keyId} not announced: ${String(error)}`)),
      ),
    );
  }
}
