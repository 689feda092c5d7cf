import type { INestApplication } from '@nestjs/common';
import { drainAndClose, startHttpApp } from '@igw/http';
import type { Environment, ServiceSettings } from '@igw/config';
import { GatewayModule } from './gateway.module';
import { PaidRequestPipeline } from './paid-requests/paid-request-pipeline';
import { gatewayConnections } from './paid-requests/upstream-estate';

/** Starts the public gateway (base_url). */
export function startGateway(settings: ServiceSettings): Promise<INestApplication> {
  // Read before the app is built: a providers file that does not validate stops the start, naming its entry and field.
  gatewayConnections(settings);
  return startHttpApp(GatewayModule.forRoot(settings), {
    name: 'gateway',
    host: settings.env.HOST,
    port: settings.env.PORT,
    portVariable: 'PORT',
    bodyLimit: settings.env.BODY_LIMIT,
    logLevel: settings.env.LOG_LEVEL,
    logFormat: settings.env.LOG_FORMAT,
    trustedProxies: settings.env.TRUSTED_PROXIES,
    otlpEndpoint: settings.env.OTEL_EXPORTER_OTLP_ENDPOINT,
    directRoutes: gatewayDirectRoutes(settings.env),
    notFoundHint: (path) => (BILLING_PATHS.test(path) ? BILLING_SERVES_IT : undefined),
    swagger: {
      title: 'Inference gateway',
      description: 'One API in front of many hosted AI models. Authenticate with "Authorization: Bearer <API_KEY>".',
    },
  });
}


/** What a newcomer sends to the gateway's port that billing serves. */
const BILLING_PATHS = /^\/(v1\/billing|admin|console)(\/|$)/;
const BILLING_SERVES_IT = 'The billing service serves /v1/billing/*, /admin/v1/* and /console/ on its own port (BILLING_PORT, 8081 unless set; billing_url in the README).';

/**
 * The controller methods marked `@DirectRoute()` (the chat APIs: chat completions and its
 * Responses, Messages and Gemini fronts) are served straight from Node's server unless
 * DIRECT_ROUTES=false (or its former name CHAT_FAST_PATH=false) sends them through Express too.
 */
export function gatewayDirectRoutes(env: Pick<Environment, 'DIRECT_ROUTES' | 'CHAT_FAST_PATH'>): { turnOff: string } | undefined {
  if (!env.DIRECT_ROUTES || env.CHAT_FAST_PATH === false) return undefined;
  return { turnOff: 'DIRECT_ROUTES=false' };
}

/**
 * Stops the gateway gracefully: new requests are refused (503) while running requests and
 * streams, and upstream calls read on after their client left, finish within SHUTDOWN_DRAIN_MS;
 * what still runs then is cut off and billed as abandoned; then the usage events are flushed.
 */
export function stopGateway(app: INestApplication, env: Pick<Environment, 'SHUTDOWN_DRAIN_MS'>): Promise<void> {
  return drainAndClose(app, { drainMs: env.SHUTDOWN_DRAIN_MS, work: app.get(PaidRequestPipeline) });
}
