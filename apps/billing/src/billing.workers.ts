import { Inject, Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { QueueName, usageBatchEvents, MessagingService } from '@igw/messaging';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { WebhookDelivery } from './alerts/webhook-delivery';
import { KeysService } from './keys/keys.service';
import { LedgerService } from './ledger/ledger.service';

/**
 * Billing's queue consumers: the usage ledger (LEDGER_WORKERS batches at once; none with 0, so
 * ledger workers can run as processes of their own), key look-ups for the gateway and webhook deliveries.
 */
@Injectable()
export class BillingWorkers implements OnApplicationBootstrap {
  constructor(
    private readonly messaging: MessagingService,
    private readonly ledger: LedgerService,
    private readonly keys: KeysService,
    private readonly webhooks: WebhookDelivery,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  onApplicationBootstrap(): void {
    const ledgerWorkers = this.settings.env.LEDGER_WORKERS;
    if (ledgerWorkers > 0) {
      this.messaging.consume(
        QueueName.Usage,
        { 'usage.recordBatch': async (batch) => ({ applied: await this.ledger.applyUsageBatch(usageBatchEvents(batch)) }) },
        ledgerWorkers,
      );
    }
    // A few deliveries at once: each waits on a receiver's network, not on this process.
    this.messaging.consume(QueueName.Webhooks, { 'webhooks.deliver': async ({ eventId }, job) => this.webhooks.deliver(eventId, job) }, 8);
    this.messaging.consume(QueueName.BillingRpc, { 'keys.resolve': async ({ keyHash }) => ({ key: await this.keys.resolve(keyHash) }) }, 16);
  }
}
