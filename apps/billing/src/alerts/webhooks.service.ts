import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { ErrorMessages } from '@igw/contracts';
import { creditsToMicro, formatMicroCredits, microCreditsToUsd } from '@igw/domain';
import { GatewayException } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { DataSource } from 'typeorm';
import { AccountEntity } from '../accounts/account.entity';
import { creditsOf } from '../accounts/credit-amount';
import { AccountWebhookEntity } from './account-webhook.entity';
import type { SetWebhookDto } from './dto/set-webhook.dto';
import type { WebhookDto, WebhookEventDto } from './dto/webhook.dto';
import { WebhookDestinations } from './webhook-destination';
import { WebhookEventEntity } from './webhook-event.entity';

export const WEBHOOK_EVENT_TYPES = ['balance.below_threshold', 'key.budget_threshold', 'key.budget_exhausted'];

/** The admin side of alerts: an account's webhook, and the events sent to it. */
@Injectable()
export class WebhooksService {
  constructor(
    private readonly dataSource: DataSource,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
    private readonly destinations: WebhookDestinations,
  ) {}

  /** Sets the whole webhook; a secret left out keeps the one set (there must be one, and the URL must stay). */
  async set(accountId: string, input: SetWebhookDto): Promise<WebhookDto> {
    const thresholdCredits = this.thresholdCredits(input);
    // Resolved before the transaction: a slow name server holds no account row.
    await this.destinations.assertAllowed(input.url);
    const thresholdMicro = thresholdCredits === undefined ? null : creditsToMicro(thresholdCredits).toString();
    const saved = await this.dataSource.transaction(async (manager) => {
      // The account's row lock orders this against a concurrent PUT or DELETE of the same webhook.
      const account = await manager.getRepository(AccountEntity).findOne({ where: { id: accountId }, lock: { mode: 'pessimistic_write' } });
      if (!account) throw new GatewayException(HttpStatus.NOT_FOUND, `Account ${accountId} not found`);
      const repository = manager.getRepository(AccountWebhookEntity);
      const current = await repository.findOneBy({ accountId });
      if (current && input.secret === undefined && input.url !== current.url) {
        // Else whoever may change the URL could send events signed with the receiver's secret anywhere.
        throw new GatewayException(
          HttpStatus.BAD_REQUEST,
          `${ErrorMessages.bodyValidationPrefix} secret: Expected the secret again when the url changes (events are signed with it, so it goes with the receiver). Received nothing`,
        );
      }
      const secret = input.secret ?? current?.secret;
      if (secret === undefined) {
        throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} secret: Expected a string of 16 to 256 characters (required when the account has no webhook). Received nothing`);
      }
      if (current) {
        await repository.update({ accountId }, { url: input.url, secret, balanceThresholdMicro: thresholdMicro });
      } else {
        await repository.insert({ accountId, url: input.url, secret, balanceThresholdMicro: thresholdMicro });
      }
      return repository.findOneByOrFail({ accountId });
    });
    return this.view(saved);
  }

  async get(accountId: string): Promise<WebhookDto> {
    const webhook = await this.dataSource.getRepository(AccountWebhookEntity).findOneBy({ accountId });
    if (!webhook) throw new GatewayException(HttpStatus.NOT_FOUND, `Account ${accountId} has no webhook`);
    return this.view(webhook);
  }

  /** Removes the webhook; events not delivered yet are discarded (their worker finds no webhook). */
  async remove(accountId: string): Promise<void> {
    const result = await this.dataSource.getRepository(AccountWebhookEntity).delete({ accountId });
    if (!result.affected) throw new GatewayException(HttpStatus.NOT_FOUND, `Account ${accountId} has no webhook`);
  }

  /** The account's newest events, with how their delivery went. */
  async events(accountId: string, limit: number): Promise<WebhookEventDto[]> {
    if (!(await this.dataSource.getRepository(AccountEntity).existsBy({ id: accountId }))) {
      throw new GatewayException(HttpStatus.NOT_FOUND, `Account ${accountId} not found`);
    }
    const events = await this.dataSource.getRepository(WebhookEventEntity).find({ where: { accountId }, order: { createdAt: 'DESC', id: 'DESC' }, take: limit });
    return events.map((event) => ({
      id: event.id,
      type: event.type,
      status: event.status,
      attempts: event.attempts,
      lastStatus: event.lastStatus,
      lastError: event.lastError,
      createdAt: event.createdAt.toISOString(),
      deliveredAt: event.deliveredAt?.toISOString() ?? null,
      payload: JSON.parse(event.body) as Record<string, unknown>,
    }));
  }

  /** The threshold in credits (exact decimal), from credits or USD; an error names the field the admin sent. */
  private thresholdCredits(input: SetWebhookDto): string | undefined {
    try {
      return creditsOf({ credits: input.balanceThreshold, usd: input.balanceThresholdUsd }, this.settings.env.CREDITS_PER_USD, 0);
    } catch (error) {
      if (error instanceof GatewayException) throw new GatewayException(error.getStatus(), error.message.replace(' usd: ', ' balanceThresholdUsd: '));
      throw error;
    }
  }

  private view(webhook: AccountWebhookEntity): WebhookDto {
    const threshold = webhook.balanceThresholdMicro === null ? null : BigInt(webhook.balanceThresholdMicro);
    return {
      accountId: webhook.accountId,
      url: webhook.url,
      secretSet: webhook.secret.length > 0,
      balanceThreshold: threshold === null ? null : formatMicroCredits(threshold),
      balanceThresholdUsd: threshold === null ? null : microCreditsToUsd(threshold, this.settings.env.CREDITS_PER_USD),
      events: threshold === null ? WEBHOOK_EVENT_TYPES.slice(1) : WEBHOOK_EVENT_TYPES,
      createdAt: webhook.createdAt.toISOString(),
      updatedAt: webhook.updatedAt.toISOString(),
    };
  }
}
