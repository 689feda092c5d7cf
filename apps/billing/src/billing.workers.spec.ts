import { QueueName, type MessagingService } from '@igw/messaging';
import { loadEnvironment, type ServiceSettings } from '@igw/config';
import { BillingWorkers } from './billing.workers';
import type { WebhookDelivery } from './alerts/webhook-delivery';
import type { KeysService } from './keys/keys.service';
import type { LedgerService } from './ledger/ledger.service';

/** Which queues a billing process consumes, and how many jobs of each at once, for an environment. */
function consumedQueues(env: NodeJS.ProcessEnv): Array<[string, number]> {
  const consumed: Array<[string, number]> = [];
  const messaging = { consume: (queue: string, _handlers: unknown, concurrency: number) => consumed.push([queue, concurrency]) } as unknown as MessagingService;
  const settings = { env: loadEnvironment(env).env } as ServiceSettings;
  new BillingWorkers(messaging, {} as LedgerService, {} as KeysService, {} as WebhookDelivery, settings).onApplicationBootstrap();
  return consumed;
}

describe('BillingWorkers', () => {
  it('applies usage with 16 batches at once by default, delivers webhooks and answers key look-ups', () => {
    expect(consumedQueues({})).toEqual([
      [QueueName.Usage, 16],
      [QueueName.Webhooks, 8],
      [QueueName.BillingRpc, 16],
    ]);
  });

  it('with LEDGER_WORKERS=0 applies no usage (an API and key look-up replica) but still answers key look-ups', () => {
    expect(consumedQueues({ LEDGER_WORKERS: '0' })).toEqual([
      [QueueName.Webhooks, 8],
      [QueueName.BillingRpc, 16],
    ]);
    expect(consumedQueues({ LEDGER_WORKERS: '4' })).toEqual([
      [QueueName.Usage, 4],
      [QueueName.Webhooks, 8],
      [QueueName.BillingRpc, 16],
    ]);
  });
});
