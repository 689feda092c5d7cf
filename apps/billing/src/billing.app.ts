import type { INestApplication } from '@nestjs/common';
import { startHttpApp } from '@igw/http';
import type { ServiceSettings } from '@igw/config';
import { BillingModule } from './billing.module';

/** What a newcomer sends to billing's port that the gateway serves: every /v1 path but billing's own. */
const GATEWAY_PATHS = /^\/v1\/(?!billing(\/|$))/;
const GATEWAY_SERVES_IT = 'The model endpoints (/v1/chat/completions, /v1/models, ...) are the gateway\'s, on its own port (PORT, 8080 unless set; base_url in the README).';

/** Starts billing (billing_url): balance endpoint, admin API, ledger worker, key look-ups. */
export function startBilling(settings: ServiceSettings & { databaseUrl: string; adminToken: string }): Promise<INestApplication> {
  return startHttpApp(BillingModule.forRoot(settings), {
    name: 'billing',
    host: settings.env.HOST,
    port: settings.env.BILLING_PORT,
    portVariable: 'BILLING_PORT',
    bodyLimit: settings.env.BODY_LIMIT,
    logLevel: settings.env.LOG_LEVEL,
    logFormat: settings.env.LOG_FORMAT,
    trustedProxies: settings.env.TRUSTED_PROXIES,
    otlpEndpoint: settings.env.OTEL_EXPORTER_OTLP_ENDPOINT,
    notFoundHint: (path) => (GATEWAY_PATHS.test(path) ? GATEWAY_SERVES_IT : undefined),
    swagger: {
      title: 'Inference gateway: billing',
      description: 'Balance of an API key (billing_url) and the admin API for accounts, keys, credits, usage and reconciliation.',
    },
  });
}
