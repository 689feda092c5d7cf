import type { INestApplication } from '@nestjs/common';
import { startHttpApp, type ServiceSettings } from '@igw/platform';
import { DecisionsModule } from './decisions.module';

export function startDecisions(settings: ServiceSettings): Promise<INestApplication> {
  return startHttpApp(DecisionsModule.forRoot(settings), {
    name: 'decisions',
    host: settings.env.HOST,
    port: settings.env.DECISIONS_PORT,
    bodyLimit: settings.env.BODY_LIMIT,
    logLevel: settings.env.LOG_LEVEL,
  });
}
