// The contract between the router (emulator.ts) and one wire format (OpenAI today;
// Anthropic, Gemini, ... later). A format owns its routes, its auth scheme and the
// shape of its error bodies; the router owns recording, control headers and dispatch.
import type { IncomingMessage } from 'node:http';
import type { RequestContext } from './context';

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';

export interface Route {
  method: HttpMethod;
  /** Exact path (fast map lookup) or a pattern whose capture groups become `ctx.params`. */
  path: string | RegExp;
  handle(ctx: RequestContext): void | Promise<void>;
  /** Served without an API key even when the emulator has one (media a provider links to). */
  public?: boolean;
}

/** Extra fields some formats put in error bodies (OpenAI: `param`, `code`). */
export interface ErrorDetails {
  param?: string | null;
  code?: string | null;
}

/** Failures the router detects before a route handler runs. */
export type RouterFailure =
  | { kind: 'not_found'; method: string; path: string }
  | { kind: 'invalid_json' }
  | { kind: 'body_too_large'; limitBytes: number }
  | { kind: 'missing_api_key' }
  | { kind: 'invalid_api_key' }
  /** A status requested by `x-emulator-status` (source 'header') or a `@status=` model-name suffix ('model'). */
  | { kind: 'emulated'; status: number; source?: 'header' | 'model' }
  | { kind: 'internal' };

export interface ErrorResponse {
  status: number;
  message: string;
  details?: ErrorDetails;
}

export interface WireFormat {
  readonly name: string;
  readonly routes: readonly Route[];
  /** Whether this format answers (with its error shape) a request no route matched. */
  ownsPath(path: string): boolean;
  /** The API key the request carries in this format's auth scheme, if any. */
  apiKeyOf(req: IncomingMessage): string | undefined;
  /** This format's error body for a status and message. */
  errorBody(status: number, message: string, details?: ErrorDetails): unknown;
  /** Status and message this format uses for a router-detected failure. */
  describeFailure(failure: RouterFailure): ErrorResponse;
}
