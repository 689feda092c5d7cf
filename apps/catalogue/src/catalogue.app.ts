import type { INestApplication } from '@nestjs/common';
import { startHttpApp } from '@igw/http';
import type { ServiceSettings } from '@igw/config';
import { CatalogueModule } from './catalogue.module';

/** The path prefixes the catalogue's admin API and its Swagger UI answer under when served through another app's port. */
export const CATALOGUE_MOUNTED_PREFIXES = ['/admin/v1/catalogue', '/catalogue/'];

/**
 * Starts the catalogue owner: loads the shipped catalogue, serves snapshots, announces revisions.
 * `mounted` (standalone): no port of its own; its admin API is served through another app's
 * port (`mountOnApp` with CATALOGUE_MOUNTED_PREFIXES), its Swagger UI at `/catalogue/docs`.
 */
export function startCatalogue(settings: ServiceSettings & { databaseUrl: string; adminToken: string }, mounted = false): Promise<INestApplication> {
  return startHttpApp(CatalogueModule.forRoot(settings), {
    name: 'catalogue',
    host: settings.env.HOST,
    port: settings.env.CATALOGUE_PORT,
    portVariable: 'CATALOGUE_PORT',
    listen: !mounted,
    bodyLimit: settings.env.BODY_LIMIT,
    logLevel: settings.env.LOG_LEVEL,
    logFormat: settings.env.LOG_FORMAT,
    trustedProxies: settings.env.TRUSTED_PROXIES,
    otlpEndpoint: settings.env.OTEL_EXPORTER_OTLP_ENDPOINT,
    swagger: {
      title: 'Inference gateway: catalogue',
      description: 'Admin API of the model catalogue (Authorization: Bearer <ADMIN_TOKEN>): list, upsert, retire, add aliases, change prices.',
      path: mounted ? 'catalogue/docs' : 'docs',
    },
  });
}
