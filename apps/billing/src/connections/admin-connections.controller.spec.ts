import { Logger, Module, type INestApplication } from '@nestjs/common';
import { ErrorMessages } from '@igw/contracts';
import type { ConnectionsReport } from '@igw/messaging/connections-report';
import { type GatewayUpstreams, MessagingService } from '@igw/messaging';
import { ADMIN_SESSION_VERIFIER, ADMIN_TOKEN, AdminTokenThrottle, startHttpApp } from '@igw/http';
import { CONSOLE_SESSION_COOKIE, ConsoleSessions } from '../console/console-sessions';
import { AdminConnectionsController, GATEWAY_WITHOUT_CONNECTIONS, NO_GATEWAY_ANSWERED } from './admin-connections.controller';
import { FakeRelay } from './fake-relay.testing';
import { GatewayUpstreamsAsk } from './gateway-upstreams';

const TOKEN = 'admin-token-of-sixteen-chars-or-more';

/** An estate with a bit of everything: a file, a refused edit, headers, quotas, a cooling deployment. */
const REPORT: ConnectionsReport = {
  providersFile: { path: '/etc/igw/providers.yaml', loadedAt: '2026-12-02T10:00:00.000Z', error: 'connections[1] (azure-westus): apiKey: ${AZURE_WESTUS_KEY} is not set' },
  connections: [
    {
      name: 'azure-eastus',
      kind: 'azure-openai',
      baseUrl: 'https://eastus-prod.openai.azure.com',
      origin: 'file',
      headers: ['x-team'],
      quotas: { rpm: 1200, tpm: 450_000, maxConcurrent: 64 },
      timeoutSeconds: 90,
      deployments: [
        {
          deployment: 'azure-eastus/gpt-4o-prod',
          connection: 'azure-eastus',
          upstream: 'gpt-4o-prod',
          models: ['openai/gpt-4o'],
          state: 'cooling',
          coolingUntil: '2026-12-02T10:00:30.000Z',
          coolingReason: 'rate-limited',
          inFlight: 3,
          requestsThisMinute: 1200,
          tokensThisMinute: 120_000,
          errorRate: 0.25,
          latencyMs: 412.5,
        },
      ],
    },
    {
      name: 'openai',
      kind: 'openai',
      baseUrl: 'https://api.openai.com/v1',
      origin: 'environment',
      headers: [],
      quotas: { rpm: null, tpm: null, maxConcurrent: null },
      timeoutSeconds: null,
      deployments: [
        {
          deployment: 'openai/gpt-4o-mini',
          connection: 'openai',
          upstream: 'gpt-4o-mini',
          models: ['openai/gpt-4o-mini'],
          state: 'serving',
          coolingUntil: null,
          coolingReason: null,
          inFlight: 0,
          requestsThisMinute: 0,
          tokensThisMinute: 0,
          errorRate: null,
          latencyMs: null,
        },
      ],
    },
  ],
};

const SECRET = 'sk-live-never-in-an-admin-answer';

/** The same report with what a gateway must never send, and billing never passes on if one did. */
function withSecrets(report: ConnectionsReport): unknown {
  return {
    ...report,
    apiKeys: [SECRET],
    providersFile: { ...report.providersFile, content: `apiKey: ${SECRET}` },
    connections: report.connections.map((connection) => ({
      ...connection,
      apiKey: SECRET,
      headerValues: { 'x-team': SECRET },
      quotas: { ...connection.quotas, secretQuota: SECRET },
      deployments: connection.deployments.map((deployment) => ({ ...deployment, lastRequestHeaders: { authorization: `Bearer ${SECRET}` } })),
    })),
  };
}

interface Answer {
  status: number;
  body: Record<string, unknown>;
  text: string;
}

describe('GET /admin/v1/connections', () => {
  let app: INestApplication;
  let base: string;
  let relay: FakeRelay;
  /** What the one fake gateway answers each ask with; undefined: it does not answer. */
  let gatewayAnswer: Record<string, unknown> | undefined;

  beforeAll(async () => {
    relay = new FakeRelay();
    void relay.subscribe('gateway.upstreams.asked', ({ askId }) => {
      if (gatewayAnswer) void relay.publish('gateway.upstreams.answered', { askId, ...gatewayAnswer } as GatewayUpstreams & { askId: string });
    });
    class TestModule {}
    Module({
      controllers: [AdminConnectionsController],
      providers: [
        { provide: MessagingService, useValue: relay },
        GatewayUpstreamsAsk,
        { provide: ADMIN_TOKEN, useValue: TOKEN },
        { provide: AdminTokenThrottle, useValue: new AdminTokenThrottle() },
        ConsoleSessions,
        { provide: ADMIN_SESSION_VERIFIER, useExisting: ConsoleSessions },
      ],
    })(TestModule);
    app = await startHttpApp(TestModule, {
      name: 'billing',
      host: '127.0.0.1',
      port: 0,
      portVariable: 'BILLING_PORT',
      bodyLimit: '1mb',
      logLevel: 'error',
      swagger: { title: 'billing', description: 'test' },
    });
    base = await app.getUrl();
  });

  afterAll(async () => {
    await app.close();
  });

  beforeEach(() => {
    gatewayAnswer = { revision: 1, providers: ['openai'], answerable: [], connections: REPORT };
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
  });
  afterEach(() => jest.restoreAllMocks());

  const get = async (headers: Record<string, string>): Promise<Answer> => {
    const response = await fetch(`${base}/admin/v1/connections`, { headers });
    const text = await response.text();
    return { status: response.status, body: JSON.parse(text) as Record<string, unknown>, text };
  };
  const asAdmin = () => get({ authorization: `Bearer ${TOKEN}` });

  it("answers the first gateway's report to the admin token and to a console session, to nobody else", async () => {
    expect(await asAdmin()).toMatchObject({ status: 200, body: REPORT });
    const session = app.get(ConsoleSessions).issue();
    expect(await get({ cookie: `${CONSOLE_SESSION_COOKIE}=${session}` })).toMatchObject({ status: 200, body: REPORT });
    for (const headers of [{}, { authorization: 'Bearer wrong-token-wrong-token' }, { cookie: `${CONSOLE_SESSION_COOKIE}=forged.session` }] as Array<Record<string, string>>) {
      const refused = await get(headers);
      expect([refused.status, refused.body.message, refused.body.path]).toEqual([401, ErrorMessages.invalidAdminToken, '/admin/v1/connections']);
    }
  });

  it("passes on the contract's fields only: nothing else a gateway's answer carries reaches the caller", async () => {
    gatewayAnswer = { revision: 1, providers: ['openai'], answerable: [], connections: withSecrets(REPORT), adminToken: SECRET };
    const answer = await asAdmin();
    expect(answer.status).toBe(200);
    expect(answer.body).toStrictEqual(JSON.parse(JSON.stringify(REPORT)));
    expect(answer.text).not.toContain(SECRET);
  });

  it('answers an estate without a providers file or any connection as it is', async () => {
    gatewayAnswer = { revision: null, providers: [], answerable: [], connections: { providersFile: null, connections: [] } };
    expect(await asAdmin()).toMatchObject({ status: 200, body: { providersFile: null, connections: [] } });
  });

  it("answers 503 in the error body, naming that no gateway answered, once the ask's 3 s are over", async () => {
    gatewayAnswer = undefined;
    const started = Date.now();
    const answer = await asAdmin();
    const waited = Date.now() - started;
    expect(answer.body).toMatchObject({ statusCode: 503, message: NO_GATEWAY_ANSWERED, path: '/admin/v1/connections', error: { message: NO_GATEWAY_ANSWERED } });
    expect(answer.status).toBe(503);
    expect(NO_GATEWAY_ANSWERED).toMatch(/^Service Unavailable: no gateway answered within 3 s/);
    expect(waited).toBeGreaterThanOrEqual(2_900);
    expect(waited).toBeLessThan(4_500);
  }, 10_000);

  it('answers 503 when the relay cannot carry the question, without waiting', async () => {
    relay.failPublish = new Error('Connection is closed.');
    try {
      const started = Date.now();
      expect(await asAdmin()).toMatchObject({ status: 503, body: { message: NO_GATEWAY_ANSWERED } });
      expect(Date.now() - started).toBeLessThan(1_000);
    } finally {
      relay.failPublish = undefined;
    }
  });

  it('answers 503 naming an older gateway that answers without a report', async () => {
    gatewayAnswer = { revision: 1, providers: ['openai'], answerable: [] };
    expect(await asAdmin()).toMatchObject({ status: 503, body: { message: GATEWAY_WITHOUT_CONNECTIONS } });
  });

  describe('in the OpenAPI document', () => {
    type Schema = { $ref?: string; type?: string; nullable?: boolean; enum?: string[]; items?: Schema; properties?: Record<string, Schema>; allOf?: Schema[]; required?: string[] };
    type Document = {
      paths: Record<string, Record<string, { security?: unknown[]; responses: Record<string, { content?: Record<string, { schema?: Schema; examples?: Record<string, { value: { message: string } }> }> }> }>>;
      components: { schemas: Record<string, Schema> };
    };
    let document: Document;
    beforeAll(async () => {
      document = (await (await fetch(`${base}/docs-json`)).json()) as Document;
    });
    const resolve = (schema: Schema): Schema => {
      const ref = schema.$ref ?? schema.allOf?.[0]?.$ref;
      return ref ? document.components.schemas[ref.split('/').pop()!] : schema;
    };
    /** Every field of the value (a real report) is in the schema, every field of the schema in the value, all the way down. */
    const fieldsOf = (schema: Schema, value: unknown, at: string): string[] => {
      const resolved = resolve(schema);
      if (Array.isArray(value)) return value.flatMap((item, index) => fieldsOf(resolved.items!, item, `${at}[${index}]`));
      if (value === null || typeof value !== 'object') return [];
      const properties = resolved.properties ?? {};
      expect([at, Object.keys(properties).sort()]).toEqual([at, Object.keys(value).sort()]);
      expect([at, [...(resolved.required ?? [])].sort()]).toEqual([at, Object.keys(value).sort()]);
      return Object.entries(value).flatMap(([name, field]) => [`${at}.${name}`, ...fieldsOf(properties[name], field, `${at}.${name}`)]);
    };

    it('documents the answer with the DTOs, field for field as the contract has them', () => {
      const operation = document.paths['/admin/v1/connections'].get;
      const ok = operation.responses['200'].content!['application/json'].schema!;
      expect(ok.$ref).toBe('#/components/schemas/ConnectionsReportDto');
      const documented = fieldsOf(ok, REPORT, 'report');
      expect(documented).toEqual(expect.arrayContaining(['report.connections[0].quotas.maxConcurrent', 'report.connections[0].deployments[0].coolingReason', 'report.providersFile.error']));
      const deployment = document.components.schemas.DeploymentReportDto.properties!;
      expect(deployment.state.enum).toEqual(['serving', 'cooling', 'over-quota']);
      expect(deployment.coolingReason).toMatchObject({ enum: ['rate-limited', 'failing', 'refused'], nullable: true });
      expect(document.components.schemas.ConnectionReportDto.properties!.origin.enum).toEqual(['environment', 'file']);
    });

    it("documents the admin token's 401 and both 503s with their real messages", () => {
      const operation = document.paths['/admin/v1/connections'].get;
      expect(operation.security).toEqual([{ admin: [] }]);
      const messages = (status: string) => Object.values(operation.responses[status].content!['application/json'].examples ?? {}).map((example) => example.value.message);
      expect(messages('503').sort()).toEqual([GATEWAY_WITHOUT_CONNECTIONS, NO_GATEWAY_ANSWERED].sort());
      expect(JSON.stringify(operation.responses['401'])).toContain(JSON.stringify(ErrorMessages.invalidAdminToken));
    });
  });
});
