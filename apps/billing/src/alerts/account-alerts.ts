import { Inject, Injectable, Logger, type OnApplicationBootstrap, type OnApplicationShutdown } from '@nestjs/common';
import { QueueName } from '@igw/contracts';
import { formatMicroCredits, microCreditsToUsd } from '@igw/domain';
import { MessagingService } from '@igw/messaging';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/platform';
import { randomUUID } from 'node:crypto';
import { DataSource, type EntityManager, type EntitySubscriberInterface, type QueryRunner, type TransactionCommitEvent, type TransactionRollbackEvent } from 'typeorm';
import { balanceCrossingKey, balanceFellBelow, keyBudgetCrossings } from './alert-crossings';

/** How a key's budget is expressed by its admin; the amounts themselves are always micro-credits. */
export type KeyBudgetUnit = 'credits' | 'usd';
export type KeyBudgetPeriod = 'day' | 'month' | 'lifetime';

/** What `AccountAlerts.keySpendChanged` needs to know about one change of a key's spend. */
export interface KeySpendChange {
  accountId: string;
  keyId: string;
  keyName: string | null;
  /** The key's budget for the period, in micro-credits (a USD budget converted at CREDITS_PER_USD). */
  limitMicro: bigint;
  /** How the admin set the limit: the payload shows both, this says which one they think in. */
  unit: KeyBudgetUnit;
  period: KeyBudgetPeriod;
  /** The UTC start of the period the spend belongs to (lifetime: the key's creation). */
  periodStart: Date;
  /** The key's spend in the period before and after the change, in micro-credits. */
  spentBeforeMicro: bigint;
  spentAfterMicro: bigint;
}

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
 * - `keySpendChanged`: for every change of a key's spend in its budget period.
 */
@Injectable()
export class AccountAlerts implements EntitySubscriberInterface, OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(AccountAlerts.name);
  /** Events recorded in a transaction that has not committed yet, by its query runner. */
  private readonly uncommitted = new WeakMap<QueryRunner, string[]>();
  private sweeper?: NodeJS.Timeout;

  constructor(
    private readonly dataSource: DataSource,
    private readonly messaging: MessagingService,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {
    // A subscriber of the data source: told of every commit and rollback (TypeORM has no per-transaction hook).
    dataSource.subscribers.push(this);
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
   * A key's spend in its budget period moved: records `key.budget_threshold` when it reaches 80 %
   * of the limit and `key.budget_exhausted` when it reaches 100 %, once per key, period and
   * threshold. Call it inside the transaction that moves the spend (the ledger's), which must
   * hold the key's row lock so that before and after are exact. Nothing is recorded for an
   * account without a webhook.
   */
  async keySpendChanged(manager: EntityManager, change: KeySpendChange): Promise<void> {
    const crossings = keyBudgetCrossings({
      keyId: change.keyId,
      limitMicro: change.limitMicro,
      spentBeforeMicro: change.spentBeforeMicro,
      spentAfterMicro: change.spentAfterMicro,
      periodStart: change.periodStart,
    });
    if (crossings.length === 0) return;
    const webhooks: unknown[] = await manager.query(`SELECT 1 FROM "billing"."account_webhooks" WHERE account_id = $1`, [change.accountId]);
    if (webhooks.length === 0) return;
    for (const crossing of crossings) {
      await this.record(manager, change.accountId, crossing.type, crossing.dedupeKey, {
        keyId: change.keyId,
        keyName: change.keyName,
        percent: crossing.percent,
        period: change.period,
        periodStart: change.periodStart.toISOString(),
        unit: change.unit,
        ...this.amount('limit', change.limitMicro),
        ...this.amount('spent', change.spentAfterMicro),
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
