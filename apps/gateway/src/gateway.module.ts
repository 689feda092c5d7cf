import { Module, type DynamicModule } from '@nestjs/common';
import { MessagingModule, MessagingService } from '@igw/messaging';
import { ApiKeyAuthenticator, HealthController, MetricsController, READINESS_CHECKS, SERVICE_SETTINGS, withoutAdminToken, type ServiceSettings } from '@igw/platform';
import { GatewayKeyAuthenticator } from './auth/gateway-key.authenticator';
import { CatalogueSnapshotService } from './catalogue/catalogue-snapshot.service';
import { ChatController } from './chat/chat.controller';
import { ChatService } from './chat/chat.service';
import { DecisionsController } from './decisions/decisions.controller';
import { DecisionsService } from './decisions/decisions.service';
import { EmbeddingsController } from './embeddings/embeddings.controller';
import { EmbeddingsService } from './embeddings/embeddings.service';
import { ImagesController } from './media/images.controller';
import { ImagesService } from './media/images.service';
import { MediaFetcher } from './media/media-fetcher';
import { TranscriptionController } from './media/transcription.controller';
import { TranscriptionService } from './media/transcription.service';
import { SpeechController } from './media/speech.controller';
import { SpeechService } from './media/speech.service';
import { ModelsController } from './models/models.controller';
import { limitStoreProvider } from './limits/limit-store.provider';
import { RequestMeter } from './limits/request-meter';
import { TokenCountingShutdown } from './tokens/token-counting.shutdown';
import { PaidRequestPipeline } from './upstream/paid-request-pipeline';
import { UsageRecorder } from './usage/usage-recorder.service';

@Module({})
export class GatewayModule {
  static forRoot(settings: ServiceSettings): DynamicModule {
    return {
      module: GatewayModule,
      imports: [MessagingModule.forRoot({ serviceName: 'gateway', backend: settings.queue, rpcTimeoutMs: settings.env.RPC_TIMEOUT_MS, workerDrainMs: settings.env.SHUTDOWN_DRAIN_MS })],
      controllers: [HealthController, MetricsController, ModelsController, ChatController, EmbeddingsController, DecisionsController, SpeechController, ImagesController, TranscriptionController],
      providers: [
        { provide: SERVICE_SETTINGS, useValue: withoutAdminToken(settings) },
        CatalogueSnapshotService,
        GatewayKeyAuthenticator,
        { provide: ApiKeyAuthenticator, useExisting: GatewayKeyAuthenticator },
        UsageRecorder,
        limitStoreProvider,
        RequestMeter,
        PaidRequestPipeline,
        ChatService,
        EmbeddingsService,
        DecisionsService,
        SpeechService,
        MediaFetcher,
        ImagesService,
        TranscriptionService,
        TokenCountingShutdown,
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
