import { Injectable, type OnApplicationBootstrap } from '@nestjs/common';
import { QueueName } from '@igw/contracts';
import { MessagingService } from '@igw/messaging';
import { KeysService } from './keys/keys.service';
import { LedgerService } from './ledger/ledger.service';

/** Billing's queue consumers: the usage ledger and key look-ups for the gateway. */
@Injectable()
export class BillingWorkers implements OnApplicationBootstrap {
  constructor(
    private readonly messaging: MessagingService,
    private readonly ledger: LedgerService,
    private readonly keys: KeysService,
  ) {}

  onApplicationBootstrap(): void {
    this.messaging.consume(
      QueueName.Usage,
      {
        'usage.recordBatch': async ({ events }) => ({ applied: await this.ledger.applyUsageBatch(events) }),
        'usage.record': (event) => this.ledger.applyUsage(event),
      },
      16,
    );
    this.messaging.consume(QueueName.BillingRpc, { 'keys.resolve': async ({ keyHash }) => ({ key: await this.keys.resolve(keyHash) }) }, 16);
  }
}
