import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { ErrorMessages } from '@igw/contracts';
import { creditsToMicro, microCreditsToUsd } from '@igw/domain';
import { MessagingService } from '@igw/messaging';
import { GatewayException } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { DataSource, QueryFailedError, type EntityManager } from 'typeorm';
import { AccountAlerts, BALANCE_ALERT_THRESHOLD_SQL } from '../alerts/account-alerts';
import { DEFAULT_LOW_BALANCE_THRESHOLD_CREDITS, defaultPlan } from '../billing.constants';
import { LedgerEntryEntity } from '../ledger/ledger-entry.entity';
import { responseCacheSettingsOf } from '../cache/dto/response-cache-settings.dto';
import { AccountEntity } from './account.entity';
import { BalanceAnnouncer, type BalanceChange } from './balance-announcer';
import type { CreateAccountDto } from './dto/create-account.dto';
import type { UpdateAccountDto } from './dto/update-account.dto';

export type { BalanceChange };

/** PostgreSQL's SQLSTATE for a value beyond its column type (here: bigint). */
const NUMERIC_VALUE_OUT_OF_RANGE = '22003';

@Injectable()
export class AccountsService {
  constructor(
    private readonly dataSource: DataSource,
    private readonly messaging: MessagingService,
    private readonly announcer: BalanceAnnouncer,
    private readonly alerts: AccountAlerts,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  async create(input: Omit<CreateAccountDto, 'credits' | 'usd'> & { credits?: string }): Promise<AccountEntity> {
    const openingMicro = creditsToMicro(input.credits ?? 0);
    const account = await this.dataSource.transaction(async (manager) => {
      const created = await manager.getRepository(AccountEntity).save(
        manager.getRepository(AccountEntity).create({
          name: input.name ?? 'account',
          plan: input.plan ?? defaultPlan(openingMicro),
          balanceMicro: '0',
          balanceVersion: '0',
          lowBalanceThresholdMicro: creditsToMicro(input.lowBalanceThreshold ?? DEFAULT_LOW_BALANCE_THRESHOLD_CREDITS).toString(),
          cache: input.cache ? responseCacheSettingsOf(input.cache) : null,
        }),
      );
      if (openingMicro !== 0n) await this.applyCredit(manager, created.id, openingMicro, 'opening balance');
      return manager.getRepository(AccountEntity).findOneByOrFail({ id: created.id });
    });
    return account;
  }

  async get(accountId: string): Promise<AccountEntity> {
    const account = await this.dataSource.getRepository(AccountEntity).findOneBy({ id: accountId });
    if (!account) throw new GatewayException(HttpStatus.NOT_FOUND, `Account ${accountId} not found`);
    return account;
  }

  /**
   * Changes the settings named in `input` (a null limit removes the override, a null cache the
   * cache setting) and, once
   * committed, tells every gateway to drop what it cached about the account's keys.
   */
  async update(accountId: string, input: UpdateAccountDto): Promise<AccountEntity> {
    const changes: Partial<Pick<AccountEntity, 'name' | 'plan' | 'status' | 'autoDebit' | 'lowBalanceThresholdMicro' | 'rateLimitRpm' | 'rateLimitConcurrency' | 'cache'>> = {};
    if (input.name !== undefined) changes.name = input.name;
    if (input.plan !== undefined) changes.plan = input.plan;
    if (input.status !== undefined) changes.status = input.status;
    if (input.autoDebitStatus !== undefined) changes.autoDebit = input.autoDebitStatus;
    if (input.lowBalanceThreshold !== undefined) changes.lowBalanceThresholdMicro = creditsToMicro(input.lowBalanceThreshold).toString();
    if (input.requestsPerMinute !== undefined) changes.rateLimitRpm = input.requestsPerMinute;
    if (input.concurrentRequests !== undefined) changes.rateLimitConcurrency = input.concurrentRequests;
    if (input.cache !== undefined) changes.cache = input.cache === null ? null : responseCacheSettingsOf(input.cache);
    if (Object.keys(changes).length === 0) return this.get(accountId);

    const account = await this.dataSource.transaction(async (manager) => {
      const repository = manager.getRepository(AccountEntity);
      const result = await repository.update({ id: accountId }, changes);
      if (!result.affected) throw new GatewayException(HttpStatus.NOT_FOUND, `Account ${accountId} not found`);
      return repository.findOneByOrFail({ id: accountId });
    });
    await this.messaging.publish('billing.account.changed', { accountId });
    return account;
  }

  /** Adds (or, when negative, removes) credits through the ledger and announces the new balance. */
  /** `sent` names the field and value the admin sent (usd converts to `credits`), for the error message. */
  async addCredits(
    accountId: string,
    credits: number | string,
    reason: string | undefined,
    sent: { field: 'credits' | 'usd'; value: number | string } = { field: 'credits', value: credits },
  ): Promise<bigint> {
    await this.get(accountId);
    const change = await this.dataSource
      .transaction((manager) => this.applyCredit(manager, accountId, creditsToMicro(credits), reason ?? 'credits added by admin'))
      .catch((error: unknown) => {
        // The balance column is a bigint of micro-credits: a change past its range is the
        // request's fault, and the transaction (ledger row included) is rolled back.
        if (error instanceof QueryFailedError && (error.driverError as { code?: string }).code === NUMERIC_VALUE_OUT_OF_RANGE) {
          throw new GatewayException(
            HttpStatus.BAD_REQUEST,
            `${ErrorMessages.bodyValidationPrefix} ${sent.field}: Expected an amount that keeps the balance within ±9223372036854.775807 credits. Received ${sent.value}`,
          );
        }
        throw error;
      });
    await this.announcer.now(change);
    return change.balanceMicro;
  }

  /**
   * Moves an account's balance by `amountMicro` inside the caller's transaction (a usage
   * charge also adds to the usage spent so far). The UPDATE takes the row lock, so
   * concurrent changes serialise and none is lost.
   */
  async adjustBalance(manager: EntityManager, accountId: string, amountMicro: bigint, cause: 'usage' | 'credit'): Promise<BalanceChange> {
    const usageMicro = cause === 'usage' ? -amountMicro : 0n;
    // TypeORM answers an UPDATE ... RETURNING with [rows, affectedCount].
    const [rows] = (await manager.query(
      `UPDATE "billing"."accounts"
          SET balance_micro = balance_micro + $1, usage_spent_micro = usage_spent_micro + $2,
              balance_version = balance_version + 1, updated_at = now()
        WHERE id = $3
        RETURNING balance_micro, balance_version, usage_spent_micro, ${BALANCE_ALERT_THRESHOLD_SQL}`,
      [amountMicro.toString(), usageMicro.toString(), accountId],
    )) as [Array<{ balance_micro: string; balance_version: string; usage_spent_micro: string; alert_threshold_micro: string | null }>, number];
    const row = rows[0];
    if (!row) throw new GatewayException(HttpStatus.NOT_FOUND, `Account ${accountId} not found`);
    const change = { accountId, balanceMicro: BigInt(row.balance_micro), balanceVersion: Number(row.balance_version), usageSpentMicro: BigInt(row.usage_spent_micro) };
    // In this transaction, under the row lock just taken: the alert is recorded exactly when the change is.
    const thresholdMicro = row.alert_threshold_micro === null ? null : BigInt(row.alert_threshold_micro);
    await this.alerts.balanceMoved(manager, { ...change, amountMicro, cause, thresholdMicro });
    return change;
  }

  private async applyCredit(manager: EntityManager, accountId: string, amountMicro: bigint, reason: string): Promise<BalanceChange> {
    await manager.getRepository(LedgerEntryEntity).insert({
      accountId,
      kind: 'credit',
      requestId: null,
      amountMicro: amountMicro.toString(),
      usd: microCreditsToUsd(amountMicro, this.settings.env.CREDITS_PER_USD),
      reason,
      occurredAt: new Date(),
    });
    return this.adjustBalance(manager, accountId, amountMicro, 'credit');
  }
}
