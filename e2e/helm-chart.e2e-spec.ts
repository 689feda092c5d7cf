/**
 * @backend-independent Renders the Helm chart and checks the objects; starts nothing.
 */
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parse } from 'yaml';
import { PROVIDERS } from '@igw/providers';
import { CHART_DIR, findHelm, loadCompose, renderChart, ROOT, schemaErrors, unknownFieldErrors, type Manifest } from './support/deploy-manifests';

const HELM = findHelm();
const SKIPPED = 'SKIPPED: no helm found; run .ci/install-helm as .ci/run does, or set HELM_PATH';
// CI installs helm: there a missing helm is a failure, not a skip.
if (!HELM && process.env.CI) throw new Error('helm is missing on CI: .ci/run installs it with .ci/install-helm');
if (!HELM) process.stderr.write(`Helm chart test ${SKIPPED}\n`);

const PROVIDER_VARIABLES = PROVIDERS.flatMap((provider) => [provider.variables.apiKey, provider.variables.baseUrl]);
const COMPONENTS = ['gateway', 'billing', 'catalogue', 'decisions'] as const;
const PRODUCTION_VALUES = path.join(CHART_DIR, 'ci/ingress-hpa-values.yaml');

const ofKind = (manifests: Manifest[], kind: string) => manifests.filter((manifest) => manifest.kind === kind);
const named = (manifests: Manifest[], kind: string, name: string) => {
  const found = manifests.find((manifest) => manifest.kind === kind && manifest.metadata.name === name);
  if (!found) throw new Error(`no ${kind} ${name} among ${manifests.map((manifest) => `${manifest.kind} ${manifest.metadata.name}`).join(', ')}`);
  return found;
};
const deploymentOf = (manifests: Manifest[], component: string) => named(manifests, 'Deployment', `igw-inference-gateway-${component}`);
/** Pod templates: every Deployment's and the migration Job's. */
const podSpecs = (manifests: Manifest[]) => [...ofKind(manifests, 'Deployment'), ...ofKind(manifests, 'Job')].map((manifest) => ({ owner: manifest.metadata.name, spec: manifest.spec.template.spec }));
// eslint-disable-next-line @typescript-eslint/no-explicit-any
const envNamed = (container: any, name: string) => (container.env ?? []).find((variable: { name: string }) => variable.name === name);

(HELM ? describe : describe.skip)(HELM ? 'Helm chart (deploy/helm/inference-gateway)' : `Helm chart (${SKIPPED})`, () => {
  let defaults: Manifest[];
  let production: Manifest[];

  beforeAll(() => {
    defaults = renderChart(HELM!);
    production = renderChart(HELM!, { valuesFiles: [PRODUCTION_VALUES] });
  });

  it('renders objects valid against the Kubernetes schemas, with no field the API does not know', () => {
    const all = [...defaults, ...production];
    expect(all.flatMap(schemaErrors)).toEqual([]);
    expect(unknownFieldErrors(all)).toEqual([]);
  });

  it('passes helm lint --strict with the default and the production-like values', () => {
    for (const values of [[], ['--values', PRODUCTION_VALUES]]) {
      expect(execFileSync(HELM!, ['lint', '--strict', CHART_DIR, ...values], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] })).toContain('0 chart(s) failed');
    }
  });

  it('the schema check itself refuses a wrong type and an unknown field', () => {
    const deployment = structuredClone(deploymentOf(defaults, 'gateway'));
    deployment.spec.template.spec.containers[0].ports[0].containerPort = 'eighty';
    expect(schemaErrors(deployment).join()).toMatch(/containerPort must be integer/);
    const misspelt = structuredClone(deploymentOf(defaults, 'gateway'));
    misspelt.spec.template.spec.containers[0].readinesProbe = misspelt.spec.template.spec.containers[0].readinessProbe;
    expect(unknownFieldErrors([misspelt]).join()).toMatch(/readinesProbe/);
  });

  it('has one Deployment and one Service per service, the Service selecting its pods on the named port', () => {
    for (const manifests of [defaults, production]) {
      expect(ofKind(manifests, 'Deployment').map((manifest) => manifest.metadata.name).sort()).toEqual(COMPONENTS.map((component) => `igw-inference-gateway-${component}`).sort());
      for (const component of COMPONENTS) {
        const deployment = deploymentOf(manifests, component);
        const service = named(manifests, 'Service', `igw-inference-gateway-${component}`);
        expect(deployment.spec.template.metadata.labels).toMatchObject(service.spec.selector);
        expect(deployment.spec.selector.matchLabels).toEqual(service.spec.selector);
        expect(service.spec.type).toBe('ClusterIP');
        expect(service.spec.ports).toEqual([expect.objectContaining({ name: 'http', targetPort: 'http' })]);
      }
    }
  });

  it('starts each service from a built entry point, as docker-compose.yml does, listening on the port its probes use', () => {
    const compose = loadCompose();
    const settings = named(defaults, 'ConfigMap', 'igw-inference-gateway-config').data;
    const portVariable = { gateway: 'PORT', billing: 'BILLING_PORT', catalogue: 'CATALOGUE_PORT', decisions: 'DECISIONS_PORT' };
    expect(settings.HOST).toBe('0.0.0.0');
    for (const component of COMPONENTS) {
      const container = deploymentOf(defaults, component).spec.template.spec.containers[0];
      const composeService = compose.services[component === 'gateway' ? 'gateway-1' : component];
      expect(container.command).toEqual(composeService.command);
      expect(existsSync(path.join(ROOT, container.command[1]))).toBe(true);
      const port = container.ports.find((candidate: { name: string }) => candidate.name === 'http').containerPort;
      expect(settings[portVariable[component]]).toBe(String(port));
      expect(container.envFrom).toEqual([{ configMapRef: { name: 'igw-inference-gateway-config' } }]);
    }
  });

  it('probes /healthz for liveness and start-up and /readyz for readiness, with requests and limits on every container', () => {
    for (const manifests of [defaults, production]) {
      for (const component of COMPONENTS) {
        const container = deploymentOf(manifests, component).spec.template.spec.containers[0];
        expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
        expect(container.startupProbe.httpGet).toEqual({ path: '/healthz', port: 'http' });
        expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' });
      }
      for (const { spec } of podSpecs(manifests)) {
        for (const container of spec.containers) {
          expect(Object.keys(container.resources.requests).sort()).toEqual(['cpu', 'memory']);
          expect(Object.keys(container.resources.limits).sort()).toEqual(['cpu', 'memory']);
        }
      }
    }
  });

  it('runs every pod as a numeric non-root user on a read-only root filesystem, writing only to its own volumes', () => {
    for (const manifests of [defaults, production]) {
      for (const { owner, spec } of podSpecs(manifests)) {
        expect({ owner, automount: spec.automountServiceAccountToken }).toEqual({ owner, automount: false });
        expect(spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000, runAsGroup: 1000 });
        const volumes = new Map<string, Record<string, unknown>>(spec.volumes.map((volume: { name: string }) => [volume.name, volume]));
        for (const container of spec.containers) {
          expect(container.securityContext).toEqual({
            runAsNonRoot: true,
            runAsUser: 1000,
            runAsGroup: 1000,
            readOnlyRootFilesystem: true,
            allowPrivilegeEscalation: false,
            capabilities: { drop: ['ALL'] },
          });
          const mounts = Object.fromEntries(container.volumeMounts.map((mount: { mountPath: string; name: string }) => [mount.mountPath, volumes.get(mount.name)]));
          expect(mounts['/tmp']).toMatchObject({ emptyDir: expect.any(Object) });
          for (const [mountPath, volume] of Object.entries(mounts)) {
            // Writable paths are emptyDirs; anything else is mounted read-only.
            if (!volume?.emptyDir) expect({ owner, mountPath, readOnly: container.volumeMounts.find((mount: { mountPath: string }) => mount.mountPath === mountPath).readOnly }).toEqual({ owner, mountPath, readOnly: true });
          }
        }
      }
      // The gateway's usage journal (DATA_DIR=.data in the image's /app): one per pod.
      const gateway = deploymentOf(manifests, 'gateway').spec.template.spec;
      const data = gateway.containers[0].volumeMounts.find((mount: { mountPath: string }) => mount.mountPath === '/app/.data');
      expect(gateway.volumes.find((volume: { name: string }) => volume.name === data.name)).toEqual({ name: data.name, emptyDir: { sizeLimit: '2Gi' } });
    }
  });

  it('reads ADMIN_TOKEN (billing and the catalogue only), REDIS_URL, DATABASE_URL and every provider variable from the Secret, never from values', () => {
    const secretOf = (manifests: Manifest[]) => (manifests === production ? 'inference-gateway-env' : 'igw-inference-gateway-secrets');
    for (const manifests of [defaults, production]) {
      const fromSecret = (name: string, optional: boolean) => ({ name, valueFrom: { secretKeyRef: { name: secretOf(manifests), key: name, optional } } });
      for (const component of COMPONENTS) {
        const container = deploymentOf(manifests, component).spec.template.spec.containers[0];
        const ownsTables = component === 'billing' || component === 'catalogue';
        // Only the services that check the admin token hold it: never the gateway or decisions, nor their ConfigMap.
        expect(envNamed(container, 'ADMIN_TOKEN')).toEqual(ownsTables ? fromSecret('ADMIN_TOKEN', false) : undefined);
        expect(envNamed(container, 'REDIS_URL')).toEqual(fromSecret('REDIS_URL', false));
        expect(envNamed(container, 'DATABASE_URL')).toEqual(ownsTables ? fromSecret('DATABASE_URL', false) : undefined);
        const callsUpstreams = component === 'gateway' || component === 'decisions';
        for (const variable of PROVIDER_VARIABLES) expect(envNamed(container, variable)).toEqual(callsUpstreams ? fromSecret(variable, true) : undefined);
      }
      expect(ofKind(manifests, 'Secret')).toEqual([]);
      expect(named(manifests, 'ConfigMap', 'igw-inference-gateway-config').data).not.toHaveProperty('ADMIN_TOKEN');
    }
    expect(PROVIDER_VARIABLES).toEqual(expect.arrayContaining(['OPENAI_API_KEY', 'AZURE_OPENAI_ENDPOINT', 'GEMINI_API_KEY', 'TYPESAFE_BASE_URL']));
  });

  it("runs every pod as the release's ServiceAccount, annotated for IRSA and GKE Workload Identity when the values name a role, with no token mounted", () => {
    for (const manifests of [defaults, production]) {
      const [account] = ofKind(manifests, 'ServiceAccount');
      expect(account.metadata.name).toBe('igw-inference-gateway');
      expect(account.automountServiceAccountToken).toBe(false);
      for (const { spec } of podSpecs(manifests)) {
        expect(spec.serviceAccountName).toBe('igw-inference-gateway');
        expect(spec.automountServiceAccountToken).toBe(false);
      }
    }
    expect(ofKind(defaults, 'ServiceAccount')[0].metadata.annotations).toBeUndefined();
    expect(ofKind(production, 'ServiceAccount')[0].metadata.annotations).toEqual({
      'eks.amazonaws.com/role-arn': 'arn:aws:iam::123456789012:role/inference-gateway',
      'iam.gke.io/gcp-service-account': 'inference-gateway@example-project.iam.gserviceaccount.com',
    });
    const existing = renderChart(HELM!, { set: { 'serviceAccount.create': false, 'serviceAccount.name': 'workload' } });
    expect(ofKind(existing, 'ServiceAccount')).toEqual([]);
    for (const { spec } of podSpecs(existing)) expect(spec.serviceAccountName).toBe('workload');
  });

  it('migrates in a pre-install/pre-upgrade hook Job that runs the built migration command on DATABASE_URL', () => {
    for (const manifests of [defaults, production]) {
      const [job] = ofKind(manifests, 'Job');
      expect(job.metadata.annotations!['helm.sh/hook'].split(',').sort()).toEqual(['pre-install', 'pre-upgrade']);
      expect(job.metadata.annotations!['helm.sh/hook-delete-policy']).toContain('before-hook-creation');
      const container = job.spec.template.spec.containers[0];
      expect(container.command).toEqual(['node', 'dist/tools/db/src/migrate.js']);
      expect(existsSync(path.join(ROOT, 'dist/tools/db/src/migrate.js'))).toBe(true);
      expect(loadCompose().services.migrate.command).toEqual(container.command);
      expect(envNamed(container, 'DATABASE_URL').valueFrom.secretKeyRef.key).toBe('DATABASE_URL');
      // Hooks run before the release's other objects exist: the Job reads none of them.
      expect(container.envFrom).toBeUndefined();
      expect(job.spec.template.spec.restartPolicy).toBe('Never');
    }
  });

  it('mounts the shipped catalogue by default and a file given with --set-file instead, rolling the catalogue pods on a change', async () => {
    const shipped = readFileSync(path.join(ROOT, 'apps/catalogue/data/catalogue.yaml'), 'utf8');
    const catalogueOf = (manifests: Manifest[]) => named(manifests, 'ConfigMap', 'igw-inference-gateway-catalogue').data['catalogue.yaml'];
    expect(catalogueOf(defaults).trim()).toBe(shipped.trim());
    const catalogue = deploymentOf(defaults, 'catalogue').spec.template.spec;
    const file = envNamed(catalogue.containers[0], 'CATALOGUE_FILE').value as string;
    const mount = catalogue.containers[0].volumeMounts.find((candidate: { mountPath: string }) => file.startsWith(`${candidate.mountPath}/`));
    expect(catalogue.volumes.find((volume: { name: string }) => volume.name === mount.name).configMap.name).toBe('igw-inference-gateway-catalogue');
    expect(path.basename(file)).toBe('catalogue.yaml');

    const directory = await mkdtemp(path.join(tmpdir(), 'igw-chart-'));
    try {
      const custom = path.join(directory, 'catalogue.yaml');
      await writeFile(custom, 'models: []\n');
      const rendered = renderChart(HELM!, { setFiles: { 'catalogue.file': custom } });
      expect(catalogueOf(rendered).trim()).toBe('models: []');
      const checksum = (manifests: Manifest[]) => deploymentOf(manifests, 'catalogue').spec.template.metadata.annotations['checksum/catalogue'];
      expect(checksum(rendered)).not.toBe(checksum(defaults));
      // The gateways learn of a new revision by broadcast: they do not restart for it.
      expect(deploymentOf(rendered, 'gateway').spec.template.metadata.annotations).toEqual(deploymentOf(defaults, 'gateway').spec.template.metadata.annotations);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('mounts providersFile read-only into the gateway pods as PROVIDERS_FILE, its keys from the Secret, without rolling them on an edit; nothing of it without the value', async () => {
    const providers = {
      connections: [
        { name: 'azure-eastus', kind: 'azure-openai', baseUrl: 'https://eastus-prod.openai.azure.com', apiKey: '${AZURE_EASTUS_KEY}', rpm: 1200, tpm: 450000 },
        { name: 'vllm-pool', kind: 'openai', baseUrl: 'http://vllm.models.svc:8000/v1', keyless: true, headers: { 'x-team': 'search' } },
      ],
    };
    const providersOf = (manifests: Manifest[]) => manifests.find((manifest) => manifest.kind === 'ConfigMap' && manifest.metadata.name === 'igw-inference-gateway-providers');
    const fromSecret = (name: string) => ({ name, valueFrom: { secretKeyRef: { name: 'igw-inference-gateway-secrets', key: name, optional: false } } });
    const rendered = renderChart(HELM!, { set: { providersFile: providers, 'gateway.secretEnv': ['AZURE_EASTUS_KEY', 'AZURE_WESTUS_KEY'] } });
    expect([...rendered.flatMap(schemaErrors), ...unknownFieldErrors(rendered)]).toEqual([]);

    // The file as given, `${VAR}` untouched: the gateway resolves it from its environment.
    expect(parse(providersOf(rendered)!.data['providers.yaml'])).toEqual(providers);
    const gateway = deploymentOf(rendered, 'gateway').spec.template.spec;
    const container = gateway.containers[0];
    const file = envNamed(container, 'PROVIDERS_FILE').value as string;
    expect(file).toBe('/etc/igw/providers.yaml');
    // The directory, never a subPath: kubelet updates a subPath mount's file only on a restart.
    const mount = container.volumeMounts.find((candidate: { mountPath: string }) => file.startsWith(`${candidate.mountPath}/`));
    expect(mount).toEqual({ name: mount.name, mountPath: path.dirname(file), readOnly: true });
    expect(gateway.volumes.find((volume: { name: string }) => volume.name === mount.name)).toEqual({ name: mount.name, configMap: { name: 'igw-inference-gateway-providers' } });
    for (const variable of ['AZURE_EASTUS_KEY', 'AZURE_WESTUS_KEY']) expect(envNamed(container, variable)).toEqual(fromSecret(variable));
    for (const component of COMPONENTS.filter((candidate) => candidate !== 'gateway')) {
      const other = deploymentOf(rendered, component).spec.template.spec.containers[0];
      expect({ component, file: envNamed(other, 'PROVIDERS_FILE'), key: envNamed(other, 'AZURE_EASTUS_KEY') }).toEqual({ component, file: undefined, key: undefined });
    }
    // No checksum of the file: an edit reaches the pods through kubelet and the gateway re-reads it.
    expect(deploymentOf(rendered, 'gateway').spec.template.metadata.annotations).toEqual(deploymentOf(defaults, 'gateway').spec.template.metadata.annotations);
    const edited = renderChart(HELM!, { set: { providersFile: { connections: providers.connections.slice(1) }, 'gateway.secretEnv': ['AZURE_EASTUS_KEY', 'AZURE_WESTUS_KEY'] } });
    expect(providersOf(edited)!.data).not.toEqual(providersOf(rendered)!.data);
    expect(deploymentOf(edited, 'gateway').spec.template).toEqual(deploymentOf(rendered, 'gateway').spec.template);

    // The production-like values carry one too; the default values none.
    expect(envNamed(deploymentOf(production, 'gateway').spec.template.spec.containers[0], 'PROVIDERS_FILE').value).toBe(file);
    expect(providersOf(defaults)).toBeUndefined();
    const plain = deploymentOf(defaults, 'gateway').spec.template.spec;
    expect(envNamed(plain.containers[0], 'PROVIDERS_FILE')).toBeUndefined();
    expect(plain.containers[0].volumeMounts.map((candidate: { mountPath: string }) => candidate.mountPath)).toEqual(['/tmp', '/app/.data']);
    expect(plain.volumes.map((volume: { name: string }) => volume.name)).toEqual(['tmp', 'data']);

    // A file's text, with --set-file, is mounted as written.
    const directory = await mkdtemp(path.join(tmpdir(), 'igw-chart-'));
    try {
      const custom = path.join(directory, 'providers.yaml');
      await writeFile(custom, '# no connection yet\nconnections: []\n');
      expect(providersOf(renderChart(HELM!, { setFiles: { providersFile: custom } }))!.data['providers.yaml']).toBe('# no connection yet\nconnections: []');
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('refuses a gateway.secretEnv entry the gateway must not hold, or that is not a variable name', () => {
    expect(() => renderChart(HELM!, { set: { 'gateway.secretEnv': ['ADMIN_TOKEN'] } })).toThrow(/gateway\.secretEnv: ADMIN_TOKEN/);
    expect(() => renderChart(HELM!, { set: { 'gateway.secretEnv': ['OPENAI_API_KEY'] } })).toThrow(/gateway\.secretEnv: OPENAI_API_KEY/);
    expect(() => renderChart(HELM!, { set: { 'gateway.secretEnv': ['azure-key'] } })).toThrow(/not an environment variable name/);
    expect(() => renderChart(HELM!, { set: { providersFile: { connections: [] }, 'gateway.env': { PROVIDERS_FILE: '/elsewhere.yaml' } } })).toThrow(/gateway\.env\.PROVIDERS_FILE/);
  });

  it('has no Ingress or autoscaler by default, and a PodDisruptionBudget for every service with more than one pod', () => {
    expect(ofKind(defaults, 'Ingress')).toEqual([]);
    expect(ofKind(defaults, 'HorizontalPodAutoscaler')).toEqual([]);
    expect(ofKind(defaults, 'PodDisruptionBudget').map((budget) => budget.metadata.name).sort()).toEqual(COMPONENTS.map((component) => `igw-inference-gateway-${component}`).sort());
    // decisions runs one pod in the production values: a budget would block every drain.
    expect(ofKind(production, 'PodDisruptionBudget').map((budget) => budget.metadata.name).sort()).toEqual(['igw-inference-gateway-billing', 'igw-inference-gateway-catalogue', 'igw-inference-gateway-gateway']);
    for (const budget of ofKind(production, 'PodDisruptionBudget')) {
      const component = budget.metadata.name.replace('igw-inference-gateway-', '');
      expect(budget.spec).toEqual({ maxUnavailable: 1, selector: { matchLabels: deploymentOf(production, component).spec.selector.matchLabels } });
    }
  });

  it('autoscales the gateway when enabled, leaving its replica count to the autoscaler', () => {
    const [autoscaler] = ofKind(production, 'HorizontalPodAutoscaler');
    expect(autoscaler.spec).toMatchObject({ scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'igw-inference-gateway-gateway' }, minReplicas: 3, maxReplicas: 12 });
    expect(deploymentOf(production, 'gateway').spec.replicas).toBeUndefined();
    expect(deploymentOf(defaults, 'gateway').spec.replicas).toBe(2);
  });

  it("routes the public host to the gateway's API, documentation and root (exactly /) and the billing host to billing's /v1/billing/ only: never an admin route, /metrics or /readyz", () => {
    const [ingress] = ofKind(production, 'Ingress');
    const routes = ingress.spec.rules.flatMap((rule: { host: string; http: { paths: { path: string; pathType: string; backend: { service: { name: string; port: { name: string } } } }[] } }) =>
      rule.http.paths.map((route) => ({ host: rule.host, path: route.path, pathType: route.pathType, service: route.backend.service.name, port: route.backend.service.port.name })),
    );
    expect(routes).toEqual([
      { host: 'api.example.com', path: '/', pathType: 'Exact', service: 'igw-inference-gateway-gateway', port: 'http' },
      { host: 'api.example.com', path: '/docs', pathType: 'Prefix', service: 'igw-inference-gateway-gateway', port: 'http' },
      { host: 'api.example.com', path: '/docs-json', pathType: 'Exact', service: 'igw-inference-gateway-gateway', port: 'http' },
      { host: 'api.example.com', path: '/v1/', pathType: 'Prefix', service: 'igw-inference-gateway-gateway', port: 'http' },
      { host: 'billing.example.com', path: '/v1/billing/', pathType: 'Prefix', service: 'igw-inference-gateway-billing', port: 'http' },
    ]);
    expect(JSON.stringify(ingress)).not.toMatch(/admin/i);
    // Kubernetes' Prefix matches whole path elements, Exact the whole path.
    const routed = (requestPath: string) =>
      routes.some((route: { path: string; pathType: string }) =>
        route.pathType === 'Exact' ? requestPath === route.path : requestPath === route.path.replace(/\/$/, '') || requestPath.startsWith(route.path.endsWith('/') ? route.path : `${route.path}/`),
      );
    for (const operatorPath of ['/metrics', '/readyz', '/healthz', '/admin/v1/accounts', '/catalogue/admin/v1/catalogue/models']) expect({ operatorPath, routed: routed(operatorPath) }).toEqual({ operatorPath, routed: false });
    for (const publicPath of ['/', '/v1/chat/completions', '/v1/billing/balance', '/docs', '/docs/swagger-ui.css', '/docs-json']) expect({ publicPath, routed: routed(publicPath) }).toEqual({ publicPath, routed: true });
    expect(ingress.spec.tls).toEqual([{ secretName: 'inference-gateway-tls', hosts: ['api.example.com', 'billing.example.com'] }]);
    // Streams and decisions outlast ingress-nginx's 60 s default.
    expect(Number(ingress.metadata.annotations!['nginx.ingress.kubernetes.io/proxy-read-timeout'])).toBeGreaterThan(300);
  });

  it('ships a NetworkPolicy per service: from outside the release only the Ingress controller, and only to the gateway and billing; the internet only from the gateway and decisions', () => {
    const release = { 'app.kubernetes.io/name': 'inference-gateway', 'app.kubernetes.io/instance': 'igw' };
    const ingressController = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'ingress-nginx' } } };
    for (const manifests of [defaults, production]) {
      const policies = ofKind(manifests, 'NetworkPolicy');
      expect(policies.map((policy) => policy.metadata.name).sort()).toEqual(COMPONENTS.map((component) => `igw-inference-gateway-${component}`).sort());
      for (const component of COMPONENTS) {
        const policy = named(manifests, 'NetworkPolicy', `igw-inference-gateway-${component}`);
        expect(policy.spec.podSelector).toEqual({ matchLabels: deploymentOf(manifests, component).spec.selector.matchLabels });
        expect(policy.spec.policyTypes).toEqual(['Ingress', 'Egress']);
        // Who may connect: the release's own pods and, to the public services, the Ingress controller; on the service's port only.
        const public_ = component === 'gateway' || component === 'billing';
        expect(policy.spec.ingress).toEqual([
          { from: [{ podSelector: { matchLabels: release } }], ports: [{ port: 'http', protocol: 'TCP' }] },
          ...(public_ ? [{ from: [ingressController], ports: [{ port: 'http', protocol: 'TCP' }] }] : []),
        ]);
        // Whom it may reach: DNS, the release's pods, PostgreSQL and Redis; the gateway and decisions also public addresses.
        const egress = policy.spec.egress as Array<{ to?: Array<{ ipBlock?: { cidr: string; except?: string[] } }>; ports?: Array<{ port: number | string }> }>;
        expect(egress).toEqual(expect.arrayContaining([
          { ports: [{ port: 53, protocol: 'UDP' }, { port: 53, protocol: 'TCP' }] },
          { to: [{ podSelector: { matchLabels: release } }] },
          { ports: [{ port: 5432, protocol: 'TCP' }, { port: 6379, protocol: 'TCP' }] },
        ]));
        const blocks = egress.flatMap((rule) => rule.to ?? []).filter((peer) => peer.ipBlock).map((peer) => peer.ipBlock);
        const callsUpstreams = component === 'gateway' || component === 'decisions';
        expect(egress).toHaveLength(callsUpstreams ? 4 : 3);
        if (callsUpstreams) {
          expect(blocks).toEqual([
            { cidr: '0.0.0.0/0', except: expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '127.0.0.0/8']) },
            { cidr: '::/0', except: expect.arrayContaining(['fc00::/7', 'fe80::/10']) },
          ]);
        } else {
          expect(blocks).toEqual([]);
        }
      }
    }
  });

  it('lets a metrics scraper in when named, and drops the NetworkPolicies when turned off', () => {
    const prometheus = { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } } };
    const scraped = renderChart(HELM!, { set: { 'networkPolicy.metricsScrapers': [prometheus] } });
    for (const policy of ofKind(scraped, 'NetworkPolicy')) expect(policy.spec.ingress).toContainEqual({ from: [prometheus], ports: [{ port: 'http', protocol: 'TCP' }] });
    expect(schemaErrors(named(scraped, 'NetworkPolicy', 'igw-inference-gateway-gateway'))).toEqual([]);
    expect(ofKind(renderChart(HELM!, { set: { 'networkPolicy.enabled': false } }), 'NetworkPolicy')).toEqual([]);
  });

  it("lets billing alone reach the account webhooks' receivers when they are named", () => {
    const receivers = [{ to: [{ ipBlock: { cidr: '203.0.113.10/32' } }], ports: [{ port: 443, protocol: 'TCP' }] }];
    const rendered = renderChart(HELM!, { set: { 'networkPolicy.webhookReceivers': receivers } });
    for (const component of COMPONENTS) {
      const egress = named(rendered, 'NetworkPolicy', `igw-inference-gateway-${component}`).spec.egress;
      if (component === 'billing') expect(egress).toContainEqual(receivers[0]);
      else expect(egress).not.toContainEqual(receivers[0]);
    }
    expect(schemaErrors(named(rendered, 'NetworkPolicy', 'igw-inference-gateway-billing'))).toEqual([]);
  });

  it('puts shared settings in one ConfigMap and per-service settings on their container', () => {
    const settings = named(production, 'ConfigMap', 'igw-inference-gateway-config').data;
    expect(named(defaults, 'ConfigMap', 'igw-inference-gateway-config').data).toMatchObject({ LOG_FORMAT: 'json' });
    expect(settings).toMatchObject({ LOG_LEVEL: 'warn', RATE_LIMIT_RPM: '1200', CREDITS_PER_USD: '2000000', QUEUE_PREFIX: 'igw' });
    expect(envNamed(deploymentOf(production, 'billing').spec.template.spec.containers[0], 'LEDGER_WORKERS')).toEqual({ name: 'LEDGER_WORKERS', value: '8' });
    expect(envNamed(deploymentOf(production, 'gateway').spec.template.spec.containers[0], 'KEY_CACHE_TTL_MS')).toEqual({ name: 'KEY_CACHE_TTL_MS', value: '30000' });
    expect(deploymentOf(production, 'gateway').spec.template.spec.containers[0].image).toBe('registry.example.com/inference-gateway:0.1.0');
  });

  it('drains for the grace period less the preStop pause and the flush, so Kubernetes never kills a draining pod', () => {
    for (const component of COMPONENTS) {
      const pod = deploymentOf(defaults, component).spec.template.spec;
      const grace = pod.terminationGracePeriodSeconds ?? 30;
      const drainMs = Number(envNamed(pod.containers[0], 'SHUTDOWN_DRAIN_MS')!.value);
      const preStopSeconds = Number(pod.containers[0].lifecycle?.preStop?.exec?.command?.[1] ?? 0);
      expect(drainMs).toBe((grace - 15) * 1000);
      expect(preStopSeconds * 1000 + drainMs).toBeLessThan(grace * 1000);
    }
    expect(envNamed(deploymentOf(defaults, 'gateway').spec.template.spec.containers[0], 'SHUTDOWN_DRAIN_MS')!.value).toBe('75000');
  });
});
