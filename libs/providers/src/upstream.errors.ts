/** The upstream answered with an error status. */
export class UpstreamHttpError extends Error {
  constructor(
    readonly provider: string,
    readonly status: number,
    readonly upstreamMessage: string,
    readonly retryAfterSeconds?: number,
  ) {
    super(`${provider} answered ${status}: ${upstreamMessage}`);
    this.name = 'UpstreamHttpError';
  }
}

/** The upstream could not be reached (refused, reset, DNS). */
export class UpstreamUnavailableError extends Error {
  constructor(
    readonly provider: string,
    reason: string,
  ) {
    super(`${provider} is unreachable: ${reason}`);
    this.name = 'UpstreamUnavailableError';
  }
}

/** The upstream did not answer in time. */
export class UpstreamTimeoutError extends Error {
  constructor(
    readonly provider: string,
    readonly timeoutMs: number,
  ) {
    super(`${provider} did not answer within ${timeoutMs} ms`);
    this.name = 'UpstreamTimeoutError';
  }
}

/** The upstream answered 2xx with a body that is not the expected shape. */
export class UpstreamProtocolError extends Error {
  constructor(
    readonly provider: string,
    reason: string,
  ) {
    super(`${provider} sent an invalid response: ${reason}`);
    this.name = 'UpstreamProtocolError';
  }
}

/**
 * The request cannot be expressed in the upstream's wire format (e.g. tool-call arguments
 * that are not JSON for a provider that needs an object). The client's fault: a 400, raised
 * before anything was sent.
 */
export class RequestTranslationError extends Error {
  constructor(
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'RequestTranslationError';
  }
}
