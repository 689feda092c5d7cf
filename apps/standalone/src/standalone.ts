import { Logger, type INestApplication } from '@nestjs/common';
import { loadEnvironment, resolveQueueBackend, waitForDependencies, type ServiceSettings } from '@igw/config';
import { mountOnApp } from '@igw/http';
import { serviceLogger, startTracing } from '@igw/observability';
import { startEmbeddedPostgres, type RunningEmbeddedPostgres } from '@igw/persistence';
import { planRoute } from '@igw/providers';
import { startBilling } from '@igw/billing-app';
import { CATALOGUE_MOUNTED_PREFIXES, startCatalogue } from '@igw/catalogue-app';
import { startDecisions } from '@igw/decisions-app';
import { startEmulator, type RunningEmulator } from '@igw/emulator';
import { CatalogueSnapshotService, gatewayConnections, startGateway, stopGateway } from '@igw/gateway-app';
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
  /** Where the embedded PostgreSQL listens (a free port on 127.0.0.1); undefined with DATABASE_URL. */
  embeddedDatabasePort?: number;
  /** Demo mode: where the emulator playing the providers listens (a free port on 127.0.0.1). */
  emulatorUrl?: string;
  /** What can answer: the providers configured (or emulated) and how many catalogue models have a configured source. */
  upstreams: UpstreamSummary;
  stop(): Promise<void>;
}

export interface UpstreamSummary {
  /** Provider names with credentials, or played by the emulator in demo mode. */
  providers: string[];
  emulated: boolean;
  answerableModels: number;
  catalogueModels: number;
}

/**
 * Start-up lines the banner replaces (each service's address, the catalogue's revisions, the
 * embedded database): shown at LOG_LEVEL=debug only, until the banner is out.
 */
const BANNER_COVERS = ['standalone', 'catalogue', 'billing', 'decisions', 'gateway', 'CatalogueService', 'CatalogueSnapshotService'];

/**
 * All four services in one process, on embedded defaults: PostgreSQL from the data folder
 * unless DATABASE_URL, BullMQ on that PostgreSQL unless REDIS_URL. Same modules as the
 * distributed deployment; only the composition differs.
 */
export async function startStandalone(options: StandaloneOptions): Promise<RunningStandalone> {
  const logger = new Logger('standalone');
  const { env, providers: providerVariables } = loadEnvironment(options.env);
  const processLogger = serviceLogger(env.LOG_LEVEL, env.LOG_FORMAT);
  // One process, one trace source: named for the whole app before each service would name it.
  startTracing('igw-standalone', env.OTEL_EXPORTER_OTLP_ENDPOINT);
  processLogger.quietStart(BANNER_COVERS);
  const stops: Array<() => Promise<unknown>> = [];
  let embeddedDatabase = false;
  const stop = async () => {
    if (stops.length === 0) return;
    for (const step of stops.reverse()) {
      await step().catch((error: unknown) => logger.error(`while stopping: ${error instanceof Error ? error.message : String(error)}`));
    }
    stops.length = 0;
    // The one line that tells a person at the terminal the data is safe: npm's own exit code on Ctrl-C (130) cannot.
    logger.log(embeddedDatabase ? 'stopped: the services are closed and the embedded PostgreSQL has shut down' : 'stopped: the services are closed');
  };

  try {
    // First: an unusable token file stops the start before anything is started.
    const admin = await standaloneAdminToken(env.DATA_DIR, env.ADMIN_TOKEN);
    await waitForDependencies(env);
    let databaseUrl = env.DATABASE_URL;
    let embeddedDatabasePort: number | undefined;
    if (!databaseUrl) {
      const postgres: RunningEmbeddedPostgres = await startEmbeddedPostgres({ dataDir: env.DATA_DIR, log: (line) => logger.debug(line), warn: (line) => logger.warn(line) });
      stops.push(() => postgres.stop());
      embeddedDatabase = true;
      databaseUrl = postgres.url;
      embeddedDatabasePort = Number(new URL(postgres.url).port);
      logger.log(`embedded PostgreSQL running with its data in ${env.DATA_DIR}/postgres`);
    }

    let providers = providerVariables;
    let emulator: RunningEmulator | undefined;
    if (options.demo) {
      emulator = await startEmulator({ host: '127.0.0.1', port: 0 });
      stops.push(() => emulator!.close());
      const demo = emulatedProviders(providerVariables, emulator.url);
      providers = demo.providers;
      logger.log(`demo mode: ${demo.emulated.join(', ')} played by the emulator at ${emulator.url}`);
    }

    // Only billing and the catalogue are handed the admin token; the gateway's and decisions' modules drop it from `env` too.
    const settings: ServiceSettings = { env, providers, databaseUrl, queue: resolveQueueBackend(env, databaseUrl) };
    // Read before anything starts: a providers file that does not validate stops the start, naming its entry and field.
    const connections = gatewayConnections(settings);
    const owned = { ...settings, databaseUrl, adminToken: admin.token };
    const apps: INestApplication[] = [];
    const start = async (app: Promise<INestApplication>, stopApp = (started: INestApplication) => started.close()) => {
      const started = await app;
      apps.push(started);
      stops.push(() => stopApp(started));
      return started;
    };
    // Only the gateway and billing have ports: the catalogue's admin API is served on billing's,
    // and decisions (health endpoints only) has none, so nothing else can be in the way.
    const catalogue = await start(startCatalogue(owned, true));
    const billing = await start(startBilling(owned));
    mountOnApp(billing, catalogue, CATALOGUE_MOUNTED_PREFIXES);
    await start(startDecisions(settings, { listen: false }));
    // Stopped first (stops run in reverse): it drains while the services it calls are still up.
    const gateway = await start(startGateway(settings), (app) => stopGateway(app, env));

    const gatewayUrl = await gateway.getUrl();
    const billingUrl = await billing.getUrl();
    const demoKey = options.demo ? (await createDemoKey(billingUrl, admin.token, env.DATA_DIR)).key : undefined;
    const models = gateway.get(CatalogueSnapshotService).current?.models ?? [];
    const upstreams: UpstreamSummary = {
      providers: [...connections.current.all()].map((connection) => connection.name),
      emulated: options.demo,
      answerableModels: models.filter((model) => planRoute(model.routing.sources, connections.current).targets.length > 0).length,
      catalogueModels: models.length,
    };
    processLogger.endQuietStart();
    return { gatewayUrl, billingUrl, adminToken: admin.token, adminTokenFile: admin.file, demoKey, embeddedDatabasePort, emulatorUrl: emulator?.url, upstreams, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}
