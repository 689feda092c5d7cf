import { Injectable, Module, type DynamicModule, type OnApplicationBootstrap } from '@nestjs/common';
import { QueueName, MessagingModule, MessagingService } from '@igw/messaging';
import { DecideService } from './decide.service';
import { HealthController, READINESS_CHECKS } from '@igw/http';
import { MetricsController } from '@igw/observability';
import { SERVICE_SETTINGS, withoutAdminToken, type ServiceSettings } from '@igw/config';

/** Decisions answered at once per process: each mostly waits on upstream calls. */
const DECISIONS_CONCURRENCY = 32;

/** The decisions worker: answers POST /v1/decisions jobs the gateway validated and admitted, and pings. */
@Injectable()
class DecisionsWorker implements OnApplicationBootstrap {
  constructor(
    private readonly messaging: MessagingService,
    private readonly decisions: DecideService,
  ) {}

  onApplicationBootstrap(): void {
    this.messaging.consume(
      QueueName.Decisions,
      {
        'decisions.ping': async () => ({ ok: true as const }),
        'decisions.decide': (job) => this.decisions.decide(job),
      },
      DECISIONS_CONCURRENCY,
    );
  }
}

@Module({})
export class DecisionsModule {
  static forRoot(settings: ServiceSettings): DynamicModule {
    return {
      module: DecisionsModule,
      imports: [MessagingModule.forRoot({ serviceName: 'decisions', backend: settings.queue, rpcTimeoutMs: settings.env.RPC_TIMEOUT_MS, workerDrainMs: settings.env.SHUTDOWN_DRAIN_MS })],
      controllers: [HealthController, MetricsController],
      providers: [
        { provide: SERVICE_SETTINGS, useValue: withoutAdminToken(settings) },
        DecideService,
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
