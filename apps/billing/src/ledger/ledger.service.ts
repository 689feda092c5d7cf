import { Injectable, Logger } from '@nestjs/common';
import type { UsageEvent } from '@igw/contracts';
import { DataSource } from 'typeorm';
import { AccountsService } from '../accounts/accounts.service';
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
      return this.accounts.adjustBalance(manager, event.accountId, -BigInt(event.creditsMicro));
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
