// The upstream estate's report (GET /admin/v1/connections), with no imports: the console's
// browser bundle reads these types from here as they are (`@igw/contracts/connections-report`).

/** Why a deployment is skipped for now: an upstream 429 (or its rate-limit headers), failures, or a refusal of the operator's key. */
export type CooldownReason = 'rate-limited' | 'failing' | 'refused';

/** One deployment (a connection and the model or Azure deployment called there) as every replica shares it. */
export interface DeploymentReport {
  /** `<connection>/<upstream>`: what `x-gateway-deployment`, the ledger and the access log name. */
  deployment: string;
  connection: string;
  /** The model (or Azure deployment) name at the connection. */
  upstream: string;
  /** The catalogue models with a source on it. */
  models: string[];
  /** `serving`; `cooling` until `coolingUntil`; `over-quota` while this minute's requests or tokens are spent. */
  state: 'serving' | 'cooling' | 'over-quota';
  coolingUntil: string | null;
  coolingReason: CooldownReason | null;
  inFlight: number;
  requestsThisMinute: number;
  tokensThisMinute: number;
  /** This minute's failed attempts over its attempts; null before any. */
  errorRate: number | null;
  /** Moving average of the time to the first byte of an answer, in milliseconds; null before any. */
  latencyMs: number | null;
}

/** A named upstream connection, without its secrets. */
export interface ConnectionReport {
  name: string;
  kind: string;
  baseUrl: string;
  /** `environment` (a built-in provider configured by its variables) or `file` (PROVIDERS_FILE). */
  origin: 'environment' | 'file';
  /** Names of the extra request headers (their values may be secrets). */
  headers: string[];
  /** Quotas of each deployment on the connection, null when unbounded. */
  quotas: { rpm: number | null; tpm: number | null; maxConcurrent: number | null };
  timeoutSeconds: number | null;
  deployments: DeploymentReport[];
}

export interface ConnectionsReport {
  /** PROVIDERS_FILE as last read: null when none is set; `error` names why the last edit was not taken. */
  providersFile: { path: string; loadedAt: string | null; error: string | null } | null;
  connections: ConnectionReport[];
}
