import type { INestApplication } from '@nestjs/common';
import { startHttpApp, type DirectRoute, type DirectRouteContext, type Environment, type ServiceSettings } from '@igw/platform';
import { chatDirectRoute } from './chat/chat-direct-route';
import { GatewayModule } from './gateway.module';

/** Starts the public gateway (base_url). */
export function startGateway(settings: ServiceSettings): Promise<INestApplication> {
  return startHttpApp(GatewayModule.forRoot(settings), {
    name: 'gateway',
    host: settings.env.HOST,
    port: settings.env.PORT,
    portVariable: 'PORT',
    bodyLimit: settings.env.BODY_LIMIT,
    logLevel: settings.env.LOG_LEVEL,
    directRoutes: gatewayDirectRoutes(settings.env),
    swagger: {
      title: 'Inference gateway',
      description: 'One API in front of many hosted AI models. Authenticate with "Authorization: Bearer <API_KEY>".',
    },
  });
}

/** The chat fast path, unless CHAT_FAST_PATH=false sends chat through Express and Nest like every other route. */
export function gatewayDirectRoutes(env: Pick<Environment, 'CHAT_FAST_PATH'>): ((context: DirectRouteContext) => DirectRoute[]) | undefined {
  return env.CHAT_FAST_PATH ? (context) => [chatDirectRoute(context)] : undefined;
}
