import { Module, type DynamicModule } from '@nestjs/common';
import { MessagingModule, MessagingService } from '@igw/messaging';
import { PersistenceModule } from '@igw/persistence';
import { AdminTokenThrottle, ADMIN_SESSION_VERIFIER, ADMIN_TOKEN, ApiKeyAuthenticator, HealthController, READINESS_CHECKS } from '@igw/http';
import { MetricsController } from '@igw/observability';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { DataSource } from 'typeorm';
import { AccountsService } from './accounts/accounts.service';
import { BalanceAnnouncer } from './accounts/balance-announcer';
import { AdminAccountsController } from './accounts/admin-accounts.controller';
import { AccountAlerts } from './alerts/account-alerts';
import { AdminWebhooksController } from './alerts/admin-webhooks.controller';
import { WebhookDelivery } from './alerts/webhook-delivery';
import { WebhookDestinations } from './alerts/webhook-destination';
import { WebhooksService } from './alerts/webhooks.service';
import { AdminAccountsListController } from './accounts/admin-accounts-list.controller';
import { AccountsListService } from './accounts/accounts-list';
import { BalanceController } from './balance/balance.controller';
import { BillingWorkers } from './billing.workers';
import { AdminCacheController } from './cache/admin-cache.controller';
import { ResponseCacheService } from './cache/response-cache.service';
import { ConsoleCatalogueService } from './console/console-catalogue';
import { ConsoleController } from './console/console.controller';
import { ConsoleSessions } from './console/console-sessions';
import { AdminConnectionsController } from './connections/admin-connections.controller';
import { GatewayUpstreamsAsk } from './connections/gateway-upstreams';
import { AdminKeysController } from './keys/admin-keys.controller';
import { BillingKeyAuthenticator } from './keys/billing-key.authenticator';
import { KeysService } from './keys/keys.service';
import { KeySpendAnnouncer, KeySpendLedger } from './keys/key-spend';
import { AdminReconciliationController } from './ledger/admin-reconciliation.controller';
import { LedgerService } from './ledger/ledger.service';
import { billingPersistence } from './persistence/billing.persistence';
import { StoredResponsesService } from './responses/stored-responses.service';
import { StoredResponsesWorkers } from './responses/stored-responses.workers';
import { AdminUsageController } from './usage/admin-usage.controller';
import { UsageService } from './usage/usage.service';

@Module({})
export class BillingModule {
  static forRoot(settings: ServiceSettings & { databaseUrl: string; adminToken: string }): DynamicModule {
    return {
      module: BillingModule,
      imports: [
        PersistenceModule.forService(settings.databaseUrl, billingPersistence),
        MessagingModule.forRoot({ serviceName: 'billing', backend: settings.queue, rpcTimeoutMs: settings.env.RPC_TIMEOUT_MS, workerDrainMs: settings.env.SHUTDOWN_DRAIN_MS }),
      ],
      controllers: [
        HealthController,
        MetricsController,
        BalanceController,
        AdminAccountsListController,
        AdminAccountsController,
        AdminUsageController,
        AdminKeysController,
        AdminReconciliationController,
        AdminConnectionsController,
        ConsoleController,
        AdminWebhooksController,
        AdminCacheController,
      ],
      providers: [
        { provide: SERVICE_SETTINGS, useValue: settings },
        { provide: ADMIN_TOKEN, useValue: settings.adminToken },
        { provide: AdminTokenThrottle, useValue: new AdminTokenThrottle(settings.env.TRUSTED_PROXIES) },
        AccountsService,
        AccountAlerts,
        WebhookDelivery,
        { provide: WebhookDestinations, useValue: new WebhookDestinations(settings.env.WEBHOOK_ALLOWLIST) },
        WebhooksService,
        AccountsListService,
        ConsoleSessions,
        { provide: ADMIN_SESSION_VERIFIER, useExisting: ConsoleSessions },
        GatewayUpstreamsAsk,
        ConsoleCatalogueService,
        BalanceAnnouncer,
        KeysService,
        KeySpendLedger,
        KeySpendAnnouncer,
        LedgerService,
        UsageService,
        BillingWorkers,
        StoredResponsesService,
        StoredResponsesWorkers,
        ResponseCacheService,
        { provide: ApiKeyAuthenticator, useClass: BillingKeyAuthenticator },
        {
          provide: READINESS_CHECKS,
          inject: [DataSource, MessagingService],
          useFactory: (dataSource: DataSource, messaging: MessagingService) => [
            { name: 'database', check: async () => void (await dataSource.query('SELECT 1')) },
            { name: 'queue', check: () => messaging.ping() },
          ],
        },
      ],
    };
  }
}
