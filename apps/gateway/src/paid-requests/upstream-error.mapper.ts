import { HttpStatus, Logger } from '@nestjs/common';
import { ErrorMessages } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import { DeploymentsBusyError, RequestTranslationError, UpstreamHttpError, UpstreamProtocolError, UpstreamTimeoutError, UpstreamUnavailableError } from '@igw/providers';

const logger = new Logger('Upstream');

/** Logs a refusal of the operator's own account at a provider, whether or not another source then took the call. */
export function logAccountRefusal(error: unknown): void {
  if (error instanceof UpstreamHttpError && error.refusedOperatorAccount) logger.error(error.operatorLogLine);
}

/**
 * Maps an upstream failure to the spec's statuses; 4xx caused by the request keep the
 * upstream's reason. A refusal of the operator's own account is the operator's to read (in
 * the log), never the client's: its text may name the account's balance or key.
 */
export function toClientError(error: unknown): GatewayException | unknown {
  if (error instanceof RequestTranslationError) {
    const field = error.param ? `${error.param}: ` : '';
    return new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${field}${error.message}`, { cause: error });
  }
  if (error instanceof DeploymentsBusyError) {
    return new GatewayException(HttpStatus.TOO_MANY_REQUESTS, ErrorMessages.tooManyRequests, { cause: error, headers: { 'retry-after': String(error.retryAfterSeconds) } });
  }
  if (error instanceof UpstreamHttpError) {
    if (error.status === 429) {
      const headers: Record<string, string> = error.retryAfterSeconds !== undefined ? { 'retry-after': String(error.retryAfterSeconds) } : {};
      return new GatewayException(HttpStatus.TOO_MANY_REQUESTS, ErrorMessages.tooManyRequests, { cause: error, headers });
    }
    if (error.status >= 500) {
      return new GatewayException(HttpStatus.BAD_GATEWAY, `Bad Gateway: the upstream provider ${error.provider} failed (${error.status}).`, { cause: error });
    }
    if (error.refusedOperatorAccount) {
      logAccountRefusal(error);
      return new GatewayException(HttpStatus.BAD_GATEWAY, `Bad Gateway: the upstream provider ${error.provider} refused the gateway's credentials or account (${error.status}).`, { cause: error });
    }
    return new GatewayException(error.status, `Upstream provider ${error.provider} rejected the request: ${error.upstreamMessage}`, { cause: error });
  }
  if (error instanceof UpstreamTimeoutError) {
    return new GatewayException(HttpStatus.GATEWAY_TIMEOUT, `Gateway Timeout: ${error.provider} did not answer within ${error.timeoutMs} ms.`, { cause: error });
  }
  if (error instanceof UpstreamUnavailableError) {
    return new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, `Service Unavailable: the upstream provider ${error.provider} cannot be reached.`, { cause: error });
  }
  if (error instanceof UpstreamProtocolError) {
    return new GatewayException(HttpStatus.BAD_GATEWAY, `Bad Gateway: ${error.message}`, { cause: error });
  }
  return error;
}
