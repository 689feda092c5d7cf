import {
  Controller,
  Injectable,
  Module,
  Post,
  RequestMethod,
  Scope,
  UseInterceptors,
  type CallHandler,
  type CanActivate,
  type ExceptionFilter,
  type INestApplication,
  type MiddlewareConsumer,
  type NestInterceptor,
  type NestMiddleware,
  type PipeTransform,
} from '@nestjs/common';
import { APP_FILTER, APP_GUARD, APP_INTERCEPTOR, APP_PIPE, NestFactory } from '@nestjs/core';
import type { NextFunction, Request, Response } from 'express';
import { mountedMiddleware, refuseSkippedEnhancers, type DirectRouteCoverage } from './direct-route-coverage';

@Injectable()
class TenantGuard implements CanActivate {
  canActivate(): boolean {
    return true;
  }
}

@Injectable()
class AuditInterceptor implements NestInterceptor {
  intercept(_context: unknown, next: CallHandler) {
    return next.handle();
  }
}

@Injectable()
class TrimPipe implements PipeTransform {
  transform(value: unknown) {
    return value;
  }
}

class ProblemFilter implements ExceptionFilter {
  catch(): void {}
}

@Injectable()
class TracingMiddleware implements NestMiddleware {
  use(_request: Request, _response: Response, next: NextFunction): void {
    next();
  }
}

function auditLog(_request: Request, _response: Response, next: NextFunction): void {
  next();
}

@Controller()
class ChatLikeController {
  @Post('v1/chat/completions')
  create() {
    return {};
  }

  @Post('v1/embeddings')
  embed() {
    return {};
  }
}

const ROUTE: DirectRouteCoverage = {
  name: 'The test fast path',
  turnOff: 'TEST_FAST_PATH=false',
  method: 'POST',
  paths: ['/v1/chat/completions'],
  handler: { controller: ChatLikeController, method: 'create' },
  runs: [],
};

/** Nest's adapter's own middleware, as startHttpApp lists it for every direct route. */
let adapterMiddleware: unknown[] = [];

/** An initialised app of ChatLikeController as startHttpApp makes one, with `configure` run on it before init. */
async function appWith(
  module: { providers?: unknown[]; middleware?: (consumer: MiddlewareConsumer) => void } = {},
  configure: (app: INestApplication) => void = () => undefined,
): Promise<INestApplication> {
  class TestModule {
    configure(consumer: MiddlewareConsumer) {
      module.middleware?.(consumer);
    }
  }
  Module({ controllers: [ChatLikeController], providers: (module.providers ?? []) as never[] })(TestModule);
  const app = await NestFactory.create(TestModule, { logger: false, bodyParser: false });
  adapterMiddleware = mountedMiddleware(app);
  configure(app);
  await app.init();
  return app;
}

async function refusal(app: INestApplication, route: DirectRouteCoverage = ROUTE): Promise<string | undefined> {
  try {
    refuseSkippedEnhancers(app, { ...route, runs: [...adapterMiddleware, ...route.runs] });
    return undefined;
  } catch (error) {
    return (error as Error).message;
  } finally {
    await app.close();
  }
}

describe('refuseSkippedEnhancers', () => {
  it('accepts an app with no enhancer, or with only those the route runs itself', async () => {
    expect(await refusal(await appWith())).toBeUndefined();
    const guard = new TenantGuard();
    const runsThem: DirectRouteCoverage = { ...ROUTE, runs: [guard, AuditInterceptor, auditLog] };
    const app = await appWith({ providers: [{ provide: APP_INTERCEPTOR, useClass: AuditInterceptor }] }, (created) => {
      created.useGlobalGuards(guard);
      created.use(auditLog);
    });
    expect(await refusal(app, runsThem)).toBeUndefined();
  });

  it.each([
    ['APP_GUARD', { provide: APP_GUARD, useClass: TenantGuard }, 'the global guard TenantGuard'],
    ['APP_INTERCEPTOR', { provide: APP_INTERCEPTOR, useClass: AuditInterceptor }, 'the global interceptor AuditInterceptor'],
    ['a request-scoped APP_INTERCEPTOR', { provide: APP_INTERCEPTOR, useClass: AuditInterceptor, scope: Scope.REQUEST }, 'the global interceptor AuditInterceptor'],
    ['APP_PIPE', { provide: APP_PIPE, useClass: TrimPipe }, 'the global pipe TrimPipe'],
    ['APP_FILTER', { provide: APP_FILTER, useClass: ProblemFilter }, 'the global exception filter ProblemFilter'],
  ])('names a provider registered with %s', async (_, provider, named) => {
    const message = await refusal(await appWith({ providers: [provider] }));
    expect(message).toContain(named);
    expect(message).toMatch(/^The test fast path serves POST \/v1\/chat\/completions outside Express and Nest, so it would skip .*Set TEST_FAST_PATH=false/);
  });

  it('names the enhancers of app.useGlobal*', async () => {
    const app = await appWith({}, (created) => {
      created.useGlobalGuards(new TenantGuard());
      created.useGlobalInterceptors(new AuditInterceptor());
      created.useGlobalPipes(new TrimPipe());
      created.useGlobalFilters(new ProblemFilter());
    });
    const message = await refusal(app);
    for (const named of ['the global guard TenantGuard', 'the global interceptor AuditInterceptor', 'the global pipe TrimPipe', 'the global exception filter ProblemFilter']) {
      expect(message).toContain(named);
    }
  });

  it("names an enhancer on the route's own controller method", async () => {
    class AuditedController extends ChatLikeController {}
    UseInterceptors(AuditInterceptor)(AuditedController);
    const message = await refusal(await appWith(), { ...ROUTE, handler: { controller: AuditedController, method: 'create' } });
    expect(message).toContain('the interceptor AuditInterceptor of AuditedController.create');
  });

  it('names middleware mounted with app.use before the route', async () => {
    expect(await refusal(await appWith({}, (app) => app.use(auditLog)))).toContain('the middleware auditLog');
    expect(await refusal(await appWith({}, (app) => app.use('/v1', auditLog)))).toContain('the middleware auditLog');
  });

  it.each([
    ['every route', (consumer: MiddlewareConsumer) => consumer.apply(TracingMiddleware).forRoutes('*')],
    ['the controller', (consumer: MiddlewareConsumer) => consumer.apply(TracingMiddleware).forRoutes(ChatLikeController)],
    ['the exact path and method', (consumer: MiddlewareConsumer) => consumer.apply(TracingMiddleware).forRoutes({ path: 'v1/chat/completions', method: RequestMethod.POST })],
  ])("names module middleware a MiddlewareConsumer applies to %s", async (_, middleware) => {
    expect(await refusal(await appWith({ middleware }))).toContain("the middleware TracingMiddleware (applied by a module's MiddlewareConsumer)");
  });

  it('leaves out middleware that never runs on the route', async () => {
    const elsewhere = (consumer: MiddlewareConsumer) => consumer.apply(TracingMiddleware).forRoutes('v1/embeddings');
    expect(await refusal(await appWith({ middleware: elsewhere }))).toBeUndefined();
    expect(await refusal(await appWith({}, (app) => app.use('/admin', auditLog)))).toBeUndefined();
  });

  it('leaves out middleware mounted after init: Express runs it after the routes, so never for a route that answers', async () => {
    const app = await appWith();
    app.use(auditLog);
    expect(await refusal(app)).toBeUndefined();
  });
});
