/** A request/reply call got no answer in time: the other service is down or overloaded. */
export class RpcTimeoutError extends Error {
  constructor(
    readonly queue: string,
    readonly job: string,
    readonly timeoutMs: number,
    /** Whether a worker had taken the job (it may still be running): its side effects may have happened. */
    readonly workerStarted = false,
  ) {
    super(`No reply to ${job} on queue ${queue} within ${timeoutMs} ms`);
    this.name = 'RpcTimeoutError';
  }
}

/** The other service answered the request with a failure. */
export class RpcFailedError extends Error {
  constructor(
    readonly queue: string,
    readonly job: string,
    reason: string,
  ) {
    super(`${job} on queue ${queue} failed: ${reason}`);
    this.name = 'RpcFailedError';
  }
}
