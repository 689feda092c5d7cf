import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthenticatedKey } from '@igw/contracts';
import type { NextFunction, Request, Response } from 'express';

export const REQUEST_ID_HEADER = 'x-request-id';

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
