import { Injectable, Module, type DynamicModule, type Type } from '@nestjs/common';
import { MODULE_METADATA } from '@nestjs/common/constants';
import { NestFactory } from '@nestjs/core';
import { loadEnvironment, type ServiceSettings } from '@igw/config';
import { GatewayCoreModule } from './gateway-core.module';
import { GatewayModule } from './gateway.module';
import { RequestAdmission } from './limits/request-admission';
import { PaidRequestPipeline } from './paid-requests/paid-request-pipeline';

// Preview mode resolves every module's providers, controllers and guards without creating
// them: no queue, no Redis, no catalogue needed to see that the wiring holds.
const preview = { preview: true, logger: false, abortOnError: false } as const;

type ModuleEntry = Type | DynamicModule;

function declared(entry: ModuleEntry, key: 'imports' | 'providers'): unknown[] {
  const module = typeof entry === 'function' ? entry : entry.module;
  const dynamic = typeof entry === 'function' ? [] : ((entry[key] as unknown[] | undefined) ?? []);
  return [...((Reflect.getMetadata(key === 'imports' ? MODULE_METADATA.IMPORTS : MODULE_METADATA.PROVIDERS, module) as unknown[] | undefined) ?? []), ...dynamic];
}

/** Every module of the graph once, with the class providers each one lists itself. */
function classProvidersByModule(root: ModuleEntry): Map<string, Type[]> {
  const found = new Map<string, Type[]>();
  const visit = (entry: ModuleEntry) => {
    const name = (typeof entry === 'function' ? entry : entry.module).name;
    if (found.has(name)) return;
    const providers = declared(entry, 'providers').filter((provider): provider is Type => typeof provider === 'function');
    found.set(name, providers);
    for (const imported of declared(entry, 'imports')) if (imported) visit(imported as ModuleEntry);
  };
  visit(root);
  return found;
}

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

  // A service listed by two modules is built twice: the chat fronts would each get a ChatService of their own.
  it('provides each service in one module, which exports it to the modules that need it', () => {
    const listedBy = new Map<string, string[]>();
    for (const [module, classes] of classProvidersByModule(GatewayModule.forRoot(settings))) {
      for (const provided of classes) listedBy.set(provided.name, [...(listedBy.get(provided.name) ?? []), module]);
    }
    expect(listedBy.get('ChatService')).toEqual(['ChatModule']);
    expect([...listedBy].filter(([, modules]) => modules.length > 1)).toEqual([]);
  });
});
