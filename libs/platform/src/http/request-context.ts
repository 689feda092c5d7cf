import { randomUUID } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';

export const REQUEST_ID_HEADER = 'x-request-id';

/** Who is calling, once an API key was accepted. */
export interface AuthenticatedKey {
  keyId: string;
  accountId: string;
  plan: 'free' | 'paid';
  status: 'active' | 'suspended';
  /** Account overrides of the per-key limits. */
  limits: { requestsPerMinute?: number; concurrentRequests?: number };
  /** Credits left in micro-credits when the request started. */
  balanceMicro: bigint;
}

export interface RequestContext {
  requestId: string;
  auth?: AuthenticatedKey;
}

declare module 'express-serve-static-core' {
  interface Request {
    context: RequestContext;
  }
}

/**
 * Gives every request its own id, generated here and never taken from the client: the
 * ledger uses it as the idempotency key, so a client-chosen id could dodge billing.
 */
export function requestIdMiddleware(request: Request, response: Response, next: NextFunction): void {
  const requestId = randomUUID();
  request.context = { requestId };
  response.setHeader(REQUEST_ID_HEADER, requestId);
  next();
}
