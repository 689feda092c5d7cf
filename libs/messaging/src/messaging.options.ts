/** Where BullMQ keeps its queues and relay: Redis when REDIS_URL is set, else PostgreSQL. */
export type QueueBackendOptions =
  | { kind: 'redis'; url: string; prefix: string }
  | { kind: 'postgres'; url: string; schema: string };

export interface MessagingOptions {
  /** Shown in relay dashboards and in connection names, e.g. `gateway`. */
  serviceName: string;
  backend: QueueBackendOptions;
  /** Default time a request/reply call waits for its answer. */
  rpcTimeoutMs?: number;
  /** How long shutdown lets workers finish the jobs they are running (SHUTDOWN_DRAIN_MS); then they are closed regardless. */
  workerDrainMs?: number;
}

export const MESSAGING_OPTIONS = Symbol('MESSAGING_OPTIONS');
