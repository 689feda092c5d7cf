import { Inject, Injectable, Logger } from '@nestjs/common';
import type { UsageEvent } from '@igw/contracts';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { wellFormedClientRequestId } from '@igw/http';
import { DataSource } from 'typeorm';
import { AccountsService, type BalanceChange } from '../accounts/accounts.service';
import { BalanceAnnouncer } from '../accounts/balance-announcer';
import { KeySpendAnnouncer, KeySpendLedger, type KeySpendChange } from '../keys/key-spend';
import { observeLedgerLag, usageEventsRejected } from './ledger-metrics';
import { usageEventProblem } from './usage-event-validation';

@Injectable()
export class LedgerService {
  private readonly logger = new Logger(LedgerService.name);

  constructor(
    private readonly dataSource: DataSource,
    private readonly accounts: AccountsService,
    private readonly announcer: BalanceAnnouncer,
    private readonly keySpend: KeySpendLedger,
    private readonly keySpendAnnouncer: KeySpendAnnouncer,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  /**
   * Applies a gateway's batch in one transaction: new entries inserted (the unique request id
   * skips repeats), then each account's balance moved once, in account order so concurrent
   * batches cannot deadlock. A batch that fails as a whole is applied event by event, so one bad
   * event does not hold back the others. Returns how many events were new.
   */
  async applyUsageBatch(candidates: readonly unknown[]): Promise<number> {
    const events = await this.admissible(candidates);
    if (events.length === 0) return 0;
    let changes: { moved: BalanceChange[]; keys: KeySpendChange[] };
    let applied = 0;
    try {
      changes = await this.dataSource.transaction(async (manager) => {
        const inserted: InsertedUsage[] = await manager.query(
          `WITH inserted AS (
             INSERT INTO "billing"."ledger_entries"
               (account_id, kind, request_id, key_id, model, endpoint, units, amount_micro, usd, catalogue_revision, prices, occurred_at, client_request_id, deployment, cache, cache_saved_usd)
             SELECT e.account_id, 'usage', e.request_id, e.key_id, e.model, e.endpoint, e.units, -e.credits_micro, -e.usd, e.catalogue_revision, e.prices, e.occurred_at, e.client_request_id, e.deployment, e.cache, e.cache_saved_usd
               FROM unnest($1::uuid[], $2::text[], $3::uuid[], $4::text[], $5::text[], $6::jsonb[], $7::bigint[], $8::numeric[], $9::integer[], $10::jsonb[], $11::timestamptz[], $12::text[], $13::text[], $14::text[], $15::numeric[])
                 AS e(account_id, request_id, key_id, model, endpoint, units, credits_micro, usd, catalogue_revision, prices, occurred_at, client_request_id, deployment, cache, cache_saved_usd)
             ON CONFLICT (request_id) DO NOTHING
             RETURNING account_id, key_id, amount_micro, usd, occurred_at
           )
           SELECT account_id::text, key_id::text, date_trunc('day', occurred_at, 'UTC') AS day,
                  (-SUM(amount_micro))::text AS spent, (-SUM(usd))::text AS spent_usd, COUNT(*)::integer AS entries
             FROM inserted GROUP BY account_id, key_id, day ORDER BY account_id`,
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
            events.map((event) => wellFormedClientRequestId(sentClientRequestId(event)) ?? null),
            events.map((event) => event.deployment ?? null),
            events.map((event) => event.cache ?? null),
            events.map((event) => event.cacheSavedUsd ?? null),
          ],
        );
        const spentByAccount = new Map<string, bigint>();
        for (const row of inserted) {
          spentByAccount.set(row.account_id, (spentByAccount.get(row.account_id) ?? 0n) + BigInt(row.spent));
          applied += row.entries;
        }
        const moved: BalanceChange[] = [];
        for (const [accountId, spent] of spentByAccount) moved.push(await this.accounts.adjustBalance(manager, accountId, -spent, 'usage'));
        const keys = await this.keySpend.applyUsage(
          manager,
          inserted.map((row) => ({ keyId: row.key_id, day: row.day, spentMicro: BigInt(row.spent), spentUsd: row.spent_usd })),
        );
        return { moved, keys };
      });
    } catch (error) {
      this.logger.warn(`A usage batch of ${events.length} could not be applied as a whole (${error instanceof Error ? error.message : String(error)}); applying its events one by one`);
      applied = 0;
      const failures: unknown[] = [];
      for (const event of events) {
        try {
          if ((await this.applyOne(event)).applied) applied++;
        } catch (failure) {
          failures.push(failure);
        }
      }
      // The job is retried for the events that failed; those already applied are skipped then.
      if (failures.length > 0) throw failures[0];
      return applied;
    }
    for (const change of changes.moved) this.announcer.soon(change);
    this.keySpendAnnouncer.soon(changes.keys);
    observeLedgerLag(events);
    return applied;
  }

  /**
   * The events that may be applied: sound on their own (`usageEventProblem`) and naming a key of
   * the account they charge. The others are logged by request id and reason and kept once in
   * `billing.rejected_usage` for an operator, before the batch is applied, so a retry keeps none twice.
   */
  private async admissible(candidates: readonly unknown[]): Promise<UsageEvent[]> {
    const now = Date.now();
    const rejected: Array<{ candidate: unknown; reason: string }> = [];
    const sound: UsageEvent[] = [];
    for (const candidate of candidates) {
      const reason = usageEventProblemSafely(candidate, this.settings.env.CREDITS_PER_USD, now);
      if (reason) rejected.push({ candidate, reason });
      else sound.push(candidate as UsageEvent);
    }
    let events = sound;
    if (sound.length > 0) {
      const keys: Array<{ id: string; account_id: string }> = await this.dataSource.query(
        `SELECT id::text, account_id::text FROM "billing"."api_keys" WHERE id = ANY($1::uuid[])`,
        [[...new Set(sound.map((event) => event.keyId))]],
      );
      const accountOfKey = new Map(keys.map((key) => [key.id.toLowerCase(), key.account_id.toLowerCase()]));
      events = [];
      for (const event of sound) {
        const owner = accountOfKey.get(event.keyId.toLowerCase());
        if (owner === event.accountId.toLowerCase()) events.push(event);
        else rejected.push({ candidate: event, reason: owner === undefined ? `key ${event.keyId} does not exist` : `key ${event.keyId} is not a key of account ${event.accountId}` });
      }
    }
    if (rejected.length > 0) await this.setAside(rejected);
    return events;
  }

  private async setAside(rejected: Array<{ candidate: unknown; reason: string }>): Promise<void> {
    const fieldOf = (candidate: unknown, field: string): string | null => {
      const value = typeof candidate === 'object' && candidate !== null ? (candidate as Record<string, unknown>)[field] : undefined;
      return typeof value === 'string' ? value.slice(0, 200) : null;
    };
    usageEventsRejected.inc(rejected.length);
    for (const { candidate, reason } of rejected) {
      this.logger.error(`Usage event of request ${fieldOf(candidate, 'requestId') ?? '(none)'} refused, not applied: ${reason}; kept in billing.rejected_usage`);
    }
    await this.dataSource.query(
      `INSERT INTO "billing"."rejected_usage" (request_id, account_id, reason, event)
       SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::jsonb[])
       ON CONFLICT (request_id) DO NOTHING`,
      [
        rejected.map(({ candidate }) => fieldOf(candidate, 'requestId')),
        rejected.map(({ candidate }) => fieldOf(candidate, 'accountId')),
        rejected.map(({ reason }) => reason),
        rejected.map(({ candidate }) => JSON.stringify(candidate ?? null)),
      ],
    );
  }

  /**
   * Writes the usage entry and moves the balance in one transaction. The unique request id
   * turns a repeated event into a no-op, so redelivery can never charge twice.
   */
  private async applyOne(event: UsageEvent): Promise<{ applied: boolean }> {
    const change = await this.dataSource.transaction(async (manager) => {
      const inserted: Array<{ id: string }> = await manager.query(
        `INSERT INTO "billing"."ledger_entries"
           (account_id, kind, request_id, key_id, model, endpoint, units, amount_micro, usd, catalogue_revision, prices, occurred_at, client_request_id, deployment, cache, cache_saved_usd)
         VALUES ($1, 'usage', $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13, $14, $15)
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
          wellFormedClientRequestId(sentClientRequestId(event)) ?? null,
          event.deployment ?? null,
          event.cache ?? null,
          event.cacheSavedUsd ?? null,
        ],
      );
      if (inserted.length === 0) return null;
      const balance = await this.accounts.adjustBalance(manager, event.accountId, -BigInt(event.creditsMicro), 'usage');
      const keys = await this.keySpend.applyUsage(manager, [{ keyId: event.keyId, day: new Date(event.occurredAt), spentMicro: BigInt(event.creditsMicro), spentUsd: event.usd }]);
      return { balance, keys };
    });
    if (!change) {
      this.logger.debug(`Usage of request ${event.requestId} was already applied`);
      return { applied: false };
    }
    this.announcer.soon(change.balance);
    this.keySpendAnnouncer.soon(change.keys);
    observeLedgerLag([event]);
    return { applied: true };
  }
}

/** The usage a batch inserted, per account, key and UTC day. */
interface InsertedUsage {
  account_id: string;
  key_id: string;
  day: Date;
  /** Charged, positive. */
  spent: string;
  spent_usd: string;
  entries: number;
}

function usageEventProblemSafely(candidate: unknown, creditsPerUsd: number, now: number): string | undefined {
  try {
    return usageEventProblem(candidate, creditsPerUsd, now);
  } catch (error) {
    return `cannot be priced (${error instanceof Error ? error.message : String(error)})`;
  }
}

function negate(decimal: string): string {
  if (/^0(\.0*)?$/.test(decimal)) return decimal;
  return decimal.startsWith('-') ? decimal.slice(1) : `-${decimal}`;
}

/** The event's client request id when it is a string; whether it is well formed is for `wellFormedClientRequestId`. */
function sentClientRequestId(event: UsageEvent): string | undefined {
  return typeof event.clientRequestId === 'string' ? event.clientRequestId : undefined;
}
