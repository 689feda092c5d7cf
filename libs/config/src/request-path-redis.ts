import type { RedisOptions } from 'ioredis';

/** A command unanswered this long fails like a closed connection (REDIS_COMMAND_TIMEOUT_MS's default). */
const COMMAND_TIMEOUT_MS = 500;

/**
 * The client options of the stores the request path asks (admission's limits, the deployments'
 * state). Commands are not queued while disconnected, nor waited for beyond their timeout: the
 * store turns to its fallback instead. (ioredis keeps a command that timed out in its queue,
 * so a late answer is still matched to it and to nothing else.) Nor sent again on a new
 * connection: a request admitted locally once its admission timed out must not be counted in
 * Redis as well, minutes later.
 */
export const requestPathRedisOptions = (commandTimeoutMs = COMMAND_TIMEOUT_MS): RedisOptions => ({
  maxRetriesPerRequest: 1,
  enableOfflineQueue: false,
  commandTimeout: commandTimeoutMs,
  autoResendUnfulfilledCommands: false,
});
