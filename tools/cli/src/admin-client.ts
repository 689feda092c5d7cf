// A thin wrapper over Node's global fetch for the admin API on the billing service.
import type { AdminRequest } from './commands';

export interface AdminResponse {
  status: number;
  statusText: string;
  ok: boolean;
  /** Parsed JSON; the raw text when the body is not JSON; undefined when empty. */
  body: unknown;
}

/** No HTTP answer at all: connection refused, unknown host, timeout... */
export class AdminUnreachableError extends Error {
  override readonly name = 'AdminUnreachableError';
  constructor(
    message: string,
    readonly url: string,
    readonly code: string | undefined,
  ) {
    super(message);
  }
}

export interface AdminClientOptions {
  /** Billing base URL, e.g. http://127.0.0.1:8081 (a path prefix is kept). */
  baseUrl: string;
  token: string;
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 30_000;

export async function sendAdminRequest(options: AdminClientOptions, request: AdminRequest): Promise<AdminResponse> {
  const baseUrl = options.baseUrl.replace(/\/+$/, '');
  const url = `${baseUrl}${request.path}`;
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const headers: Record<string, string> = { authorization: `Bearer ${options.token}`, accept: 'application/json' };
  if (request.body !== undefined) headers['content-type'] = 'application/json';

  let response: Response;
  let text: string;
  try {
    response = await fetch(url, {
      method: request.method,
      headers,
      body: request.body === undefined ? undefined : JSON.stringify(request.body),
      signal: AbortSignal.timeout(timeoutMs),
    });
    text = await response.text();
  } catch (error) {
    throw unreachable(error, baseUrl, timeoutMs);
  }
  return { status: response.status, statusText: response.statusText, ok: response.ok, body: parseBody(text) };
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

function unreachable(error: unknown, baseUrl: string, timeoutMs: number): AdminUnreachableError {
  if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
    return new AdminUnreachableError(`No answer from the admin API at ${baseUrl} within ${timeoutMs / 1000}s.`, baseUrl, 'ETIMEDOUT');
  }
  const code = errorCode(error);
  if (code === 'ECONNREFUSED') {
    return new AdminUnreachableError(
      `Cannot connect to the admin API at ${baseUrl} (connection refused): is the gateway running? ` +
        'start it with npm start (or point --url / BILLING_URL at the billing service).',
      baseUrl,
      code,
    );
  }
  const detail = code ?? innermostMessage(error);
  return new AdminUnreachableError(
    `Cannot reach the admin API at ${baseUrl} (${detail}): is the URL right and the gateway running?`,
    baseUrl,
    code,
  );
}

/** fetch reports "fetch failed" and hides the system error in `cause` (an AggregateError when several addresses were tried). */
function errorCode(error: unknown, depth = 0): string | undefined {
  if (depth > 5 || typeof error !== 'object' || error === null) return undefined;
  if ('code' in error && typeof error.code === 'string' && error.code !== '') return error.code;
  if (error instanceof AggregateError) {
    for (const inner of error.errors) {
      const code = errorCode(inner, depth + 1);
      if (code !== undefined) return code;
    }
  }
  return 'cause' in error ? errorCode(error.cause, depth + 1) : undefined;
}

function innermostMessage(error: unknown): string {
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error && current.cause instanceof Error; depth++) current = current.cause;
  return current instanceof Error ? current.message : String(current);
}
