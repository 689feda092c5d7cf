import { Injectable, Module, type CallHandler, type CanActivate, type ExecutionContext, type INestApplication, type MiddlewareConsumer, type NestInterceptor, type NestMiddleware } from '@nestjs/common';
import { APP_GUARD, APP_INTERCEPTOR } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import { ACTIVE_PAID_KEY } from '@igw/contracts/testing';
import { ApiKeyAuthenticator, generateApiKey, startHttpApp, type DirectRequest } from '@igw/http';
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

// A team extends the gateway with a global guard or interceptor: it runs on every chat request,
// on the direct route as through Express. Module middleware, which a direct route cannot run, stops
// the start unless DIRECT_ROUTES=false, and then sees every chat request.


/** The chat paths each extension saw, and which way each request was served. */
const seen: string[] = [];

/** Express sets `request.route` when it routes a request: absent, the direct route served it. */
const servedBy = (request: DirectRequest) => ((request as DirectRequest & { route?: unknown }).route === undefined ? 'direct' : 'express');
const pathOf = (request: DirectRequest) => (request.url ?? '').split('?')[0];

@Injectable()
class TenantGuard implements CanActivate {
  canActivate(context: ExecutionContext): boolean {
    seen.push(`TenantGuard ${pathOf(context.switchToHttp().getRequest<DirectRequest>())} ${servedBy(context.switchToHttp().getRequest<DirectRequest>())}`);
    return true;
  }
}

@Injectable()
class AuditInterceptor implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler) {
    seen.push(`AuditInterceptor ${pathOf(context.switchToHttp().getRequest<DirectRequest>())} ${servedBy(context.switchToHttp().getRequest<DirectRequest>())}`);
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

const ENHANCERS: Array<[string, Extension]> = [
  ['TenantGuard', { providers: [{ provide: APP_GUARD, useClass: TenantGuard }] }],
  ['AuditInterceptor', { providers: [{ provide: APP_INTERCEPTOR, useClass: AuditInterceptor }] }],
];
const MIDDLEWARE: Extension = { middleware: (consumer) => consumer.apply(TracingMiddleware).forRoutes('*') };

/** What the chat service was asked, per call: whether it had the client's own text of `messages`. */
const calls: Array<{ verbatimMessages: boolean }> = [];

/**
 * The gateway's chat route with a stand-in service and key check, started as the gateway starts.
 * The extension sits in the chat module itself, or (`elsewhere`) in a feature module of its own
 * beside it, as the gateway composes its features.
 */
function startChatApp(directRoutes: boolean, extension: Extension = {}, elsewhere = false): Promise<INestApplication> {
  class ExtensionModule {}
  const { middleware } = extension;
  if (middleware) Object.assign(ExtensionModule.prototype, { configure: (consumer: MiddlewareConsumer) => middleware(consumer) });
  Module({ providers: (extension.providers ?? []) as never[] })(ExtensionModule);
  class ChatModule {}
  Module({
    imports: elsewhere ? [] : [ExtensionModule],
    // The gateway's other direct routes' controllers, as it composes them: each route is checked.
    controllers: [ChatController, ResponsesController, MessagesController, GeminiController],
    providers: [
      {
        provide: ChatService,
        useValue: { complete: (call: ChatCall, deliver: (completion: unknown) => void) => (calls.push({ verbatimMessages: call.messagesJson !== undefined }), deliver({ ok: true }), Promise.resolve()) },
      },
      { provide: PaidRequestPipeline, useValue: {} },
      // The Responses controller's stored responses are billing's: these routes are checked without them.
      { provide: StoredResponses, useValue: {} },
      // The Gemini controller's embeddings and catalogue: its routes are checked without them.
      { provide: EmbeddingsService, useValue: {} },
      { provide: CatalogueSnapshotService, useValue: {} },
      { provide: ApiKeyAuthenticator, useValue: { authenticate: () => Promise.resolve(ACTIVE_PAID_KEY) } },
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
    directRoutes: gatewayDirectRoutes({ DIRECT_ROUTES: directRoutes }),
  });
}

describe('the chat direct route and the extensions of the gateway', () => {
  const key = generateApiKey().key;
  const controllerCalls = spyOnRoute(ChatController.prototype, 'create');
  let app: INestApplication | undefined;

  const chat = async (contentType = 'application/json', content = 'Hello') => {
    const response = await fetch(`${await app!.getUrl()}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': contentType },
      body: JSON.stringify({ model: 'mini', messages: [{ role: 'user', content }] }),
    });
    return { status: response.status, body: await response.json() };
  };

  beforeEach(() => {
    seen.length = 0;
    calls.length = 0;
    controllerCalls.mockClear();
  });

  afterEach(async () => {
    await app?.close();
    app = undefined;
  });

  it("serves a JSON chat request on the direct route and any other through Express, by ChatController.create both ways, with the client's own messages text", async () => {
    app = await startChatApp(true, ENHANCERS[0][1]);
    const long = 'x'.repeat(20_000);
    expect(await chat('application/json', long)).toEqual({ status: 200, body: { ok: true } });
    expect(await chat('application/vnd.igw+json', long)).toEqual({ status: 200, body: { ok: true } });
    expect(seen).toEqual(['TenantGuard /v1/chat/completions direct', 'TenantGuard /v1/chat/completions express']);
    expect(controllerCalls).toHaveBeenCalledTimes(2);
    expect(calls).toEqual([{ verbatimMessages: true }, { verbatimMessages: true }]);
  });

  it.each(ENHANCERS.flatMap(([name, extension]) => [[name, 'the chat module', extension, false] as const, [name, 'another feature module', extension, true] as const]))(
    'runs %s added in %s on the direct route as through Express',
    async (name, _where, extension, elsewhere) => {
      app = await startChatApp(true, extension, elsewhere);
      expect(await chat()).toEqual({ status: 200, body: { ok: true } });
      expect(await chat('application/vnd.igw+json')).toEqual({ status: 200, body: { ok: true } });
      expect(seen).toEqual([`${name} /v1/chat/completions direct`, `${name} /v1/chat/completions express`]);
    },
  );

  it.each([
    ['the chat module', false],
    ['another feature module', true],
  ])('refuses to start with module middleware added in %s, which a direct route would skip', async (_where, elsewhere) => {
    await expect(startChatApp(true, MIDDLEWARE, elsewhere)).rejects.toThrow(/^The direct route of ChatController\.create.* would skip the middleware that ExtensionModule apply .*Set DIRECT_ROUTES=false/);
  });

  it('with DIRECT_ROUTES=false, starts with module middleware and runs it on every chat request', async () => {
    app = await startChatApp(false, MIDDLEWARE);
    expect(await chat()).toEqual({ status: 200, body: { ok: true } });
    expect(await chat('application/vnd.igw+json')).toEqual({ status: 200, body: { ok: true } });
    expect(seen).toEqual(['TracingMiddleware /v1/chat/completions', 'TracingMiddleware /v1/chat/completions']);
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
