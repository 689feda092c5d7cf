import { findFreePort, type ScratchDatabase } from '@igw/persistence';
import { call, eventually } from './http';
import { childEnvironment, startHealthyService, type ServiceProcess } from './service-process';
import { createTestDatabase, dropQueueData, uniqueQueuePrefix } from './test-environment';

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
  const services: ServiceProcess[] = [];
  const start = async (name: string, extra: (port: number) => NodeJS.ProcessEnv) => {
    const port = await findFreePort();
    const env = childEnvironment({ ...queueEnv, ADMIN_TOKEN: options.adminToken, HOST: '127.0.0.1', ...extra(port) });
    services.push(await startHealthyService(`apps/${name}/src/main.js`, port, env));
    return `http://127.0.0.1:${port}`;
  };
  const stop = async () => {
    for (const service of services.reverse()) await service.stop();
    await dropQueueData({ url: queueEnv.REDIS_URL, prefix: queueEnv.QUEUE_PREFIX });
    await database.drop();
  };

  try {
    const catalogue = await start('catalogue', (port) => ({ DATABASE_URL: database.url, CATALOGUE_PORT: String(port), CATALOGUE_FILE: options.catalogueFile }));
    const billing = await start('billing', (port) => ({ DATABASE_URL: database.url, BILLING_PORT: String(port) }));
    if (options.decisions) {
      const decisionsEnv = options.decisions === true ? {} : options.decisions;
      await start('decisions', (port) => ({ ...decisionsEnv, DECISIONS_PORT: String(port) }));
    }
    const gateways: string[] = [];
    for (let i = 0; i < options.gateways; i++) gateways.push(await start('gateway', (port) => ({ ...options.gatewayEnv, PORT: String(port) })));
    for (const gateway of gateways) await eventually(async () => (await call(`${gateway}/readyz`)).status === 200, 20_000);

    return {
      database,
      queueEnv,
      catalogue,
      billing,
      gateways,
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
