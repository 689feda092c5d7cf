/** Every call goes to billing's own origin with the session cookie; writes carry the console header billing requires of cookie-authenticated writes. */
export const CONSOLE_HEADER = 'x-igw-console';

export class ApiError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

type Listener = () => void;
const signedOutListeners = new Set<Listener>();
export function onSignedOut(listener: Listener): () => void {
  signedOutListeners.add(listener);
  return () => signedOutListeners.delete(listener);
}

/** The console's own session calls: the only ones made while no session is open. */
const SESSION_PATHS = new Set(['console/api/session', 'console/api/login', 'console/api/logout']);

/**
 * The open session's requests share one signal: when the session ends (signed out here, or a
 * 401 saying it is over) every request still in flight is aborted and none starts after, so a
 * page's debounced search or late poll cannot reach billing with a session that is gone.
 */
let session = new AbortController();

/** Called once billing has said the session is open (signed in, or found open on load). */
export function sessionOpened(): void {
  if (session.signal.aborted) session = new AbortController();
}

function sessionEnded(): void {
  if (session.signal.aborted) return;
  session.abort();
  for (const listener of signedOutListeners) listener();
}

/** Ends the session here first (nothing else leaves after the click), then at billing. */
export async function signOut(): Promise<void> {
  sessionEnded();
  await api('POST', 'console/api/logout').catch(() => undefined);
}

/** A path under billing's root, whatever prefix the console is served under (`<prefix>/console/`). */
export function billingUrl(path: string): string {
  return new URL(`../${path.replace(/^\//, '')}`, document.baseURI).toString();
}

export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const ownSession = SESSION_PATHS.has(path);
  const signal = ownSession ? undefined : session.signal;
  if (signal?.aborted) throw new ApiError(401, 'Signed out.');
  const headers: Record<string, string> = { [CONSOLE_HEADER]: '1', accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(billingUrl(path), {
    method,
    headers,
    credentials: 'same-origin',
    body: body === undefined ? undefined : JSON.stringify(body),
    signal,
  });
  if (response.status === 204) return undefined as T;
  const text = await response.text();
  let parsed: unknown = undefined;
  try {
    parsed = text ? JSON.parse(text) : undefined;
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    const message = (parsed as { message?: unknown } | undefined)?.message;
    if (response.status === 401 && !ownSession) sessionEnded();
    throw new ApiError(response.status, typeof message === 'string' ? message : `${response.status} ${response.statusText}`);
  }
  return parsed as T;
}

export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : '';
}

export interface Account {
  id: string;
  name: string;
  balance: number;
  plan: 'free' | 'paid';
  lowBalanceThreshold: number;
  status: 'active' | 'suspended';
  autoDebitStatus: string;
  requestsPerMinute: number | null;
  concurrentRequests: number | null;
  /** Null: off unless a key turns it on. */
  cache: ResponseCacheSettings | null;
  createdAt: string;
  updatedAt: string;
}

/** The response cache as an account or a key sets it; a field left out is the account's (for a key) or the default. */
export interface ResponseCacheSettings {
  enabled?: boolean;
  ttlSeconds?: number;
  maxTtlSeconds?: number;
  scope?: 'account' | 'key';
}

export interface CacheCounts {
  hits: number;
  misses: number;
  /** USD, exact decimal string. */
  savedUsd: string;
}

/** GET admin/v1/accounts/:id/cache: the ledger's cache hits, misses and saving since `from`, for the account and each key. */
export interface CacheStats {
  from: string;
  account: CacheCounts;
  keys: Array<CacheCounts & { keyId: string }>;
}

export interface KeyBudget {
  limit: string;
  unit: 'usd' | 'credits';
  period: 'day' | 'month' | 'lifetime';
}

export interface KeySpend {
  period: KeyBudget['period'];
  spent: string;
  periodStart: string;
  resetsAt: string | null;
}

/** A key as billing's KeyDto has it: its rules (null when unset) and its spend in the budget's current period. */
export interface Key {
  id: string;
  name: string | null;
  prefix: string;
  accountId: string;
  createdAt: string;
  revokedAt: string | null;
  metadata: Record<string, string>;
  budget: KeyBudget | null;
  models: string[] | null;
  rpm: number | null;
  concurrency: number | null;
  expiresAt: string | null;
  /** Null: the account's applies. */
  cache: ResponseCacheSettings | null;
  /** Null without a budget. */
  spend: KeySpend | null;
}

/** The answer to creating a key: the key itself, shown only this once, with its KeyDto. */
export interface CreatedKey extends Key {
  key: string;
}

export interface UsageEntry {
  id: string;
  kind: 'usage' | 'credit';
  requestId: string | null;
  keyId: string | null;
  model: string | null;
  endpoint: string | null;
  units: Record<string, number> | null;
  credits: string;
  usd: string;
  reason: string | null;
  occurredAt: string;
}

export interface SummaryRow {
  day: string;
  hour?: string;
  model?: string | null;
  keyId?: string | null;
  requests: number;
  credits: string;
  usd: string;
}

export interface Summary {
  data: SummaryRow[];
  totals: { requests: number; credits: string; usd: string };
}

export type { ConsoleCatalogue as Catalogue, ConsoleModel as CatalogueModel } from '../../src/console/console-catalogue.types';
export type { ConnectionReport as Connection, ConnectionsReport as Connections, DeploymentReport as Deployment } from '@igw/messaging/connections-report';

export interface List<T> {
  data: T[];
  nextCursor?: string | null;
}
