import {
  createPostgresBackend,
  createPostgresRelayBackend,
  Queue,
  QueueEvents,
  Relay,
  withBackend,
  Worker,
  type Processor,
  type RedisOptions,
  type WorkerOptions,
} from 'bullmq';
import type { QueueBackendOptions } from './messaging.options';

/**
 * The single place that knows the two BullMQ backends apart. Everything above it uses
 * the same Queue/Worker/QueueEvents/Relay API, so both modes run one code path.
 */
export interface BullBackend {
  createQueue(name: string): Queue;
  createWorker(name: string, processor: Processor, options: Pick<WorkerOptions, 'concurrency'>): Worker;
  createQueueEvents(name: string): QueueEvents;
  createRelay(nodeName: string): Relay<unknown>;
  describe(): string;
}

/** Small pools: each BullMQ object owns one, and PostgreSQL counts every connection. */
const POSTGRES_POOL_SIZE = 4;

export function redisConnectionOptions(url: string): RedisOptions {
  const parsed = new URL(url);
  return {
    host: parsed.hostname,
    port: parsed.port ? Number(parsed.port) : 6379,
    username: parsed.username ? decodeURIComponent(parsed.username) : undefined,
    password: parsed.password ? decodeURIComponent(parsed.password) : undefined,
    db: parsed.pathname.length > 1 ? Number(parsed.pathname.slice(1)) : 0,
    tls: parsed.protocol === 'rediss:' ? {} : undefined,
    // BullMQ workers block on the connection; they must never give up on a command.
    maxRetriesPerRequest: null,
  };
}

export function createBullBackend(options: QueueBackendOptions): BullBackend {
  return options.kind === 'redis' ? createRedisBackend(options) : createPostgresBullBackend(options);
}

function createRedisBackend(options: Extract<QueueBackendOptions, { kind: 'redis' }>): BullBackend {
  const connection = redisConnectionOptions(options.url);
  const prefix = options.prefix;
  return {
    createQueue: (name) => new Queue(name, { connection, prefix }),
    createWorker: (name, processor, workerOptions) => new Worker(name, processor, { connection, prefix, ...workerOptions }),
    createQueueEvents: (name) => new QueueEvents(name, { connection, prefix }),
    createRelay: (nodeName) => new Relay({ connection, prefix, namespace: prefix, name: nodeName }) as Relay<unknown>,
    describe: () => `redis (prefix ${prefix})`,
  };
}

function createPostgresBullBackend(options: Extract<QueueBackendOptions, { kind: 'postgres' }>): BullBackend {
  const postgres = withBackend(createPostgresBackend);
  const connection = { connectionString: options.url, schema: options.schema, migrate: true, max: POSTGRES_POOL_SIZE };
  return {
    createQueue: (name) => new postgres.Queue(name, { connection }) as unknown as Queue,
    createWorker: (name, processor, workerOptions) =>
      new postgres.Worker(name, processor, { connection, ...workerOptions }) as unknown as Worker,
    createQueueEvents: (name) => new postgres.QueueEvents(name, { connection }) as unknown as QueueEvents,
    createRelay: (nodeName) =>
      new Relay({ connection, backend: createPostgresRelayBackend, namespace: options.schema, name: nodeName }) as Relay<unknown>,
    describe: () => `postgres (schema ${options.schema})`,
  };
}
