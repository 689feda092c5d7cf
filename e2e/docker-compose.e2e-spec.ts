/**
 * @backend-independent Reads docker-compose.yml; starts nothing.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse } from 'yaml';
import { trustedRanges } from '@igw/config';
import { PROVIDERS } from '@igw/providers';
import { interpolate, loadCompose, ROOT } from './support/deploy-manifests';

const PROVIDER_VARIABLES = PROVIDERS.flatMap((provider) => [provider.variables.apiKey, provider.variables.baseUrl]);
const HOST_ENVIRONMENT = { ADMIN_TOKEN: 'admin-token-0123456789', REDIS_PASSWORD: 'redispassword0', POSTGRES_PASSWORD: 'postgrespassword0' };
const OUR_SERVICES = ['migrate', 'billing', 'catalogue', 'decisions', 'gateway-1', 'gateway-2'];
const PROVIDERS_MOUNT = './deploy/compose/providers:/etc/igw:ro';

/** Whether an IPv4 address lies in a CIDR range. */
function inRange(address: string, cidr: string): boolean {
  const toNumber = (dotted: string) => dotted.split('.').reduce((value, part) => value * 256 + Number(part), 0);
  const [base, bits] = cidr.split('/');
  const size = 2 ** (32 - Number(bits));
  return Math.floor(toNumber(address) / size) === Math.floor(toNumber(base) / size);
}

/** Compose's short port syntax: [host_ip:]host_port:container_port, after interpolation. */
function publishedPorts(service: { ports?: string[] }, environment: Record<string, string | undefined>): { hostIp: string; hostPort: string; containerPort: string }[] {
  return (service.ports ?? []).map((entry) => {
    const parts = interpolate(entry, environment).split(':');
    const [hostIp, hostPort, containerPort] = parts.length === 3 ? parts : ['0.0.0.0', ...parts];
    return { hostIp, hostPort, containerPort };
  });
}

describe('docker-compose.yml', () => {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  const compose = loadCompose() as { services: Record<string, any>; volumes: Record<string, unknown>; networks: Record<string, any> };
  const { services } = compose;

  it('runs PostgreSQL, Redis, the migrations, the four services with two gateway replicas, and one proxy in front', () => {
    expect(Object.keys(services).sort()).toEqual(['billing', 'catalogue', 'decisions', 'gateway-1', 'gateway-2', 'migrate', 'postgres', 'proxy', 'redis']);
    expect(services['gateway-1'].command).toEqual(['node', 'dist/apps/gateway/src/main.js']);
    expect(services['gateway-2'].command).toEqual(services['gateway-1'].command);
    // Billing and the catalogue start on a migrated schema.
    for (const name of ['billing', 'catalogue']) expect(services[name].depends_on.migrate).toEqual({ condition: 'service_completed_successfully' });
    expect(services.migrate.restart).toBe('no');
    expect(services.migrate.depends_on.postgres).toEqual({ condition: 'service_healthy' });
  });

  it('passes every provider variable through to the gateways and decisions', () => {
    for (const name of ['gateway-1', 'gateway-2', 'decisions']) {
      for (const variable of PROVIDER_VARIABLES) {
        expect({ service: name, variable, value: services[name].environment[variable] }).toEqual({ service: name, variable, value: `\${${variable}:-}` });
      }
      expect(interpolate(services[name].environment.OPENAI_API_KEY, { ...HOST_ENVIRONMENT, OPENAI_API_KEY: 'sk-host' })).toBe('sk-host');
    }
    expect(PROVIDER_VARIABLES.length).toBeGreaterThanOrEqual(30);
  });

  it('publishes only the proxy, on 127.0.0.1 unless PUBLISH_ADDRESS says otherwise', () => {
    for (const [name, service] of Object.entries(services)) {
      if (name !== 'proxy') expect({ name, ports: service.ports, expose: service.expose }).toEqual({ name, ports: undefined, expose: undefined });
    }
    expect(publishedPorts(services.proxy, HOST_ENVIRONMENT)).toEqual([
      { hostIp: '127.0.0.1', hostPort: '8080', containerPort: '8080' },
      { hostIp: '127.0.0.1', hostPort: '8081', containerPort: '8081' },
    ]);
    expect(publishedPorts(services.proxy, { ...HOST_ENVIRONMENT, PUBLISH_ADDRESS: '0.0.0.0' }).map((port) => port.hostIp)).toEqual(['0.0.0.0', '0.0.0.0']);
  });

  it("routes :8080 to both gateways' API, documentation and root (GET and HEAD of exactly /) and :8081 to billing's /v1/billing/ only: the admin API, /metrics and /readyz are not published", () => {
    const config = readFileSync(path.join(ROOT, 'deploy/compose/haproxy.cfg'), 'utf8');
    expect(services.proxy.volumes).toEqual(['./deploy/compose/haproxy.cfg:/usr/local/etc/haproxy/haproxy.cfg:ro']);
    const section = (header: string) => {
      const start = config.indexOf(`\n${header}\n`);
      expect(start).toBeGreaterThan(-1);
      const rest = config.slice(start + header.length + 2);
      return rest.slice(0, rest.search(/\n\S/) + 1 || undefined);
    };
    const lines = (text: string) => text.split('\n').map((line) => line.trim()).filter((line) => line && !line.startsWith('#'));
    const gateway = lines(section('frontend gateway_public'));
    expect(gateway).toEqual([
      'bind :8080',
      'acl gateway_public_route path_beg /v1/ /docs',
      // Exactly the root, to read: `path` matches the whole path, no prefix.
      'acl gateway_root path /',
      'acl read_method method GET HEAD',
      expect.stringMatching(/^http-request return status 404 .* unless gateway_public_route \|\| gateway_root read_method$/),
      'default_backend gateway',
    ]);
    // The API and its documentation only: /metrics, /readyz and /healthz are the operator's.
    const publicPrefixes = gateway[1].split(' ').slice(3);
    for (const operatorPath of ['/metrics', '/readyz', '/healthz', '/admin/v1/accounts']) expect(publicPrefixes.some((prefix) => operatorPath.startsWith(prefix))).toBe(false);
    expect(lines(section('backend gateway')).filter((line) => line.startsWith('server '))).toEqual(['server gateway-1 gateway-1:8080', 'server gateway-2 gateway-2:8080']);
    const billing = lines(section('frontend billing_public'));
    expect(billing).toEqual([
      'bind :8081',
      'acl billing_public_route path_beg /v1/billing/',
      expect.stringMatching(/^http-request return status 404 .* unless billing_public_route$/),
      'default_backend billing',
    ]);
    expect(lines(section('backend billing')).filter((line) => line.startsWith('server '))).toEqual(['server billing billing:8081']);
    // Nothing routes to the catalogue's admin API or to decisions.
    expect(lines(config).join('\n')).not.toMatch(/catalogue|decisions|admin/);
  });

  it('takes the database and Redis passwords from the environment, required, and puts them in every URL', () => {
    expect(() => interpolate(services.postgres.environment.POSTGRES_PASSWORD, { ...HOST_ENVIRONMENT, POSTGRES_PASSWORD: undefined })).toThrow(/set POSTGRES_PASSWORD/);
    expect(() => interpolate(services.redis.environment.REDIS_PASSWORD, { ...HOST_ENVIRONMENT, REDIS_PASSWORD: '' })).toThrow(/set REDIS_PASSWORD/);
    expect(interpolate(services.postgres.environment.POSTGRES_PASSWORD, HOST_ENVIRONMENT)).toBe('postgrespassword0');
    expect(interpolate(services.redis.command.join(' '), HOST_ENVIRONMENT)).toContain('--requirepass "$REDIS_PASSWORD"');
    for (const name of ['billing', 'catalogue', 'decisions', 'gateway-1', 'gateway-2']) {
      expect(interpolate(services[name].environment.REDIS_URL, HOST_ENVIRONMENT)).toBe('redis://:redispassword0@redis:6379');
    }
    for (const name of ['migrate', 'billing', 'catalogue']) {
      expect(interpolate(services[name].environment.DATABASE_URL, HOST_ENVIRONMENT)).toBe('postgres://gateway:postgrespassword0@postgres:5432/gateway');
    }
    expect(services.postgres.ports).toBeUndefined();
    expect(services.redis.ports).toBeUndefined();
  });

  it('gives ADMIN_TOKEN, required, to billing and the catalogue only: never to the gateways or decisions', () => {
    for (const name of ['billing', 'catalogue']) {
      expect(() => interpolate(services[name].environment.ADMIN_TOKEN, { ...HOST_ENVIRONMENT, ADMIN_TOKEN: undefined })).toThrow(/set ADMIN_TOKEN/);
      expect(interpolate(services[name].environment.ADMIN_TOKEN, HOST_ENVIRONMENT)).toBe('admin-token-0123456789');
    }
    for (const name of ['decisions', 'gateway-1', 'gateway-2', 'migrate', 'proxy']) {
      expect({ name, environment: Object.keys(services[name].environment ?? {}).filter((variable) => variable.includes('ADMIN')) }).toEqual({ name, environment: [] });
    }
  });

  it("trusts the proxy's own address for X-Forwarded-For, a fixed one outside the range Docker hands out", () => {
    const [network] = compose.networks.default.ipam.config as Array<{ subnet: string; ip_range: string }>;
    const proxyAddress = services.proxy.networks.default.ipv4_address as string;
    expect(proxyAddress).toMatch(/^\d+\.\d+\.\d+\.\d+$/);
    expect(inRange(proxyAddress, network.subnet)).toBe(true);
    expect(inRange(proxyAddress, network.ip_range)).toBe(false);
    const anotherContainer = network.ip_range.split('/')[0];
    for (const name of ['gateway-1', 'gateway-2']) {
      const setting = interpolate(String(services[name].environment.TRUSTED_PROXIES), HOST_ENVIRONMENT);
      expect(setting).toBe(proxyAddress);
      // As the gateway reads it: the proxy is believed, any other container of the network is not.
      const trusted = trustedRanges(setting)!;
      expect(trusted(proxyAddress)).toBe(true);
      expect(trusted(anotherContainer)).toBe(false);
    }
  });

  it('runs our containers like the chart: read-only root, /tmp in memory, no capabilities, one journal volume per gateway', () => {
    for (const name of OUR_SERVICES) {
      expect({ name, read_only: services[name].read_only, tmpfs: services[name].tmpfs, cap_drop: services[name].cap_drop }).toEqual({ name, read_only: true, tmpfs: ['/tmp:size=64m'], cap_drop: ['ALL'] });
    }
    expect(services['gateway-1'].volumes).toEqual(['gateway-1-data:/app/.data', PROVIDERS_MOUNT]);
    expect(services['gateway-2'].volumes).toEqual(['gateway-2-data:/app/.data', PROVIDERS_MOUNT]);
    expect(Object.keys(compose.volumes)).toEqual(expect.arrayContaining(['gateway-1-data', 'gateway-2-data']));
  });

  it('gives both gateways the shipped providers file as PROVIDERS_FILE, its directory mounted read-only so that an edit reaches them', () => {
    const [source, target, mode] = PROVIDERS_MOUNT.split(':');
    for (const name of ['gateway-1', 'gateway-2']) {
      expect(services[name].volumes).toContain(PROVIDERS_MOUNT);
      expect(services[name].environment.PROVIDERS_FILE).toBe(`${target}/providers.yaml`);
    }
    expect(mode).toBe('ro');
    for (const name of ['billing', 'catalogue', 'decisions', 'migrate']) expect({ name, file: services[name].environment.PROVIDERS_FILE }).toEqual({ name, file: undefined });
    // A valid file with no connection: the provider variables stay the connections.
    const shipped = readFileSync(path.join(ROOT, source, 'providers.yaml'), 'utf8');
    expect(parse(shipped)).toEqual({ connections: [] });
    // Its commented example, uncommented as it says, is a list of connections with the documented fields only.
    const example = shipped.split('\n').slice(shipped.split('\n').indexOf('# connections:')).map((line) => line.replace(/^# ?/, '')).join('\n');
    const { connections } = parse(example) as { connections: Record<string, unknown>[] };
    expect(connections.map((connection) => connection.name)).toEqual(['azure-eastus', 'azure-westus', 'vllm-pool']);
    const fields = ['name', 'kind', 'baseUrl', 'apiKey', 'apiKeyFile', 'headers', 'rpm', 'tpm', 'maxConcurrent', 'timeoutSeconds', 'keyless'];
    for (const connection of connections) {
      expect(Object.keys(connection).filter((field) => !fields.includes(field))).toEqual([]);
      // Keys come from the environment, never the file.
      if (connection.apiKey !== undefined) expect(connection.apiKey).toMatch(/^\$\{[A-Z0-9_]+\}$/);
    }
  });
});
