import { Module, type DynamicModule } from '@nestjs/common';
import { MessagingModule, MessagingService } from '@igw/messaging';
import { HealthController, READINESS_CHECKS } from '@igw/http';
import { MetricsController } from '@igw/observability';
import { SERVICE_SETTINGS, withoutAdminToken, type ServiceSettings } from '@igw/config';
import { CatalogueSnapshotService } from './catalogue/catalogue-snapshot.service';
import { ChatModule } from './chat/chat.module';
import { CompletionsModule } from './completions/completions.module';
import { DecisionsModule } from './decisions/decisions.module';
import { EmbeddingsModule } from './embeddings/embeddings.module';
import { GatewayCoreModule } from './gateway-core.module';
import { GatewayRootController } from './gateway-root.controller';
import { GeminiModule } from './gemini/gemini.module';
import { MediaModule } from './media/media.module';
import { MessagesModule } from './messages/messages.module';
import { ModelsModule } from './models/models.module';
import { ModerationsModule } from './moderations/moderations.module';
import { ResponsesModule } from './responses/responses.module';

/** The gateway's settings, read by every module of it (as the queue is: one per service process). */
@Module({})
class GatewaySettingsModule {
  static forRoot(settings: ServiceSettings): DynamicModule {
    return {
      module: GatewaySettingsModule,
      global: true,
      providers: [{ provide: SERVICE_SETTINGS, useValue: withoutAdminToken(settings) }],
      exports: [SERVICE_SETTINGS],
    };
  }
}

/** The gateway: one module per feature over the core every paid endpoint stands on, plus health and metrics. */
@Module({})
export class GatewayModule {
  static forRoot(settings: ServiceSettings): DynamicModule {
    return {
      module: GatewayModule,
      imports: [
        MessagingModule.forRoot({ serviceName: 'gateway', backend: settings.queue, rpcTimeoutMs: settings.env.RPC_TIMEOUT_MS, workerDrainMs: settings.env.SHUTDOWN_DRAIN_MS }),
        GatewaySettingsModule.forRoot(settings),
        GatewayCoreModule,
        ModelsModule,
        ChatModule,
        MessagesModule,
        EmbeddingsModule,
        DecisionsModule,
        MediaModule,
        ResponsesModule,
        ModerationsModule,
        CompletionsModule,
        GeminiModule,
      ],
      controllers: [HealthController, MetricsController, GatewayRootController],
      providers: [
        {
          provide: READINESS_CHECKS,
          inject: [MessagingService, CatalogueSnapshotService],
          useFactory: (messaging: MessagingService, catalogue: CatalogueSnapshotService) => [
            { name: 'queue', check: () => messaging.ping() },
            {
              name: 'catalogue',
              check: async () => {
                if (!catalogue.current) throw new Error('no catalogue snapshot yet');
              },
            },
          ],
        },
      ],
    };
  }
}
