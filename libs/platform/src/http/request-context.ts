import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
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
  /** The account's money as last heard from billing when the request started. */
  balance: BalanceSnapshot;
}

/** What billing said about an account's money: the balance and the usage charges it already includes. */
export interface BalanceSnapshot {
  balanceMicro: bigint;
  /** Grows with every balance change; a lower one is older. */
  version: number;
  usageSpentMicro: bigint;
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

/** A request as both ways of serving one see it: through Express, or straight from Node's server (direct routes). */
export type ServedRequest = IncomingMessage & { context?: RequestContext; originalUrl?: string };

/**
 * Gives the request its own id, generated here and never taken from the client: the
 * ledger uses it as the idempotency key, so a client-chosen id could dodge billing.
 */
export function startRequestContext(request: ServedRequest, response: ServerResponse): RequestContext {
  const context: RequestContext = { requestId: randomUUID() };
  request.context = context;
  response.setHeader(REQUEST_ID_HEADER, context.requestId);
  return context;
}

export function requestIdMiddleware(request: Request, response: Response, next: NextFunction): void {
  startRequestContext(request, response);
  next();
}
