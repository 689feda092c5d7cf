import type { INestApplication } from '@nestjs/common';
import { startHttpApp, type HttpAppOptions } from '@igw/http';
import type { ServiceSettings } from '@igw/config';
import { DecisionsModule } from './decisions.module';

/** `http.listen: false` (standalone): no port of its own; it serves only health endpoints. */
export function startDecisions(settings: ServiceSettings, http: Pick<HttpAppOptions, 'listen'> = {}): Promise<INestApplication> {
  return startHttpApp(DecisionsModule.forRoot(settings), {
    name: 'decisions',
    host: settings.env.HOST,
    port: settings.env.DECISIONS_PORT,
    portVariable: 'DECISIONS_PORT',
    ...http,
    bodyLimit: settings.env.BODY_LIMIT,
    logLevel: settings.env.LOG_LEVEL,
    logFormat: settings.env.LOG_FORMAT,
    trustedProxies: settings.env.TRUSTED_PROXIES,
    otlpEndpoint: settings.env.OTEL_EXPORTER_OTLP_ENDPOINT,
  });
}
