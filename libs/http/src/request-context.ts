import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AuthenticatedKey } from '@igw/contracts';
import type { JsonBody } from './body-parsing';
import type { NextFunction, Request, Response } from 'express';

export const REQUEST_ID_HEADER = 'x-request-id';
/** The client's own id for a request (OpenAI's SDKs send it): logged and recorded with the usage, never used to identify anything. */
export const CLIENT_REQUEST_ID_HEADER = 'x-client-request-id';
const LONGEST_CLIENT_REQUEST_ID = 128;
/** Printable ASCII only: the id goes into log lines, queue jobs and ledger rows as it came. */
const PRINTABLE_ASCII = /^[\x20-\x7e]+$/;

export interface RequestContext {
  requestId: string;
  /** X-Client-Request-Id when well-formed (printable ASCII, at most 128 characters). */
  clientRequestId?: string;
  auth?: AuthenticatedKey;
  /** The size of the body as read, before decoding and parsing: what a request's hold and context check start from. */
  bodyBytes?: number;
  /** When the request arrived (performance.now()). */
  startedAt?: number;
  /** The route pattern, for requests served outside Express (which knows its own). */
  route?: string;
  /** What a paid request ran and used, for its access-log line and metrics: filled as the gateway learns it. */
  model?: string;
  provider?: string;
  /** The deployment that answered, `<connection>/<upstream>`. */
  deployment?: string;
  inputTokens?: number;
  outputTokens?: number;
  credits?: number;
  /** The prompt, kept only with LOG_PROMPTS=true, for the access-log line. */
  prompt?: unknown;
  /** The body's `model` as the client wrote it, for the access-log line of a request refused before a model was resolved. */
  requestedModel?: string;
  /** Why the request failed: the message of its error body. */
  error?: string;
  /** The answer under way: what is learnt while the request runs (the deployment that served it) can still go into its headers. */
  response?: ServerResponse;
  /** The JSON body as read (body-parsing.ts), for the handlers that need its text. */
  body?: JsonBody;
  /** The body limit JsonBodyGuard left the body to be read with, after the route's credential check. */
  bodyReadAfterCredential?: number;
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
  // Started already by the server's request observer (or by the app a mounted one serves for).
  if (request.context) return request.context;
  // Every field from the start, so every context has one shape.
  const context: RequestContext = {
    requestId: randomUUID(),
    clientRequestId: wellFormedClientRequestId(request.headers[CLIENT_REQUEST_ID_HEADER]),
    auth: undefined,
    bodyBytes: undefined,
    startedAt: performance.now(),
    route: undefined,
    model: undefined,
    provider: undefined,
    deployment: undefined,
    inputTokens: undefined,
    outputTokens: undefined,
    credits: undefined,
    prompt: undefined,
    requestedModel: undefined,
    error: undefined,
    response,
    body: undefined,
    bodyReadAfterCredential: undefined,
  };
  request.context = context;
  response.setHeader(REQUEST_ID_HEADER, context.requestId);
  return context;
}

/** Longer model names are cut in the log line: the field is for reading, and a client chooses its length. */
const LONGEST_LOGGED_MODEL = 200;

/** Keeps a parsed body's `model` (when it is a string) in the request's context, for its access-log line. */
export function noteRequestedModel(request: ServedRequest, body: unknown): void {
  const model = typeof body === 'object' && body !== null ? (body as { model?: unknown }).model : undefined;
  if (request.context && typeof model === 'string') request.context.requestedModel = model.slice(0, LONGEST_LOGGED_MODEL);
}

/** The header's value when it is printable ASCII of at most 128 characters; anything else is ignored. */
export function wellFormedClientRequestId(value: string | string[] | undefined): string | undefined {
  if (typeof value !== 'string' || value.length === 0 || value.length > LONGEST_CLIENT_REQUEST_ID) return undefined;
  return PRINTABLE_ASCII.test(value) ? value : undefined;
}

export function requestIdMiddleware(request: Request, response: Response, next: NextFunction): void {
  startRequestContext(request, response);
  next();
}

/**
 * The request a `@DirectRoute()` method receives with `@Req()`: Node's own (with its context,
 * started on both paths), so that nothing Express adds can be called on it.
 */
export type DirectRequest = IncomingMessage & { context: RequestContext };
