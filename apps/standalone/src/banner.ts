import path from 'node:path';
import type { RunningStandalone } from './standalone';

const DEFAULT_BILLING_URL = 'http://127.0.0.1:8081';
const DEFAULT_DATA_DIR = '.data';
const STARTING_USD = 10;

export interface BannerContext {
  /** DATA_DIR as configured (the CLI finds the admin token there). */
  dataDir: string;
}

/**
 * What `npm start` prints once everything listens: every address and port, where the admin
 * token is, what can answer, and the next step as commands to paste. Everything else is at
 * LOG_LEVEL=debug.
 */
export function standaloneBanner(running: RunningStandalone, context: BannerContext): string[] {
  const gatewayPort = new URL(running.gatewayUrl).port;
  const billingPort = new URL(running.billingUrl).port;
  const lines = [
    '',
    'Inference gateway is running (standalone).',
    `  gateway (base_url):     ${running.gatewayUrl}    Swagger UI: ${running.gatewayUrl}/docs`,
    `  billing (billing_url):  ${running.billingUrl}    Swagger UI: ${running.billingUrl}/docs (admin API; catalogue admin API at /admin/v1/catalogue, Swagger UI /catalogue/docs)`,
    `  ports:                  ${gatewayPort} (PORT), ${billingPort} (BILLING_PORT)` +
      (running.embeddedDatabasePort ? `; embedded PostgreSQL on 127.0.0.1:${running.embeddedDatabasePort} (a free port, chosen at start)` : '') +
      (running.emulatorUrl ? `; the emulator at ${running.emulatorUrl} (a free port)` : ''),
    `  admin token:            ${running.adminTokenFile ? `in ${running.adminTokenFile}` : 'from ADMIN_TOKEN'}; sign in with it to the admin console at ${running.billingUrl}/console/`,
    ...upstreamLines(running),
  ];
  if (running.demoKey) {
    lines.push(
      `  demo API key:           ${running.demoKey}`,
      '',
      'Try it (in another terminal):',
      `  export KEY=${running.demoKey}`,
      `  curl ${running.gatewayUrl}/v1/chat/completions -H "Authorization: Bearer $KEY" \\`,
      `       -H "Content-Type: application/json" -d '{"model":"gpt-4o-mini","messages":[{"role":"user","content":"Hello"}]}'`,
      `  curl ${running.billingUrl}/v1/billing/balance -H "Authorization: Bearer $KEY"`,
    );
  } else {
    lines.push('', `Next: create an account with $${STARTING_USD} of credits, then an API key for it (in another terminal):`, ...nextStepCommands(running, context));
  }
  lines.push('', 'Press Ctrl-C to stop. More detail at start: LOG_LEVEL=debug.', '');
  return lines;
}

/**
 * What the banner says, as the fields of one JSON log line (LOG_FORMAT=json, where a text banner
 * would break the stream). The demo key itself stays in its file: a log pipeline keeps no keys.
 */
export function standaloneSummary(running: RunningStandalone, context: BannerContext): Record<string, unknown> {
  const { providers, emulated, answerableModels, catalogueModels } = running.upstreams;
  return {
    gatewayUrl: running.gatewayUrl,
    billingUrl: running.billingUrl,
    swaggerUi: [`${running.gatewayUrl}/docs`, `${running.billingUrl}/docs`],
    adminConsole: `${running.billingUrl}/console/`,
    adminTokenFile: running.adminTokenFile ?? null,
    embeddedDatabasePort: running.embeddedDatabasePort ?? null,
    emulatorUrl: running.emulatorUrl ?? null,
    providers: emulated ? 'emulator' : providers,
    answerableModels,
    catalogueModels,
    demoKeyFile: running.demoKey ? path.resolve(context.dataDir, 'demo-key') : null,
  };
}

function upstreamLines(running: RunningStandalone): string[] {
  const { providers, emulated, answerableModels, catalogueModels } = running.upstreams;
  const list = `${running.gatewayUrl}/v1/models?available=true`;
  if (emulated) {
    return [`  providers:              played by the emulator (--demo): ${answerableModels} of ${catalogueModels} models can answer (${list})`];
  }
  if (providers.length === 0 || answerableModels === 0) {
    const why = providers.length === 0 ? 'no upstream provider is configured' : `no catalogue model has a source at ${providers.join(', ')}`;
    return [
      '',
      `WARNING: ${why}, so none of the ${catalogueModels} catalogue models can answer (each request answers 503).`,
      "  Set a provider's key before npm start, e.g. OPENAI_API_KEY=sk-... (any <PROVIDER>_API_KEY, and <PROVIDER>_BASE_URL for another address; see the README),",
      '  or try everything offline with the emulator: npm start -- --demo',
    ];
  }
  return [`  providers:              ${providers.join(', ')}: ${answerableModels} of ${catalogueModels} models can answer (${list})`];
}

/**
 * The CLI commands as they work against this very start (its billing address and data folder),
 * written as the README writes them (`npx igw`, which prints only the JSON, ready for `jq`).
 */
function nextStepCommands(running: RunningStandalone, context: BannerContext): string[] {
  const urlOption = running.billingUrl === DEFAULT_BILLING_URL ? '' : ` --url ${running.billingUrl}`;
  const dataDir = path.normalize(context.dataDir) === DEFAULT_DATA_DIR || !running.adminTokenFile ? '' : `DATA_DIR=${context.dataDir} `;
  return [
    `  ${dataDir}npx igw${urlOption} accounts create --name me --usd ${STARTING_USD}`,
    `  ${dataDir}npx igw${urlOption} keys create <id printed above> --name first-key`,
  ];
}
