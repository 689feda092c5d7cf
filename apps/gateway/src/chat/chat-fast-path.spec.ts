import { Injectable, Module, type CallHandler, type CanActivate, type ExecutionContext, type INestApplication, type MiddlewareConsumer, type NestInterceptor, type NestMiddleware } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import type { AuthenticatedKey } from '@igw/contracts';
import { ApiKeyAuthenticator, generateApiKey, startHttpApp } from '@igw/platform';
import { gatewayDirectRoutes } from '../gateway.app';
import { CatalogueSnapshotService } from '../catalogue/catalogue-snapshot.service';
import { EmbeddingsService } from '../embeddings/embeddings.service';
import { GeminiController } from '../gemini/gemini.controller';
import { MessagesController } from '../messages/messages.controller';
import { PaidRequestPipeline } from '../paid-requests/paid-request-pipeline';
import { ResponsesController } from '../responses/responses.controller';
import { StoredResponses } from '../responses/stored-responses';
import { ChatController } from './chat.controller';
import { ChatService, type ChatCall } from './chat.service';

// A team extends the gateway with a global guard, interceptor or middleware: the chat fast path
// would skip it, so the gateway refuses to start unless DIRECT_ROUTES=false, and then the
// extension sees every chat request.

const AUTH: AuthenticatedKey = {
  keyId: 'k',
  accountId: 'a',
  plan: 'paid',
  status: 'active',
  limits: {},
  balance: { balanceMicro: 1n, version: 1, usageSpentMicro: 0n },
};

/** The chat paths each extension saw. */
const seen: string[] = [];

@Injectable()
class TenantGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    seen.push(`TenantGuard ${context.switchToHttp().getRequest<Request>().path}`);
    return true;
  }
}

@Injectable()
class AuditInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler) {
    seen.push(`AuditInterceptor ${context.switchToHttp().getRequest<Request>().path}`);
    return next.handle();
  }
}

@Injectable()
class TracingMiddleware implements NestMiddleware {
  use(request: Request, _response: Response, next: NextFunction): void {
    seen.push(`TracingMiddleware ${request.originalUrl}`);
    next();
  }
}

interface Extension {
  providers?: unknown[];
  middleware?: (consumer: MiddlewareConsumer) => void;
}

const EXTENSIONS: Array<[string, Extension]> = [
  ['TenantGuard', { providers: [{ provide: APP_GUARD, useClass: TenantGuard }] }],
  ['AuditInterceptor', { providers: [{ provide: APP_INTERCEPTOR, useClass: AuditInterceptor }] }],
  ['TracingMiddleware', { middleware: (consumer) => consumer.apply(TracingMiddleware).forRoutes('*') }],
];

/**
 * The gateway's chat route with a stand-in service and key check, started as the gateway starts.
 * The extension sits in the chat module itself, or (`elsewhere`) in a feature module of its own
 * beside it, as the gateway composes its features.
 */
function startChatApp(fastPath: boolean, extension: Extension = {}, elsewhere = false): Promise<INestApplication> {
  class ExtensionModule {
    configure(consumer: MiddlewareConsumer) {
      extension.middleware?.(consumer);
    }
  }
  Module({ providers: (extension.providers ?? []) as never[] })(ExtensionModule);
  class ChatModule {}
  Module({
    imports: elsewhere ? [] : [ExtensionModule],
    // The gateway's other direct routes' controllers, as it composes them: each route is checked.
    controllers: [ChatController, ResponsesController, MessagesController, GeminiController],
    providers: [
      { provide: ChatService, useValue: { complete: (_call: ChatCall, deliver: (completion: unknown) => void) => (deliver({ ok: true }), Promise.resolve()) } },
      { provide: PaidRequestPipeline, useValue: {} },
      // The Responses controller's stored responses are billing's: these routes are checked without them.
      { provide: StoredResponses, useValue: {} },
      // The Gemini controller's embeddings and catalogue: its routes are checked without them.
      { provide: EmbeddingsService, useValue: {} },
      { provide: CatalogueSnapshotService, useValue: {} },
      { provide: ApiKeyAuthenticator, useValue: { authenticate: () => Promise.resolve(AUTH) } },
    ],
  })(ChatModule);
  class AppModule {}
  Module({ imports: elsewhere ? [ChatModule, ExtensionModule] : [ChatModule] })(AppModule);
  return startHttpApp(AppModule, {
    name: 'gateway',
    host: '127.0.0.1',
    port: 0,
    portVariable: 'PORT',
    bodyLimit: '1mb',
    logLevel: 'error',
    directRoutes: gatewayDirectRoutes({ DIRECT_ROUTES: fastPath }),
  });
}

describe('the chat fast path and the extensions of the gateway', () => {
  const key = generateApiKey().key;
  const controllerCalls = spyOnRoute(ChatController.prototype, 'create');
  let app: INestApplication | undefined;

  const chat = async (contentType = 'application/json') => {
    const response = await fetch(`${await app!.getUrl()}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
      body: JSON.stringify({ model: 'mini', messages: [{ role: 'user', content: 'Hello' }] }),
    });
    return { status: response.status, body: await response.json() };
  };

  beforeEach(() => {
    seen.length = 0;
    controllerCalls.mockClear();
  });

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it('serves a JSON chat request outside Nest when nothing was added, and any other through ChatController', async () => {
    app = await startChatApp(true);
    expect(await chat()).toEqual({ status: 200, body: { ok: true } });
    expect(controllerCalls).not.toHaveBeenCalled();
    expect(await chat('application/vnd.igw+json')).toEqual({ status: 200, body: { ok: true } });
    expect(controllerCalls).toHaveBeenCalledTimes(1);
  });

  it.each(EXTENSIONS.flatMap(([name, extension]) => [[name, 'the chat module', extension, false] as const, [name, 'another feature module', extension, true] as const]))(
    'refuses to start, naming %s added in %s, when the fast path would skip it',
    async (name, _where, extension, elsewhere) => {
      await expect(startChatApp(true, extension, elsewhere)).rejects.toThrow(
        new RegExp(`^The chat fast path serves POST /v1/chat/completions and /chat/completions outside Express and Nest, so it would skip the [a-z ]*${name}.*Set DIRECT_ROUTES=false`),
      );
    },
  );

  it.each(EXTENSIONS)('with DIRECT_ROUTES=false, starts with %s and runs it on every chat request', async (name, extension) => {
    app = await startChatApp(false, extension);
    expect(await chat()).toEqual({ status: 200, body: { ok: true } });
    expect(await chat('application/vnd.igw+json')).toEqual({ status: 200, body: { ok: true } });
    expect(seen).toEqual([`${name} /v1/chat/completions`, `${name} /v1/chat/completions`]);
    expect(controllerCalls).toHaveBeenCalledTimes(2);
  });

  it('turns every direct route off with DIRECT_ROUTES=false or its former name CHAT_FAST_PATH=false', () => {
    expect(gatewayDirectRoutes({ DIRECT_ROUTES: true })).toBeDefined();
    expect(gatewayDirectRoutes({ DIRECT_ROUTES: false })).toBeUndefined();
    expect(gatewayDirectRoutes({ DIRECT_ROUTES: true, CHAT_FAST_PATH: false })).toBeUndefined();
  });
});

/** A spy on a controller method that Nest still routes to: Nest reads the route from the method's own metadata. */
function spyOnRoute<T extends object>(prototype: T, method: keyof T & string) {
  const original = prototype[method] as object;
  const spy = jest.spyOn(prototype, method as never);
  for (const key of Reflect.getMetadataKeys(original)) Reflect.defineMetadata(key, Reflect.getMetadata(key, original), spy);
  return spy;
}
