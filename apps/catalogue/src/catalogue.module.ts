import { Module, type DynamicModule } from '@nestjs/common';
import { MessagingModule, MessagingService } from '@igw/messaging';
import { PersistenceModule } from '@igw/persistence';
import { AdminTokenThrottle, ADMIN_TOKEN, HealthController, READINESS_CHECKS } from '@igw/http';
import { MetricsController } from '@igw/observability';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { DataSource } from 'typeorm';
import { AdminCatalogueController } from './catalogue/admin-catalogue.controller';
import { CatalogueService } from './catalogue/catalogue.service';
import { cataloguePersistence } from './persistence/catalogue.persistence';

@Module({})
export class CatalogueModule {
  static forRoot(settings: ServiceSettings & { databaseUrl: string; adminToken: string }): DynamicModule {
    return {
      module: CatalogueModule,
      imports: [
        PersistenceModule.forService(settings.databaseUrl, cataloguePersistence),
        MessagingModule.forRoot({ serviceName: 'catalogue', backend: settings.queue, rpcTimeoutMs: settings.env.RPC_TIMEOUT_MS, workerDrainMs: settings.env.SHUTDOWN_DRAIN_MS }),
      ],
      controllers: [HealthController, MetricsController, AdminCatalogueController],
      providers: [
        { provide: SERVICE_SETTINGS, useValue: settings },
        { provide: ADMIN_TOKEN, useValue: settings.adminToken },
        { provide: AdminTokenThrottle, useValue: new AdminTokenThrottle(settings.env.TRUSTED_PROXIES) },
        CatalogueService,
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
