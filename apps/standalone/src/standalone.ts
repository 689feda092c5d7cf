import { Logger, type INestApplication } from '@nestjs/common';
import { loadEnvironment, resolveQueueBackend, waitForDependencies, type ServiceSettings } from '@igw/platform';
import { startEmbeddedPostgres, type RunningEmbeddedPostgres } from '@igw/persistence';
import { startBilling } from '../../billing/src/billing.app';
import { startCatalogue } from '../../catalogue/src/catalogue.app';
import { startDecisions } from '../../decisions/src/decisions.app';
import { startGateway } from '../../gateway/src/gateway.app';
import { startEmulator, type RunningEmulator } from '../../../tools/emulator/src/emulator';
import { standaloneAdminToken } from './admin-token';
import { createDemoKey, emulatedProviders } from './demo';

export interface StandaloneOptions {
  demo: boolean;
  env?: NodeJS.ProcessEnv;
}

export interface RunningStandalone {
  gatewayUrl: string;
  billingUrl: string;
  adminToken: string;
  /** Where the generated admin token is kept; undefined when ADMIN_TOKEN was given. */
  adminTokenFile?: string;
  demoKey?: string;
  stop(): Promise<void>;
}

/**
 * All four services in one process, on embedded defaults: PostgreSQL from the data folder
 * unless DATABASE_URL, BullMQ on that PostgreSQL unless REDIS_URL. Same modules as the
 * distributed deployment; only the composition differs.
 */
export async function startStandalone(options: StandaloneOptions): Promise<RunningStandalone> {
  const logger = new Logger('standalone');
  const { env, providers: configuredProviders } = loadEnvironment(options.env);
  const stops: Array<() => Promise<unknown>> = [];
  const stop = async () => {
    for (const step of stops.reverse()) {
      await step().catch((error: unknown) => logger.error(`while stopping: ${error instanceof Error ? error.message : String(error)}`));
    }
    stops.length = 0;
  };

  try {
    await waitForDependencies(env);
    let databaseUrl = env.DATABASE_URL;
    if (!databaseUrl) {
      const postgres: RunningEmbeddedPostgres = await startEmbeddedPostgres({ dataDir: env.DATA_DIR, log: (line) => logger.debug(line) });
      stops.push(() => postgres.stop());
      databaseUrl = postgres.url;
      logger.log(`embedded PostgreSQL running with its data in ${env.DATA_DIR}/postgres`);
    }
    const admin = await standaloneAdminToken(env.DATA_DIR, env.ADMIN_TOKEN);

    let providers = configuredProviders;
    let emulator: RunningEmulator | undefined;
    if (options.demo) {
      emulator = await startEmulator({ host: '127.0.0.1', port: 0 });
      stops.push(() => emulator!.close());
      const demo = emulatedProviders(configuredProviders, emulator.url);
      providers = demo.providers;
      logger.log(`demo mode: ${demo.emulated.join(', ')} played by the emulator at ${emulator.url}`);
    }

    const settings: ServiceSettings = { env, providers, databaseUrl, queue: resolveQueueBackend(env, databaseUrl), adminToken: admin.token };
    const owned = { ...settings, databaseUrl, adminToken: admin.token };
    const apps: INestApplication[] = [];
    const start = async (app: Promise<INestApplication>) => {
      const started = await app;
      apps.push(started);
      stops.push(() => started.close());
      return started;
    };
    await start(startCatalogue(owned));
    const billing = await start(startBilling(owned));
    await start(startDecisions(settings));
    const gateway = await start(startGateway(settings));

    const gatewayUrl = await gateway.getUrl();
    const billingUrl = await billing.getUrl();
    const demoKey = options.demo ? (await createDemoKey(billingUrl, admin.token, env.DATA_DIR)).key : undefined;
    return { gatewayUrl, billingUrl, adminToken: admin.token, adminTokenFile: admin.file, demoKey, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
