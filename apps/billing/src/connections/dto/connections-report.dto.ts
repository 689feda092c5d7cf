import { ApiProperty } from '@nestjs/swagger';
import type { ConnectionReport, ConnectionsReport, CooldownReason, DeploymentReport } from '@igw/messaging/connections-report';

const COOLDOWN_REASONS: CooldownReason[] = ['rate-limited', 'failing', 'refused'];
const DEPLOYMENT_STATES: Array<DeploymentReport['state']> = ['serving', 'cooling', 'over-quota'];

export class DeploymentReportDto implements DeploymentReport {
  @ApiProperty({ description: '`<connection>/<upstream>`: what the `x-gateway-deployment` header, the ledger and the access log name', example: 'azure-eastus/gpt-4o-prod' })
  deployment!: string;
  @ApiProperty({ example: 'azure-eastus' }) connection!: string;
  @ApiProperty({ description: 'The model (or Azure deployment) name called at the connection', example: 'gpt-4o-prod' }) upstream!: string;
  @ApiProperty({ type: [String], description: 'The catalogue models with a source on this deployment', example: ['openai/gpt-4o'] }) models!: string[];
  @ApiProperty({ enum: DEPLOYMENT_STATES, description: '`serving`; `cooling` until `coolingUntil`; `over-quota` while this minute\'s requests or tokens are spent' })
  state!: DeploymentReport['state'];
  @ApiProperty({ type: String, nullable: true, description: 'When the cooldown ends, ISO 8601; null unless cooling' }) coolingUntil!: string | null;
  @ApiProperty({ enum: COOLDOWN_REASONS, nullable: true, description: 'An upstream 429 (or its rate-limit headers), failures, or a refusal of the key; null unless cooling' })
  coolingReason!: CooldownReason | null;
  @ApiProperty({ type: 'integer', description: 'Calls under way, across every replica' }) inFlight!: number;
  @ApiProperty({ type: 'integer', description: 'Requests started this minute, against the connection\'s rpm' }) requestsThisMinute!: number;
  @ApiProperty({ type: 'integer', description: 'Tokens counted this minute (reserved, then settled on usage), against the connection\'s tpm' }) tokensThisMinute!: number;
  @ApiProperty({ type: Number, nullable: true, description: "This minute's failed attempts over its attempts, 0 to 1; null before any", example: 0.02 }) errorRate!: number | null;
  @ApiProperty({ type: Number, nullable: true, description: 'Moving average of the time to the first byte of an answer, ms; null before any', example: 420 }) latencyMs!: number | null;
}

export class ConnectionQuotasDto {
  @ApiProperty({ type: 'integer', nullable: true, description: 'Requests per minute, per deployment; null: unbounded' }) rpm!: number | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Tokens per minute, per deployment; null: unbounded' }) tpm!: number | null;
  @ApiProperty({ type: 'integer', nullable: true, description: 'Calls at once, per deployment; null: unbounded' }) maxConcurrent!: number | null;
}

/** A connection without its secrets: no key, and only the names of its extra headers. */
export class ConnectionReportDto implements ConnectionReport {
  @ApiProperty({ example: 'azure-eastus' }) name!: string;
  @ApiProperty({ description: 'The wire format: openai, azure-openai, anthropic, google, deepgram, stability, ...', example: 'azure-openai' }) kind!: string;
  @ApiProperty({ example: 'https://eastus-prod.openai.azure.com' }) baseUrl!: string;
  @ApiProperty({ enum: ['environment', 'file'], description: '`environment`: a built-in provider configured by its variables; `file`: PROVIDERS_FILE' })
  origin!: ConnectionReport['origin'];
  @ApiProperty({ type: [String], description: 'Names of the extra request headers (never their values, which may be secrets)', example: ['x-team'] }) headers!: string[];
  @ApiProperty({ type: ConnectionQuotasDto }) quotas!: ConnectionQuotasDto;
  @ApiProperty({ type: 'integer', nullable: true, description: 'How long one upstream call waits for its answer; null: the default (UPSTREAM_TIMEOUT_MS or the model\'s)' })
  timeoutSeconds!: number | null;
  @ApiProperty({ type: [DeploymentReportDto] }) deployments!: DeploymentReportDto[];
}

export class ProvidersFileDto {
  @ApiProperty({ example: '/etc/igw/providers.yaml' }) path!: string;
  @ApiProperty({ type: String, nullable: true, description: 'When its current content was taken, ISO 8601; null before a valid read' }) loadedAt!: string | null;
  @ApiProperty({ type: String, nullable: true, description: 'Why the last edit was not taken (the last good set is kept); null when it was' }) error!: string | null;
}

export class ConnectionsReportDto implements ConnectionsReport {
  @ApiProperty({ type: ProvidersFileDto, nullable: true, description: 'PROVIDERS_FILE as last read; null when none is set' }) providersFile!: ProvidersFileDto | null;
  @ApiProperty({ type: [ConnectionReportDto] }) connections!: ConnectionReportDto[];

  /**
   * The report with the contract's fields only: whatever else a gateway's answer carries (a
   * field of a newer version, or anything that should not be there) never reaches the caller.
   */
  static from(report: ConnectionsReport): ConnectionsReportDto {
    const file = report.providersFile;
    return {
      providersFile: file ? { path: file.path, loadedAt: file.loadedAt, error: file.error } : null,
      connections: report.connections.map(connectionOf),
    };
  }
}

function connectionOf(connection: ConnectionReport): ConnectionReportDto {
  const { rpm, tpm, maxConcurrent } = connection.quotas;
  return {
    name: connection.name,
    kind: connection.kind,
    baseUrl: connection.baseUrl,
    origin: connection.origin,
    headers: [...connection.headers],
    quotas: { rpm, tpm, maxConcurrent },
    timeoutSeconds: connection.timeoutSeconds,
    deployments: connection.deployments.map(deploymentOf),
  };
}

function deploymentOf(deployment: DeploymentReport): DeploymentReportDto {
  return {
    deployment: deployment.deployment,
    connection: deployment.connection,
    upstream: deployment.upstream,
    models: [...deployment.models],
    state: deployment.state,
    coolingUntil: deployment.coolingUntil,
    coolingReason: deployment.coolingReason,
    inFlight: deployment.inFlight,
    requestsThisMinute: deployment.requestsThisMinute,
    tokensThisMinute: deployment.tokensThisMinute,
    errorRate: deployment.errorRate,
    latencyMs: deployment.latencyMs,
  };
}

// The DTO is the contract, field for field: this fails to compile when either changes alone
// (each way, so no field is missing on either side).
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
type Holds<T extends true> = T;
export type DtoIsTheContract = Holds<Same<ConnectionsReportDto, ConnectionsReport>>;
