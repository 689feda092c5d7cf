// GET /admin/v1/connections as the console (apps/billing/console) reads it: plain types with no
// imports, so the browser bundle can take them from here. They are the ConnectionsReport of
// libs/contracts/src/messaging/queues.ts (whose module imports Node's), kept equal to it by
// the check in dto/connections-report.dto.ts.

export type ConsoleCooldownReason = 'rate-limited' | 'failing' | 'refused';

export interface ConsoleDeployment {
  deployment: string;
  connection: string;
  upstream: string;
  models: string[];
  state: 'serving' | 'cooling' | 'over-quota';
  coolingUntil: string | null;
  coolingReason: ConsoleCooldownReason | null;
  inFlight: number;
  requestsThisMinute: number;
  tokensThisMinute: number;
  errorRate: number | null;
  latencyMs: number | null;
}

export interface ConsoleConnection {
  name: string;
  kind: string;
  baseUrl: string;
  origin: 'environment' | 'file';
  headers: string[];
  quotas: { rpm: number | null; tpm: number | null; maxConcurrent: number | null };
  timeoutSeconds: number | null;
  deployments: ConsoleDeployment[];
}

export interface ConsoleConnections {
  providersFile: { path: string; loadedAt: string | null; error: string | null } | null;
  connections: ConsoleConnection[];
}
