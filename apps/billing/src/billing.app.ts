import type { INestApplication } from '@nestjs/common';
import { startHttpApp, type ServiceSettings } from '@igw/platform';
import { BillingModule } from './billing.module';

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
    swagger: {
      title: 'Inference gateway: billing',
      description: 'Balance of an API key (billing_url) and the admin API for accounts, keys, credits, usage and reconciliation.',
    },
  });
}
