import path from 'node:path';
import { findFreePort } from '@igw/persistence';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call } from './support/http';
import { startDistributedHarness, type DistributedHarness } from './support/distributed-harness';
import { childEnvironment, startHealthyService, type ServiceProcess } from './support/service-process';

const ADMIN_TOKEN = 'observability-admin-token-0123456789';

/** Every line of `name` in Prometheus' text format whose labels include `labels`, summed. */
function total(metrics: string, name: string, labels: Record<string, string>): number {
  const wanted = Object.entries(labels).map(([label, value]) => `${label}="${value}"`);
  return metrics
    .split('\n')
    .filter((line) => line.startsWith(`${name}{`) && wanted.every((pair) => line.includes(pair)))
    .reduce((sum, line) => sum + Number(line.slice(line.lastIndexOf(' ') + 1)), 0);
}

/**
 * Each service started alone (as in a Kubernetes deployment) answers GET /metrics on its own
 * port, with what it alone did: the gateway its requests, billing its ledger, the catalogue and
 * decisions the queues they consume.
 */
describe('observability: /metrics on every service of the distributed deployment', () => {
  let emulator: RunningEmulator;
  let harness: DistributedHarness;
  let decisions: ServiceProcess;
  let decisionsUrl: string;

  beforeAll(async () => {
    emulator = await startEmulator();
    harness = await startDistributedHarness({
      adminToken: ADMIN_TOKEN,
      catalogueFile: path.join(__dirname, 'fixtures/distributed-catalogue.yaml'),
      gateways: 1,
      gatewayEnv: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: `${emulator.url}/v1`, LOG_FORMAT: 'json' },
    });
    const port = await findFreePort();
    decisions = await startHealthyService('apps/decisions/src/main.js', port, childEnvironment({ ...harness.queueEnv, ADMIN_TOKEN, HOST: '127.0.0.1', DECISIONS_PORT: String(port) }));
    decisionsUrl = `http://127.0.0.1:${port}`;
  }, 180_000);

  afterAll(async () => {
    await decisions?.stop();
    await harness?.stop();
    await emulator?.close();
  });

  it('counts each service on its own port', async () => {
    const gateway = harness.gateways[0];
    const key = await harness.paidKey(1_000_000);
    const answer = await call<{ usage: { prompt_tokens: number } }>(`${gateway}/v1/chat/completions`, {
      token: key,
      body: { model: 'openai/gpt-4o-mini', messages: [{ role: 'user', content: 'Hello' }] },
    });
    expect(answer.status).toBe(200);

    const scrape = async (base: string) => {
      const response = await fetch(`${base}/metrics`);
      expect(response.status).toBe(200);
      return response.text();
    };
    const gatewayMetrics = await scrape(gateway);
    expect(total(gatewayMetrics, 'igw_http_requests_total', { service: 'gateway', route: '/v1/chat/completions', status: '200', model: 'openai/gpt-4o-mini', provider: 'openai' })).toBe(1);
    expect(total(gatewayMetrics, 'igw_tokens_total', { model: 'openai/gpt-4o-mini', direction: 'input' })).toBe(answer.body.usage.prompt_tokens);
    // The gateway consumes no queue; billing's ledger is not in its metrics.
    expect(gatewayMetrics).not.toContain('igw_ledger_lag_seconds_count');

    await eventually(async () => /^igw_ledger_lag_seconds_count [1-9]/m.test(await scrape(harness.billing)), 20_000, 200);
    const billingMetrics = await scrape(harness.billing);
    expect(billingMetrics).toMatch(/^igw_ledger_lag_seconds_count 1$/m);
    expect(billingMetrics).toMatch(/^igw_queue_jobs\{queue="usage",state="waiting"\} \d+$/m);
    expect(total(billingMetrics, 'igw_http_requests_total', { service: 'billing', route: '/admin/v1/accounts', method: 'POST', status: '201' })).toBe(1);

    expect(await scrape(harness.catalogue)).toMatch(/^igw_queue_jobs\{queue="catalogue-rpc",state="failed"\} \d+$/m);
    expect(await scrape(decisionsUrl)).toMatch(/^igw_queue_jobs\{queue="decisions",state="waiting"\} \d+$/m);
  }, 60_000);
});
