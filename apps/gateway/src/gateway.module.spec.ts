import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadEnvironment, type ServiceSettings } from '@igw/platform';
import { GatewayCoreModule } from './gateway-core.module';
import { GatewayModule } from './gateway.module';
import { RequestMeter } from './limits/request-meter';
import { PaidRequestPipeline } from './upstream/paid-request-pipeline';

// Preview mode resolves every module's providers, controllers and guards without creating
// them: no queue, no Redis, no catalogue needed to see that the wiring holds.
const preview = { preview: true, logger: false, abortOnError: false } as const;

describe('the gateway modules', () => {
  const { env, providers } = loadEnvironment({});
  const settings: ServiceSettings = { env, providers, queue: { kind: 'redis', url: 'redis://127.0.0.1:6379', prefix: 'gateway-module-spec' } };

  it('resolve: each feature module finds what it needs in the core and the settings', async () => {
    const context = await NestFactory.createApplicationContext(GatewayModule.forRoot(settings), preview);
    await context.close();
  });

  it('keep the core to itself: a feature module gets the pipeline, not the meter behind it', async () => {
    @Injectable()
    class UsesPipeline {
      constructor(readonly pipeline: PaidRequestPipeline) {}
    }
    @Injectable()
    class UsesMeter {
      constructor(readonly meter: RequestMeter) {}
    }
    @Module({ imports: [GatewayModule.forRoot(settings), GatewayCoreModule], providers: [UsesPipeline] })
    class PipelineFeature {}
    @Module({ imports: [GatewayModule.forRoot(settings), GatewayCoreModule], providers: [UsesMeter] })
    class MeterFeature {}

    const context = await NestFactory.createApplicationContext(PipelineFeature, preview);
    await context.close();
    await expect(NestFactory.createApplicationContext(MeterFeature, preview)).rejects.toThrow(/RequestMeter/);
  });
});
