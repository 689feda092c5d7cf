import { UpstreamHttpError, UpstreamLimitExceededError, UpstreamProtocolError, UpstreamTimeoutError, UpstreamUnavailableError } from './upstream.errors';

/**
 * Whether another source (or the same one, later) may succeed where this attempt failed. An
 * answer past the gateway's limits is not: that provider did (and charges) the work, and
 * another would likely answer the same way. A refusal of the operator's account at one
 * provider says nothing of another's.
 */
export function isRetriableUpstreamError(error: unknown): boolean {
  if (error instanceof UpstreamLimitExceededError) return false;
  if (error instanceof UpstreamHttpError) return error.refusedOperatorAccount || error.status === 429 || error.status >= 500;
  return error instanceof UpstreamUnavailableError || error instanceof UpstreamTimeoutError || error instanceof UpstreamProtocolError;
}
