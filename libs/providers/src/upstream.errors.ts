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

  /**
   * The provider refused the operator's own account: its key (401, 403) or its credit (402; an
   * OpenRouter 402 names the account's remaining balance). Not the client's fault nor its
   * business: another source may take the call, the client is told only that the gateway's
   * account was refused, and the provider's words go to the operator's log.
   */
  get refusedOperatorAccount(): boolean {
    return this.status === 401 || this.status === 402 || this.status === 403;
  }

  /** The operator's log line for such a refusal: the provider's own words (the logger redacts secrets). */
  get operatorLogLine(): string {
    return `${this.provider} refused the gateway's own account (${this.status}): ${this.upstreamMessage}`;
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
    /** False only when the connection itself timed out: the prompt never left the gateway. */
    readonly promptSent: boolean,
  ) {
    super(`${provider} did not answer within ${timeoutMs} ms`);
    this.name = 'UpstreamTimeoutError';
  }
}

/**
 * A call that timed out once its prompt was sent: the upstream may bill the work, so the prompt
 * is owed and no other source is tried (the billing rule, apps/gateway/src/paid-requests/upstream-billing.ts).
 */
export function timedOutAfterPromptSent(error: unknown): boolean {
  return error instanceof UpstreamTimeoutError && error.promptSent;
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

/**
 * The upstream's answer went past one of the gateway's bounds (a non-streamed body too large,
 * one stream event too large, a stream running too long). The connection was closed at once.
 * A 502 for the client (as a protocol error), but never tried on another source: the provider
 * did the work, and another would likely do the same.
 */
export class UpstreamLimitExceededError extends UpstreamProtocolError {
  /**
   * True when the upstream accepted the request (a 2xx head) before the limit cut it: the
   * provider charges for that answer even though the gateway refused to read it.
   */
  readonly upstreamCharged: boolean;

  constructor(
    provider: string,
    /** What went past its bound, for the message: e.g. `answer exceeded the gateway's limit of 1 MiB (UPSTREAM_MAX_RESPONSE_BYTES)`. */
    readonly limit: string,
    upstreamCharged: boolean,
  ) {
    super(provider, limit);
    this.message = `the upstream ${limit}`;
    this.name = 'UpstreamLimitExceededError';
    this.upstreamCharged = upstreamCharged;
  }
}
