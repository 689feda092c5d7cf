import { Injectable, Logger } from '@nestjs/common';
import type { UsageEvent } from '@igw/contracts';
import { DataSource } from 'typeorm';
import { AccountsService, type BalanceChange } from '../accounts/accounts.service';
import { BalanceAnnouncer } from '../accounts/balance-announcer';

@Injectable()
export class LedgerService {
  private readonly logger = new Logger(LedgerService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly accounts: AccountsService,
    private readonly announcer: BalanceAnnouncer,
  ) {}

  /**
   * Writes the usage entry and moves the balance in one transaction. The unique request id
   * turns a repeated event into a no-op, so redelivery can never charge twice.
   */
  /**
   * A gateway's batch in one transaction: every new entry inserted (repeats are skipped by
   * the unique request id), then each account's balance moved once by their sum, in account
   * order so concurrent batches cannot deadlock. If the batch cannot be applied as a whole
   * (say one event names an account that does not exist), its events are applied one by
   * one, so the others are not held back by it. Returns how many were new.
   */
  async applyUsageBatch(events: UsageEvent[]): Promise<number> {
    if (events.length === 0) return 0;
    let changes: BalanceChange[];
    let applied = 0;
    try {
      changes = await this.dataSource.transaction(async (manager) => {
        const inserted: Array<{ account_id: string; spent: string; entries: number }> = await manager.query(
          `WITH inserted AS (
             INSERT INTO "billing"."ledger_entries"
               (account_id, kind, request_id, key_id, model, endpoint, units, amount_micro, usd, catalogue_revision, prices, occurred_at)
             SELECT e.account_id, 'usage', e.request_id, e.key_id, e.model, e.endpoint, e.units, -e.credits_micro, -e.usd, e.catalogue_revision, e.prices, e.occurred_at
               FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::jsonb[], $7::bigint[], $8::numeric[], $9::integer[], $10::jsonb[], $11::timestamptz[])
                 AS e(account_id, request_id, key_id, model, endpoint, units, credits_micro, usd, catalogue_revision, prices, occurred_at)
             ON CONFLICT (request_id) DO NOTHING
             RETURNING account_id, amount_micro
           )
           SELECT account_id, (-SUM(amount_micro))::text AS spent, COUNT(*)::integer AS entries FROM inserted GROUP BY account_id ORDER BY account_id`,
          [
            events.map((event) => event.accountId),
            events.map((event) => event.requestId),
            events.map((event) => event.keyId),
            events.map((event) => event.model),
            events.map((event) => event.endpoint),
            events.map((event) => JSON.stringify(event.units)),
            events.map((event) => event.creditsMicro),
            events.map((event) => event.usd),
            events.map((event) => event.catalogueRevision),
            events.map((event) => JSON.stringify(event.prices ?? null)),
            events.map((event) => event.occurredAt),
          ],
        );
        const moved: BalanceChange[] = [];
        for (const row of inserted) {
          moved.push(await this.accounts.adjustBalance(manager, row.account_id, -BigInt(row.spent), 'usage'));
          applied += row.entries;
        }
        return moved;
      });
    } catch (error) {
      this.logger.warn(`A usage batch of ${events.length} could not be applied as a whole (${error instanceof Error ? error.message : String(error)}); applying its events one by one`);
      applied = 0;
      const failures: unknown[] = [];
      for (const event of events) {
        try {
          if ((await this.applyUsage(event)).applied) applied++;
        } catch (failure) {
          failures.push(failure);
        }
      }
      // The job is retried for the events that failed; those already applied are skipped then.
      if (failures.length > 0) throw failures[0];
      return applied;
    }
    for (const change of changes) this.announcer.soon(change);
    return applied;
  }

  async applyUsage(event: UsageEvent): Promise<{ applied: boolean }> {
    const change = await this.dataSource.transaction(async (manager) => {
      const inserted: Array<{ id: string }> = await manager.query(
        `INSERT INTO "billing"."ledger_entries"
           (account_id, kind, request_id, key_id, model, endpoint, units, amount_micro, usd, catalogue_revision, prices, occurred_at)
         VALUES ($1, 'usage', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         ON CONFLICT (request_id) DO NOTHING
         RETURNING id`,
        [
          event.accountId,
          event.requestId,
          event.keyId,
          event.model,
          event.endpoint,
          JSON.stringify(event.units),
          (-BigInt(event.creditsMicro)).toString(),
          negate(event.usd),
          event.catalogueRevision,
          JSON.stringify(event.prices ?? null),
          event.occurredAt,
        ],
      );
      if (inserted.length === 0) return null;
      return this.accounts.adjustBalance(manager, event.accountId, -BigInt(event.creditsMicro), 'usage');
    });
    if (!change) {
      this.logger.debug(`Usage of request ${event.requestId} was already applied`);
      return { applied: false };
    }
    this.announcer.soon(change);
    return { applied: true };
  }
}

function negate(decimal: string): string {
  if (/^0(\.0*)?$/.test(decimal)) return decimal;
  return decimal.startsWith('-') ? decimal.slice(1) : `-${decimal}`;
}
