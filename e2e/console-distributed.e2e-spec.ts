import path from 'node:path';
import { call } from './support/http';
import { startDistributedHarness, type DistributedHarness } from './support/distributed-harness';

const ADMIN_TOKEN = 'console-distributed-admin-token';

interface ConsoleCatalogue {
  gateway: { providers: string[] } | null;
  models: Array<{ id: string; configured: boolean | null; providers: string[] }>;
}

/**
 * Billing started alone (as docker-compose runs it) serves the console, and its catalogue page
 * learns which models can answer from a gateway process over the queue: billing itself has no
 * provider key.
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

  it('serves the bundle and reports "configured" as the gateway sees it, and "unknown" without a gateway', async () => {
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

    await harness.process('gateway-0').stop();
    const withoutGateway = await read();
    expect(withoutGateway.gateway).toBeNull();
    expect(withoutGateway.models.length).toBe(withGateway.models.length);
    expect(withoutGateway.models.every((model) => model.configured === null)).toBe(true);
  }, 60_000);
});
