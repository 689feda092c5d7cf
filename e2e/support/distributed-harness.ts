import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { eventually, createTestDatabase, dropQueueData, uniqueQueuePrefix } from '@igw/testing';
import { call } from './http';
import { childEnvironment, startHealthyService, type ServiceProcess } from './service-process';

export interface DistributedOptions {
  adminToken: string;
  catalogueFile: string;
  /** Gateway replicas to start (separate processes). */
  gateways: number;
  /** Added to every gateway's environment (upstream addresses, limits, ...). */
  gatewayEnv: NodeJS.ProcessEnv;
  /** Starts the decisions service, with this added to its environment (its upstreams). */
  decisions?: boolean | NodeJS.ProcessEnv;
}

export interface DistributedHarness {
  database: ScratchDatabase;
  /** The queue settings every service shares: Redis when the run has REDIS_URL, else BullMQ on PostgreSQL. */
  queueEnv: NodeJS.ProcessEnv;
  catalogue: string;
  billing: string;
  gateways: string[];
  /** The running process of a service: `catalogue`, `billing`, `decisions`, `gateway-0`, `gateway-1`, ... */
  process(name: string): ServiceProcess;
  /** Starts a service again (after it was stopped or killed) on its port with its environment, and waits until it is healthy. */
  restart(name: string): Promise<void>;
  /** A paid account with `credits` and a key for it. */
  paidKey(credits: number): Promise<string>;
  stop(): Promise<void>;
}

/**
 * The distributed deployment as separate processes, as docker-compose runs it: catalogue,
 * billing, optionally decisions, and gateway replicas, each alone, connected only by the
 * queue, on a database and queue namespace of their own.
 */
export async function startDistributedHarness(options: DistributedOptions): Promise<DistributedHarness> {
  const database = await createTestDatabase();
  const queueEnv: NodeJS.ProcessEnv = process.env.REDIS_URL
    ? { REDIS_URL: process.env.REDIS_URL, QUEUE_PREFIX: uniqueQueuePrefix() }
    : { DATABASE_URL: database.url };
  const services = new Map<string, { process: ServiceProcess; entry: string; port: number; env: NodeJS.ProcessEnv }>();
  const taken = new Set<number>();
  const start = async (name: string, app: string, extra: (port: number) => NodeJS.ProcessEnv) => {
    // Services start side by side: a port free now may have been handed to another that has not bound it yet.
    let port = await findFreePort();
    while (taken.has(port)) port = await findFreePort();
    taken.add(port);
    // As in the chart and compose: only billing and the catalogue, which check it, get the admin token.
    const adminEnv = app === 'billing' || app === 'catalogue' ? { ADMIN_TOKEN: options.adminToken } : {};
    const env = childEnvironment({ ...queueEnv, ...adminEnv, HOST: '127.0.0.1', ...extra(port) });
    const entry = `apps/${app}/src/main.js`;
    services.set(name, { process: await startHealthyService(entry, port, env), entry, port, env });
    return `http://127.0.0.1:${port}`;
  };
  const stop = async () => {
    for (const service of [...services.values()].reverse()) await service.process.stop();
    await dropQueueData({ url: queueEnv.REDIS_URL, prefix: queueEnv.QUEUE_PREFIX });
    await database.drop();
  };

  try {
    const catalogue = await start('catalogue', 'catalogue', (port) => ({ DATABASE_URL: database.url, CATALOGUE_PORT: String(port), CATALOGUE_FILE: options.catalogueFile }));
    const billing = await start('billing', 'billing', (port) => ({ DATABASE_URL: database.url, BILLING_PORT: String(port) }));
    // The rest start side by side (each start is mostly waiting): the gateways and decisions own no tables.
    const decisionsEnv = options.decisions === true ? {} : options.decisions;
    // All settled before a failure is thrown, so that `stop` finds every process that started.
    const started = await Promise.allSettled([
      decisionsEnv ? start('decisions', 'decisions', (port) => ({ ...decisionsEnv, DECISIONS_PORT: String(port) })) : undefined,
      ...Array.from({ length: options.gateways }, (_, i) => start(`gateway-${i}`, 'gateway', (port) => ({ ...options.gatewayEnv, PORT: String(port) }))),
    ]);
    const failed = started.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
    const gateways = started.slice(1).map((outcome) => (outcome as PromiseFulfilledResult<string>).value);
    for (const gateway of gateways) await eventually(async () => (await call(`${gateway}/readyz`)).status === 200, 20_000);

    return {
      database,
      queueEnv,
      catalogue,
      billing,
      gateways,
      process(name) {
        const service = services.get(name);
        if (!service) throw new Error(`no service named ${name}`);
        return service.process;
      },
      async restart(name) {
        const service = services.get(name);
        if (!service) throw new Error(`no service named ${name}`);
        if (service.process.child.exitCode === null && service.process.child.signalCode === null) throw new Error(`${name} is still running`);
        service.process = await startHealthyService(service.entry, service.port, service.env);
      },
      async paidKey(credits) {
        const account = await call<{ id: string }>(`${billing}/admin/v1/accounts`, { token: options.adminToken, body: { credits, plan: 'paid' } });
        return (await call<{ key: string }>(`${billing}/admin/v1/accounts/${account.body.id}/keys`, { token: options.adminToken, body: {} })).body.key;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}
