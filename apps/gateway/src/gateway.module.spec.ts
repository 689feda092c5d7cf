import { Injectable, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { loadEnvironment, type ServiceSettings } from '@igw/platform';
import { GatewayCoreModule } from './gateway-core.module';
import { GatewayModule } from './gateway.module';
import { RequestAdmission } from './limits/request-admission';
import { PaidRequestPipeline } from './paid-requests/paid-request-pipeline';

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

  it('keep the core to itself: a feature module gets the pipeline, not the admission behind it', async () => {
    @Injectable()
    class UsesPipeline {
      constructor(readonly pipeline: PaidRequestPipeline) {}
    }
    @Injectable()
    class UsesAdmission {
      constructor(readonly admission: RequestAdmission) {}
    }
    @Module({ imports: [GatewayModule.forRoot(settings), GatewayCoreModule], providers: [UsesPipeline] })
    class PipelineFeature {}
    @Module({ imports: [GatewayModule.forRoot(settings), GatewayCoreModule], providers: [UsesAdmission] })
    class AdmissionFeature {}

    const context = await NestFactory.createApplicationContext(PipelineFeature, preview);
    await context.close();
    await expect(NestFactory.createApplicationContext(AdmissionFeature, preview)).rejects.toThrow(/RequestAdmission/);
  });
});
