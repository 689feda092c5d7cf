import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown, type OnModuleInit } from '@nestjs/common';
import { QueueName, MessagingService } from '@igw/messaging';
import { budgetLimitMicro, formatMicroCredits, formatScaled, microCreditsToUsd, parseDecimal, toScaledUnits, USD_SCALE } from '@igw/domain';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager, type EntitySubscriberInterface, type QueryRunner, type TransactionCommitEvent, type TransactionRollbackEvent } from 'typeorm';
import { crossedBudgetPercent, KeySpendLedger, type KeySpendChange } from '../keys/key-spend';
import { balanceCrossingKey, balanceFellBelow, KEY_BUDGET_THRESHOLDS, keyBudgetCrossingKey } from './alert-crossings';

/** An event of the outbox, as the receiver gets it (the JSON body). */
export interface AlertEventBody {
  id: string;
  type: string;
  createdAt: string;
  accountId: string;
  data: Record<string, unknown>;
}

/**
 * A column for the RETURNING list of an UPDATE of `billing.accounts`: the account's webhook
 * balance threshold (micro-credits as text, null without one), read under the row lock the UPDATE takes.
 */
export const BALANCE_ALERT_THRESHOLD_SQL = `(SELECT w.balance_threshold_micro::text FROM "billing"."account_webhooks" w WHERE w.account_id = "accounts".id) AS alert_threshold_micro`;

/** How often each replica looks for outbox rows whose delivery job was never added (a crash right after the commit). */
const SWEEP_INTERVAL_MS = 30_000;
/** Rows younger than this are still being handed over by the process that wrote them. */
const SWEEP_MIN_AGE_MS = 10_000;
const SWEEP_BATCH = 500;

/**
 * Records alerts in the transaction that causes them (an outbox row each, deduplicated by its
 * crossing) and hands them to the `webhooks` queue once that transaction has committed. Nothing
 * here waits for a receiver: delivery is the queue worker's (`WebhookDelivery`).
 *
 * Entry points, each called inside the caller's transaction with its `EntityManager`:
 * - `balanceMoved`: from `AccountsService.adjustBalance`, for every balance change.
 * - `keySpendChanged`: a listener of `KeySpendLedger`, for the keys' spend every ledger transaction moves.
 */
@Injectable()
export class AccountAlerts implements EntitySubscriberInterface, OnModuleInit, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AccountAlerts.name);
  /** Events recorded in a transaction that has not committed yet, by its query runner. */
  private readonly uncommitted = new WeakMap<QueryRunner, string[]>();
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly dataSource: DataSource,
    private readonly messaging: MessagingService,
    private readonly keySpend: KeySpendLedger,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {
    // A subscriber of the data source: told of every commit and rollback (TypeORM has no per-transaction hook).
    dataSource.subscribers.push(this);
  }

  onModuleInit(): void {
    // Before the usage worker starts (bootstrap), so no ledger transaction goes unwatched.
    this.keySpend.addListener((manager, changes) => this.keySpendChanged(manager, changes));
  }

  onApplicationBootstrap(): void {
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_INTERVAL_MS);
    this.sweeper.unref();
    void this.sweep();
  }

  onApplicationShutdown(): void {
    clearInterval(this.sweeper);
  }

  /**
   * A balance moved by `amountMicro` to `balanceMicro` (version `balanceVersion`), inside the
   * caller's transaction, which holds the account's row lock: no other change can interleave, so
   * before and after are exact and a crossing is seen by exactly one change. `thresholdMicro` is
   * the webhook's threshold as the same statement read it (`BALANCE_ALERT_THRESHOLD_SQL`), so
   * watching costs a balance change no extra round trip.
   */
  async balanceMoved(
    manager: EntityManager,
    change: { accountId: string; balanceMicro: bigint; balanceVersion: number; amountMicro: bigint; cause: 'usage' | 'credit'; thresholdMicro: bigint | null },
  ): Promise<void> {
    const { thresholdMicro } = change;
    const beforeMicro = change.balanceMicro - change.amountMicro;
    if (thresholdMicro === null || !balanceFellBelow(thresholdMicro, beforeMicro, change.balanceMicro)) return;
    await this.record(manager, change.accountId, 'balance.below_threshold', balanceCrossingKey(change.accountId, change.balanceVersion), {
      ...this.amount('balance', change.balanceMicro),
      ...this.amount('previousBalance', beforeMicro),
      ...this.amount('threshold', thresholdMicro),
      cause: change.cause,
    });
  }

  /**
   * Keys' spend moved (`KeySpendLedger`'s listener, inside the ledger transaction, which holds
   * the keys' row locks, so before and after are exact): records `key.budget_threshold` for each
   * key whose spend reached 80 % of its limit and `key.budget_exhausted` for 100 %, as
   * `crossedBudgetPercent` decides, once per key, period, budget and threshold. Nothing is
   * recorded for an account without a webhook.
   */
  async keySpendChanged(manager: EntityManager, changes: readonly KeySpendChange[]): Promise<void> {
    const crossings = changes.flatMap((change) => KEY_BUDGET_THRESHOLDS.filter((percent) => crossedBudgetPercent(change, percent)).map((percent) => ({ change, percent })));
    if (crossings.length === 0) return;
    const watched: Array<{ account_id: string }> = await manager.query(`SELECT account_id::text FROM "billing"."account_webhooks" WHERE account_id = ANY($1::uuid[])`, [
      [...new Set(crossings.map(({ change }) => change.accountId))],
    ]);
    const withWebhook = new Set(watched.map((row) => row.account_id.toLowerCase()));
    for (const { change, percent } of crossings) {
      const { budget, after } = change;
      if (!budget || !after.periodStart || !withWebhook.has(change.accountId.toLowerCase())) continue;
      const limitMicro = budgetLimitMicro(budget.limit, budget.unit, this.settings.env.CREDITS_PER_USD);
      // A USD budget shows its limit as set, exactly; a credit budget's USD is its conversion.
      const limitUsd = budget.unit === 'usd' ? formatScaled(toScaledUnits(parseDecimal(budget.limit), USD_SCALE), USD_SCALE) : microCreditsToUsd(limitMicro, this.settings.env.CREDITS_PER_USD);
      await this.record(manager, change.accountId, percent === 100 ? 'key.budget_exhausted' : 'key.budget_threshold', keyBudgetCrossingKey(change.keyId, after.periodStart, budget, percent), {
        keyId: change.keyId,
        keyName: change.keyName,
        percent,
        period: budget.period,
        periodStart: after.periodStart.toISOString(),
        unit: budget.unit,
        limit: formatMicroCredits(limitMicro),
        limitUsd,
        spent: formatMicroCredits(after.spentMicro),
        // What the ledger's rows of the period charged in USD, summed exactly.
        spentUsd: after.spentUsd,
      });
    }
  }

  /** Hands events to the queue; each job's id is its event's id, so adding one twice is a no-op. */
  async dispatch(eventIds: readonly string[]): Promise<void> {
    if (eventIds.length === 0) return;
    const env = this.settings.env;
    await this.messaging.enqueueMany(
      QueueName.Webhooks,
      eventIds.map((eventId) => ({
        name: 'webhooks.deliver' as const,
        data: { eventId },
        options: {
          jobId: eventId,
          attempts: env.WEBHOOK_MAX_ATTEMPTS,
          backoff: { type: 'exponential', delay: env.WEBHOOK_RETRY_DELAY_MS },
          // Kept a day (a week when given up) so that adding the same event again stays a no-op meanwhile.
          removeOnComplete: { age: 24 * 3600, count: 100_000 },
          removeOnFail: { age: 7 * 24 * 3600, count: 100_000 },
        },
      })),
    );
  }

  afterTransactionCommit(event: TransactionCommitEvent): void {
    // A savepoint's release is not the commit: wait for the outermost one.
    if (event.queryRunner.isTransactionActive) return;
    const eventIds = this.uncommitted.get(event.queryRunner);
    if (!eventIds) return;
    this.uncommitted.delete(event.queryRunner);
    this.dispatch(eventIds).catch((error: unknown) =>
      this.logger.warn(`${eventIds.length} alert(s) not handed to the queue yet (${error instanceof Error ? error.message : String(error)}); the outbox sweep will`),
    );
  }

  afterTransactionRollback(event: TransactionRollbackEvent): void {
    if (!event.queryRunner.isTransactionActive) this.uncommitted.delete(event.queryRunner);
  }

  /**
   * Adds the delivery job of every pending event old enough that its writer should have added
   * it: after a crash between a commit and its hand-over, or a queue that was down then.
   */
  async sweep(minAgeMs = SWEEP_MIN_AGE_MS): Promise<void> {
    try {
      const rows: Array<{ id: string }> = await this.dataSource.query(
        `SELECT id::text FROM "billing"."webhook_events"
          WHERE status = 'pending' AND created_at < now() - make_interval(secs => $1)
          ORDER BY created_at LIMIT $2`,
        [minAgeMs / 1000, SWEEP_BATCH],
      );
      await this.dispatch(rows.map((row) => row.id));
    } catch (error) {
      this.logger.warn(`Outbox sweep failed: ${error instanceof Error ? error.message : String(error)}`);
    }
  }

  private async record(manager: EntityManager, accountId: string, type: string, dedupeKey: string, data: Record<string, unknown>): Promise<void> {
    const id = randomUUID();
    const body: AlertEventBody = { id, type, createdAt: new Date().toISOString(), accountId, data };
    const inserted: unknown[] = await manager.query(
      `INSERT INTO "billing"."webhook_events" (id, account_id, type, dedupe_key, body) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (dedupe_key) DO NOTHING RETURNING id`,
      [id, accountId, type, dedupeKey, JSON.stringify(body)],
    );
    if (inserted.length === 0) return;
    const runner = manager.queryRunner;
    if (runner?.isTransactionActive) {
      const pending = this.uncommitted.get(runner) ?? [];
      pending.push(id);
      this.uncommitted.set(runner, pending);
    } else {
      await this.dispatch([id]).catch((error: unknown) => this.logger.warn(`Alert ${id} not handed to the queue yet (${String(error)}); the outbox sweep will`));
    }
  }

  /** An amount as exact decimal strings, in credits and in USD: `{balance: "899.5", balanceUsd: "0.00044975"}`. */
  private amount(name: string, micro: bigint): Record<string, string> {
    return { [name]: formatMicroCredits(micro), [`${name}Usd`]: microCreditsToUsd(micro, this.settings.env.CREDITS_PER_USD) };
  }
}
