import type { INestApplication } from '@nestjs/common';
import { startHttpApp, type ServiceSettings } from '@igw/platform';
import { CatalogueModule } from './catalogue.module';

/** Starts the catalogue owner: loads the shipped catalogue, serves snapshots, announces revisions. */
export function startCatalogue(settings: ServiceSettings & { databaseUrl: string; adminToken: string }): Promise<INestApplication> {
  return startHttpApp(CatalogueModule.forRoot(settings), {
    name: 'catalogue',
    host: settings.env.HOST,
    port: settings.env.CATALOGUE_PORT,
    bodyLimit: settings.env.BODY_LIMIT,
    logLevel: settings.env.LOG_LEVEL,
    swagger: {
      title: 'Inference gateway: catalogue',
      description: 'Admin API of the model catalogue (Authorization: Bearer <ADMIN_TOKEN>): list, upsert, retire, add aliases, change prices.',
    },
  });
}
