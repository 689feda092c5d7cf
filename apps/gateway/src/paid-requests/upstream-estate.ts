import { Inject, Injectable, Logger, type FactoryProvider, type OnModuleDestroy } from '@nestjs/common';
import { Redis } from 'ioredis';
import type { CatalogueModel, RoutingStrategy } from '@igw/contracts';
import type { ConnectionReport, ConnectionsReport, DeploymentReport } from '@igw/messaging/connections-report';
import { fallbacksTaken, registerLogSecrets } from '@igw/observability';
import { requestPathRedisOptions, SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import {
  connectionDirectoryFor,
  DeploymentBalancer,
  InMemoryDeploymentStore,
  planRoute,
  RedisDeploymentStore,
  type CancelSignal,
  type ConnectionDirectory,
  type DeploymentLease,
  type DeploymentSnapshot,
  type DeploymentStore,
  type RouteTarget,
} from '@igw/providers';
import { CatalogueSnapshotService } from '../catalogue/catalogue-snapshot.service';
import { deploymentCooldowns, deploymentRetries, deploymentSources, type DeploymentGaugeState } from '../telemetry/gateway-metrics';
import { logAccountRefusal, toClientError } from './upstream-error.mapper';

const logger = new Logger('Connections');

/** The token of the deployments' shared state: Redis when REDIS_URL is set, else the process's own. */
export const DEPLOYMENT_STORE = Symbol('DEPLOYMENT_STORE');

export const deploymentStoreProvider: FactoryProvider<DeploymentStore> = {
  provide: DEPLOYMENT_STORE,
  inject: [SERVICE_SETTINGS],
  useFactory: async ({ env }: ServiceSettings): Promise<DeploymentStore> => {
    if (!env.REDIS_URL) return new InMemoryDeploymentStore();
    const store = new RedisDeploymentStore(new Redis(env.REDIS_URL, requestPathRedisOptions(env.REDIS_COMMAND_TIMEOUT_MS)), env.QUEUE_PREFIX);
    // The first requests should meet the shared quotas, not the store's way of serving without them.
    await store.whenReady(5_000);
    return store;
  },
};

/**
 * The process's connections: the built-in providers its environment configures, with
 * PROVIDERS_FILE's on top, kept current as the file changes. The first call reads the file,
 * and a file that does not validate throws, which stops the start.
 */
export function gatewayConnections(settings: ServiceSettings): ConnectionDirectory {
  let directory = directoryOfSettings.get(settings);
  if (!directory) {
    directory = openGatewayConnections(settings);
    directoryOfSettings.set(settings, directory);
  }
  return directory;
}

/** Looked up on every request: by the settings object itself, with nothing made per call. */
const directoryOfSettings = new WeakMap<ServiceSettings, ConnectionDirectory>();

function openGatewayConnections(settings: ServiceSettings): ConnectionDirectory {
  return connectionDirectoryFor({
    path: settings.env.PROVIDERS_FILE,
    variables: settings.providers,
    environment: process.env,
    onSecrets: registerLogSecrets,
    onReload: ({ error, connections }) => {
      if (error) logger.error(`${error}; the connections read before stay in use`);
      else logger.log(`${settings.env.PROVIDERS_FILE} read again: ${connections} connections in use`);
    },
  });
}

/** How a tier of this model shares its traffic. */
export function strategyOf(model: CatalogueModel): RoutingStrategy {
  return model.routing.strategy ?? 'weighted';
}

/** A request's worst-case tokens: what its credit hold counts in token units, reserved against each deployment's `tpm`. */
export function tokensOf(units: Readonly<Record<string, number>>): number {
  let tokens = 0;
  for (const unit in units) if (unit.endsWith('tokens')) tokens += units[unit];
  return Math.ceil(tokens);
}

/**
 * The upstream estate as the request path uses it: the balancer over every deployment, its
 * state shared by the replicas (the store), and the report operators read.
 */
@Injectable()
export class UpstreamEstate implements OnModuleDestroy {
  readonly balancer: DeploymentBalancer;
  private readonly directory: ConnectionDirectory;

  constructor(
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
    @Inject(DEPLOYMENT_STORE) private readonly store: DeploymentStore,
    private readonly catalogue: CatalogueSnapshotService,
  ) {
    this.directory = gatewayConnections(settings);
    this.balancer = new DeploymentBalancer(store, {
      onRetry: (target, error, call) => {
        deploymentRetries.inc(deploymentRetries.series(target.deployment));
        fallbacksTaken.inc(fallbacksTaken.series(call.endpoint, target.provider));
        logAccountRefusal(error);
      },
      onCooldown: (deployment, reason) => deploymentCooldowns.inc(deploymentCooldowns.series(deployment, reason)),
    });
    deploymentSources.add(this.snapshots);
  }

  async onModuleDestroy(): Promise<void> {
    deploymentSources.delete(this.snapshots);
    await this.store.close();
  }

  /**
   * Runs a call on the deployments of `targets`, re-picking after a failure that another may not
   * have, until `signal` says no other may be tried; failures reach the client as the spec's statuses.
   */
  async run<T>(
    targets: readonly RouteTarget[],
    attempt: (target: RouteTarget, lease: DeploymentLease) => Promise<T>,
    call: { model: CatalogueModel; group: string; tokens: number; signal: CancelSignal },
  ): Promise<T> {
    const env = this.settings.env;
    try {
      return await this.balancer.run(targets, attempt, {
        group: `${call.group}|${call.model.id}`,
        endpoint: call.group,
        strategy: strategyOf(call.model),
        tokens: call.tokens,
        leaseMs: env.UPSTREAM_TIMEOUT_MS + Math.max(env.UPSTREAM_STREAM_MAX_MS, (call.model.routing.maxStreamSeconds ?? 0) * 1000) + 60_000,
        signal: call.signal,
      });
    } catch (error) {
      throw toClientError(error);
    }
  }

  /** Every connection and the deployments the catalogue routes to on it, with their shared state. */
  async report(models: readonly CatalogueModel[]): Promise<ConnectionsReport> {
    const byConnection = new Map<string, DeploymentReport[]>();
    for (const { target, report } of await this.deploymentStates(models, true)) {
      const list = byConnection.get(target.provider);
      if (list) list.push(report);
      else byConnection.set(target.provider, [report]);
    }
    const status = this.directory.fileStatus;
    return {
      providersFile: status && { path: status.path, loadedAt: status.loadedAt?.toISOString() ?? null, error: status.error },
      connections: [...this.directory.current.all()].map(
        (connection): ConnectionReport => ({
          name: connection.name,
          kind: connection.kind,
          baseUrl: connection.baseUrl,
          origin: connection.origin,
          headers: Object.keys(connection.headers),
          quotas: { rpm: connection.quotas.rpm ?? null, tpm: connection.quotas.tpm ?? null, maxConcurrent: connection.quotas.maxConcurrent ?? null },
          timeoutSeconds: connection.timeoutMs === undefined ? null : connection.timeoutMs / 1000,
          deployments: byConnection.get(connection.name) ?? [],
        }),
      ),
    };
  }

  /**
   * Every deployment the catalogue routes to, with the models on it and its shared state. The
   * report still answers when the store does not (`tolerant`), with the counts it could not read as zero.
   */
  private async deploymentStates(models: readonly CatalogueModel[], tolerant = false): Promise<Array<{ target: RouteTarget; report: DeploymentReport }>> {
    const deployments = new Map<string, { target: RouteTarget; models: string[] }>();
    for (const model of models) {
      for (const target of planRoute(model.routing.sources, this.directory.current).targets) {
        const known = deployments.get(target.deployment);
        if (known) known.models.push(model.id);
        else deployments.set(target.deployment, { target, models: [model.id] });
      }
    }
    const names = [...deployments.keys()];
    const read = this.store.snapshot(names);
    const snapshots = tolerant ? await read.catch(() => undefined) : await read;
    const now = Date.now();
    return names.map((name, index) => {
      const { target, models: routed } = deployments.get(name)!;
      return { target, report: deploymentReport(target, routed, snapshots?.[index], now) };
    });
  }

  /** Each deployment's state for the gauges, read at each scrape: nothing on the request path. */
  private readonly snapshots = async (): Promise<DeploymentGaugeState[]> =>
    (await this.deploymentStates(this.catalogue.current?.models ?? [])).map(({ target, report }) => ({ report, quotas: target.quotas }));
}

function deploymentReport(target: RouteTarget, models: string[], snapshot: DeploymentSnapshot | undefined, now: number): DeploymentReport {
  const coolingUntil = snapshot?.coolingUntil ?? 0;
  const quotas = target.quotas;
  const overQuota =
    snapshot !== undefined &&
    (snapshot.upstreamExhaustedUntil > now ||
      (quotas.rpm !== undefined && snapshot.requestsThisMinute >= quotas.rpm) ||
      (quotas.tpm !== undefined && snapshot.tokensThisMinute >= quotas.tpm) ||
      (quotas.maxConcurrent !== undefined && snapshot.inFlight >= quotas.maxConcurrent));
  return {
    deployment: target.deployment,
    connection: target.provider,
    upstream: target.model,
    models,
    state: coolingUntil > now ? 'cooling' : overQuota ? 'over-quota' : 'serving',
    coolingUntil: coolingUntil > now ? new Date(coolingUntil).toISOString() : null,
    coolingReason: coolingUntil > now ? (snapshot?.coolingReason ?? null) : null,
    inFlight: snapshot?.inFlight ?? 0,
    requestsThisMinute: snapshot?.requestsThisMinute ?? 0,
    tokensThisMinute: snapshot?.tokensThisMinute ?? 0,
    errorRate: snapshot && snapshot.attemptsThisMinute > 0 ? snapshot.failuresThisMinute / snapshot.attemptsThisMinute : null,
    latencyMs: snapshot?.latencyMs ?? null,
  };
}
