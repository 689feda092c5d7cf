import { api, type Connection, type Connections, type Deployment } from './api';
import { ErrorNote, formatNumber, formatTime, Section, usePolled } from './ui';

const REFRESH_MS = 5_000;

const REASONS: Record<NonNullable<Deployment['coolingReason']>, string> = {
  'rate-limited': 'rate limited by the upstream',
  failing: 'failing (errors or timeouts)',
  refused: 'key refused by the upstream',
};

const STATE_BADGES: Record<Deployment['state'], string> = { serving: 'active', cooling: 'suspended', 'over-quota': 'warning' };

/**
 * The upstream estate as a gateway reports it (GET /admin/v1/connections): each connection, and
 * each deployment's state shared by every replica. The report holds no secret: the page shows
 * what it gives, header names included, and nothing else.
 */
export function ConnectionsPage() {
  const report = usePolled(() => api<Connections>('GET', 'admin/v1/connections'), REFRESH_MS);
  const data = report.data;
  return (
    <>
      <Section
        title="Connections"
        actions={
          report.receivedAt && (
            <span class="muted small" data-testid="connections-refreshed">
              As of {formatTime(report.receivedAt.toISOString())}, refreshed every {REFRESH_MS / 1000} s
            </span>
          )
        }
      >
        <ErrorNote error={report.error} />
        {!data && !report.error && <p class="muted">Asking a gateway…</p>}
        {data && <ProvidersFile file={data.providersFile} />}
        {data && data.connections.length === 0 && (
          <p class="muted" data-testid="no-connections">
            The gateway that answered has no connection: set a provider's key (OPENAI_API_KEY, …) or PROVIDERS_FILE.
          </p>
        )}
      </Section>
      {data?.connections.map((connection) => <ConnectionCard key={connection.name} connection={connection} />)}
    </>
  );
}

function ProvidersFile({ file }: { file: Connections['providersFile'] }) {
  if (!file) {
    return (
      <p class="muted small" data-testid="providers-file" data-state="none">
        No PROVIDERS_FILE: the connections are the built-in providers set by their environment variables.
      </p>
    );
  }
  return (
    <div data-testid="providers-file" data-state={file.error ? 'error' : 'loaded'}>
      <p class="small">
        Providers file <span class="mono">{file.path}</span>, {file.loadedAt ? `loaded ${formatTime(file.loadedAt)}` : 'not loaded yet'}.
      </p>
      {file.error && (
        <p class="error" role="alert" data-testid="providers-file-error">
          Its last edit was not taken (the last good set stays in use): {file.error}
        </p>
      )}
    </div>
  );
}

const bound = (value: number | null, unit: string): string => (value === null ? `no ${unit} limit` : `${formatNumber(value)} ${unit}`);

function ConnectionCard({ connection }: { connection: Connection }) {
  const { quotas } = connection;
  return (
    <section class="card" data-testid="connection" data-connection={connection.name}>
      <header class="card-head">
        <h2>
          {connection.name} <span class="badge">{connection.kind}</span>
        </h2>
        <span class="muted small">{connection.origin === 'file' ? 'from the providers file' : 'from the environment'}</span>
      </header>
      <dl class="facts compact">
        <div>
          <dt>Base URL</dt>
          <dd class="mono" data-testid="connection-base-url">
            {connection.baseUrl}
          </dd>
        </div>
        <div>
          <dt>Extra headers</dt>
          <dd class={connection.headers.length ? 'mono' : 'muted'} data-testid="connection-headers">
            {connection.headers.length ? connection.headers.join(', ') : 'none'}
          </dd>
        </div>
        <div>
          <dt>Quotas per deployment</dt>
          <dd data-testid="connection-quotas">
            {bound(quotas.rpm, 'rpm')} · {bound(quotas.tpm, 'tpm')} · {quotas.maxConcurrent === null ? 'no concurrency limit' : `${formatNumber(quotas.maxConcurrent)} at once`}
          </dd>
        </div>
        <div>
          <dt>Timeout</dt>
          <dd data-testid="connection-timeout">{connection.timeoutSeconds === null ? 'default' : `${formatNumber(connection.timeoutSeconds)} s`}</dd>
        </div>
      </dl>
      <table class="table deployments" data-testid="deployments-table">
        <thead>
          <tr>
            <th>Deployment</th>
            <th>Models</th>
            <th>State</th>
            <th class="num">In flight</th>
            <th class="num">Requests this minute</th>
            <th class="num">Tokens this minute</th>
            <th class="num">Error rate</th>
            <th class="num">Latency</th>
          </tr>
        </thead>
        <tbody>
          {connection.deployments.map((deployment) => (
            <DeploymentRow key={deployment.deployment} deployment={deployment} connection={connection} />
          ))}
          {connection.deployments.length === 0 && (
            <tr>
              <td colSpan={8} class="muted">
                No catalogue model has a source on this connection.
              </td>
            </tr>
          )}
        </tbody>
      </table>
    </section>
  );
}

function DeploymentRow({ deployment, connection }: { deployment: Deployment; connection: Connection }) {
  const { quotas } = connection;
  return (
    <tr data-deployment={deployment.deployment} data-state={deployment.state}>
      <td>
        <div>{deployment.upstream}</div>
        <div class="mono small muted">{deployment.deployment}</div>
      </td>
      <td class="small">{deployment.models.join(', ')}</td>
      <td data-testid="deployment-state">
        <span class={`badge ${STATE_BADGES[deployment.state]}`}>{deployment.state}</span>
        {deployment.coolingUntil && <div class="small muted">until {formatTime(deployment.coolingUntil)}</div>}
        {deployment.coolingReason && <div class="small muted">{REASONS[deployment.coolingReason]}</div>}
      </td>
      <Used testId="deployment-in-flight" used={deployment.inFlight} quota={quotas.maxConcurrent} />
      <Used testId="deployment-requests" used={deployment.requestsThisMinute} quota={quotas.rpm} />
      <Used testId="deployment-tokens" used={deployment.tokensThisMinute} quota={quotas.tpm} />
      <td class="num" data-testid="deployment-error-rate">
        {deployment.errorRate === null ? <span class="muted">–</span> : `${formatNumber(Math.round(deployment.errorRate * 1000) / 10)} %`}
      </td>
      <td class="num" data-testid="deployment-latency">
        {deployment.latencyMs === null ? <span class="muted">–</span> : `${formatNumber(Math.round(deployment.latencyMs))} ms`}
      </td>
    </tr>
  );
}

/** A count against its quota ("12 / 1,200"), marked once the quota is reached. */
function Used({ used, quota, testId }: { used: number; quota: number | null; testId: string }) {
  const reached = quota !== null && used >= quota;
  return (
    <td class={`num${reached ? ' over' : ''}`} data-testid={testId} data-used={used} title={quota === null ? 'no limit' : `${Math.round((used / quota) * 100)} % of ${formatNumber(quota)}`}>
      {formatNumber(used)}
      {quota !== null && <span class="muted"> / {formatNumber(quota)}</span>}
    </td>
  );
}
