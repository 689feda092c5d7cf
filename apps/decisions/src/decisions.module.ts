import { Injectable, Module, type DynamicModule, type OnApplicationBootstrap } from '@nestjs/common';
import { QueueName } from '@igw/contracts';
import { MessagingModule, MessagingService } from '@igw/messaging';
import { HealthController, READINESS_CHECKS, SERVICE_SETTINGS, type ServiceSettings } from '@igw/platform';

/** The decisions worker. Decision models arrive with their own issue; today it answers pings. */
@Injectable()
class DecisionsWorker implements OnApplicationBootstrap {
  constructor(private readonly messaging: MessagingService) {}

  onApplicationBootstrap(): void {
    this.messaging.consume(QueueName.Decisions, { 'decisions.ping': async () => ({ ok: true as const }) }, 8);
  }
}

@Module({})
export class DecisionsModule {
  static forRoot(settings: ServiceSettings): DynamicModule {
    return {
      module: DecisionsModule,
      imports: [MessagingModule.forRoot({ serviceName: 'decisions', backend: settings.queue, rpcTimeoutMs: settings.env.RPC_TIMEOUT_MS })],
      controllers: [HealthController],
      providers: [
        { provide: SERVICE_SETTINGS, useValue: settings },
        DecisionsWorker,
        {
          provide: READINESS_CHECKS,
          inject: [MessagingService],
          useFactory: (messaging: MessagingService) => [{ name: 'queue', check: () => messaging.ping() }],
        },
      ],
    };
  }
}
