import type { ServicePersistence } from '@igw/persistence';
import { AccountEntity } from '../accounts/account.entity';
import { AccountWebhookEntity } from '../alerts/account-webhook.entity';
import { WebhookEventEntity } from '../alerts/webhook-event.entity';
import { ApiKeyEntity } from '../keys/api-key.entity';
import { LedgerEntryEntity } from '../ledger/ledger-entry.entity';
import { RejectedUsageEntity } from '../ledger/rejected-usage.entity';
import { StoredResponseEntity, StoredResponseItemEntity } from '../responses/stored-response.entity';
import { BILLING_MIGRATIONS } from './migrations';

export const billingPersistence: ServicePersistence = {
  schema: 'billing',
  entities: [AccountEntity, ApiKeyEntity, LedgerEntryEntity, RejectedUsageEntity, AccountWebhookEntity, WebhookEventEntity, StoredResponseEntity, StoredResponseItemEntity],
  migrations: BILLING_MIGRATIONS,
};
