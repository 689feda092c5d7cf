import path from 'node:path';
import type { ConnectionsReport } from '@igw/messaging/connections-report';
import { call } from './support/http';
import { startDistributedHarness, type DistributedHarness } from './support/distributed-harness';

const ADMIN_TOKEN = 'console-distributed-admin-token';

interface ErrorBody {
  statusCode: number;
  message: string;
  path: string;
}

interface ConsoleCatalogue {
  gateway: { providers: string[] } | null;
  models: Array<{ id: string; configured: boolean | null; providers: string[] }>;
}

/**
 * Billing started alone (as docker-compose runs it) serves the console, and its catalogue page
 * and connections report learn which models can answer and what they are routed to from a
 * gateway process over the queue: billing itself has no provider key.
 */
describe('Admin console on a billing service of its own', () => {
  let harness: DistributedHarness;

  beforeAll(async () => {
    harness = await startDistributedHarness({
      adminToken: ADMIN_TOKEN,
      catalogueFile: path.join(__dirname, 'fixtures/distributed-catalogue.yaml'),
      gateways: 1,
      // An address only: nothing is called, the key makes openai configured on this gateway.
      gatewayEnv: { OPENAI_API_KEY: 'k', OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' },
    });
  }, 180_000);

  afterAll(async () => {
    await harness?.stop();
  });

  it('serves the bundle and reports "configured" and the connections as the gateway sees them, "unknown" and a 503 without a gateway', async () => {
    expect((await fetch(`${harness.billing}/console/`)).status).toBe(200);
    expect((await fetch(`${harness.billing}/console/assets/app.js`)).status).toBe(200);
    const login = await fetch(`${harness.billing}/console/api/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-igw-console': '1' },
      body: JSON.stringify({ token: ADMIN_TOKEN }),
    });
    expect(login.status).toBe(204);
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!;

    const read = async () => {
      const answer = await call<ConsoleCatalogue>(`${harness.billing}/console/api/catalogue`, { headers: { cookie } });
      expect(answer.status).toBe(200);
      return answer.body;
    };
    const withGateway = await read();
    expect(withGateway.gateway?.providers).toEqual(['openai']);
    const configured = Object.fromEntries(withGateway.models.map((model) => [model.id, model.configured]));
    expect(configured['openai/gpt-4o-mini']).toBe(true);
    expect(configured['test/unconfigured']).toBe(false);
    const available = (await call<{ data: Array<{ id: string }> }>(`${harness.gateways[0]}/v1/models?available=true`)).body.data.map((model) => model.id).sort();
    expect(withGateway.models.filter((model) => model.configured).map((model) => model.id).sort()).toEqual(available);

    // The connections page's report comes from the gateway too, over the same broadcast.
    const connections = await call<ConnectionsReport>(`${harness.billing}/admin/v1/connections`, { headers: { cookie } });
    expect(connections.status).toBe(200);
    const openai = connections.body.connections.find((connection) => connection.name === 'openai');
    expect(openai).toMatchObject({ kind: 'openai', origin: 'environment', baseUrl: 'http://127.0.0.1:9/v1', headers: [] });
    expect(openai!.deployments.map((deployment) => deployment.deployment)).toContain('openai/gpt-4o-mini');
    expect(connections.body.connections.map((connection) => connection.name)).not.toContain('groq');
    expect(connections.body.providersFile).toBeNull();

    await harness.process('gateway-0').stop();
    const withoutGateway = await read();
    expect(withoutGateway.gateway).toBeNull();
    expect(withoutGateway.models.length).toBe(withGateway.models.length);
    expect(withoutGateway.models.every((model) => model.configured === null)).toBe(true);
    const unanswered = await call<ErrorBody>(`${harness.billing}/admin/v1/connections`, { token: ADMIN_TOKEN });
    expect(unanswered.status).toBe(503);
    expect(unanswered.body).toMatchObject({ statusCode: 503, path: '/admin/v1/connections' });
    expect(unanswered.body.message).toMatch(/^Service Unavailable: no gateway answered within 3 s/);
  }, 60_000);
});
