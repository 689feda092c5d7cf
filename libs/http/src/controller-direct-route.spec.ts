import type { ServerResponse } from 'node:http';
import { Body, Catch, Controller, Headers, HttpCode, Injectable, Module, Post, Query, Req, Res, Scope, UseFilters, UseGuards, UseInterceptors, UsePipes, type ArgumentMetadata, type ArgumentsHost, type CallHandler, type CanActivate, type ExceptionFilter, type ExecutionContext, type INestApplication, type MiddlewareConsumer, type NestInterceptor, type PipeTransform, type Type } from '@nestjs/common';
import { APP_GUARD } from '@nestjs/core';
import { IsInt, IsString, Max } from 'class-validator';
import { ACTIVE_PAID_KEY } from '@igw/contracts/testing';
import { generateApiKey } from './auth/api-key';
import { ApiKeyAuthenticator } from './auth/api-key-authenticator';
import { RequireApiKey } from './auth/api-key.guard';
import { sendErrorResponse } from './errors/all-exceptions.filter';
import { GatewayException } from './errors/gateway.exception';
import { DirectRoute } from './controller-direct-route';
import { startHttpApp } from './http-app';
import type { DirectRequest, ServedRequest } from './request-context';


class GreetingDto {
  @IsString() name!: string;
  @IsInt() @Max(3) times!: number;
}

/** Renders every error in another API's shape, as the Messages API's filter does. */
@Catch()
class ShapedErrors implements ExceptionFilter {
  catch(exception: unknown, host: ArgumentsHost): void {
    const http = host.switchToHttp();
    sendErrorResponse(http.getRequest<ServedRequest>(), http.getResponse(), exception, (body) => ({ type: 'error', error: { message: body.message }, status: body.statusCode }));
  }
}

/** Express sets `request.route` when it routes a request: absent, the direct route served it. */
const servedBy = (request: DirectRequest) => ((request as DirectRequest & { route?: unknown }).route === undefined ? 'direct' : 'express');

@Controller('v1')
class GreetingController {
  @DirectRoute()
  @Post('greetings')
  @HttpCode(200)
  @RequireApiKey({ credits: true, xApiKeyHeader: true })
  greet(@Body() body: GreetingDto, @Req() request: DirectRequest, @Headers('x-tone') tone: string | undefined) {
    if (body.name === 'nobody') throw new GatewayException(404, 'Nobody to greet.');
    return { greeting: `${tone ?? 'hello'} ${body.name}`.repeat(body.times), servedBy: servedBy(request), instance: body instanceof GreetingDto };
  }

  @DirectRoute()
  @Post(['greetings/stream', 'stream'])
  @RequireApiKey()
  @UseFilters(ShapedErrors)
  stream(@Body() body: GreetingDto, @Req() request: DirectRequest, @Res() response: ServerResponse): void {
    if (body.name === 'nobody') throw new GatewayException(404, 'Nobody to greet.');
    response.statusCode = 200;
    response.setHeader('content-type', 'text/event-stream');
    response.write(`data: ${body.name}\n\n`);
    response.end(`data: ${servedBy(request)}\n\n`);
  }
}

function startApp(controller: Type, extra: { providers?: unknown[]; configure?: (consumer: MiddlewareConsumer) => void } = {}): Promise<INestApplication> {
  class TestModule {}
  if (extra.configure) Object.assign(TestModule.prototype, { configure: extra.configure });
  Module({ controllers: [controller], providers: [{ provide: ApiKeyAuthenticator, useValue: { authenticate: () => Promise.resolve(ACTIVE_PAID_KEY) } }, ...((extra.providers ?? []) as [])] })(TestModule);
  return startHttpApp(TestModule, { name: 'test', host: '127.0.0.1', port: 0, portVariable: 'PORT', bodyLimit: '1kb', logLevel: 'error', directRoutes: { turnOff: 'TEST_ROUTES=false' } });
}

describe('a @DirectRoute() controller method', () => {
  const key = generateApiKey().key;
  let app: INestApplication;
  let base: string;

  beforeAll(async () => {
    app = await startApp(GreetingController);
    base = await app.getUrl();
  });

  afterAll(() => app.close());

  const post = async (path: string, body: string, headers: Record<string, string> = {}, contentType = 'application/json') => {
    const response = await fetch(`${base}${path}`, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': contentType, ...headers }, body });
    const text = await response.text();
    return { status: response.status, type: response.headers.get('content-type'), requestId: response.headers.get('x-request-id'), text };
  };
  /** The same request served directly (application/json) and by Express (another JSON type). */
  const both = async (path: string, body: string, headers: Record<string, string> = {}) => ({ direct: await post(path, body, headers), express: await post(path, body, headers, 'application/vnd.test+json') });
  const withoutVarying = (answer: { text: string; requestId: string | null }) =>
    answer.text.replaceAll(answer.requestId ?? '-', '<id>').replace(/"timestamp":"[^"]+"/, '"timestamp":"<time>"').replace(/direct|express/g, '<served>');

  it('serves the method from its metadata: its paths, query strings, status, validated body, headers', async () => {
    const { direct, express } = await both('/v1/greetings?beta=true', JSON.stringify({ name: 'Ada', times: 2 }), { 'x-tone': 'hi' });
    expect(JSON.parse(direct.text)).toEqual({ greeting: 'hi Adahi Ada', servedBy: 'direct', instance: true });
    expect(JSON.parse(express.text)).toEqual({ greeting: 'hi Adahi Ada', servedBy: 'express', instance: true });
    expect([direct.status, direct.type]).toEqual([express.status, express.type]);
    expect(direct.status).toBe(200);
    for (const path of ['/v1/greetings/stream', '/v1/stream']) {
      const streamed = await both(path, JSON.stringify({ name: 'Ada', times: 1 }));
      expect(streamed.direct).toMatchObject({ status: 200, type: 'text/event-stream', text: 'data: Ada\n\ndata: direct\n\n' });
      expect(streamed.express).toMatchObject({ status: 200, type: 'text/event-stream', text: 'data: Ada\n\ndata: express\n\n' });
    }
  });

  it.each([
    ['an invalid body', '/v1/greetings', JSON.stringify({ name: 'Ada', times: 9 }), 400],
    ['malformed JSON', '/v1/greetings', '{"name": ', 400],
    ["the method's own error", '/v1/greetings', JSON.stringify({ name: 'nobody', times: 1 }), 404],
    ['an invalid body, in the filter’s shape', '/v1/stream', JSON.stringify({ name: 7, times: 1 }), 400],
    ["the method's own error, in the filter's shape", '/v1/stream?x=1', JSON.stringify({ name: 'nobody', times: 1 }), 404],
  ])('answers %s alike', async (_, path, body, status) => {
    const { direct, express } = await both(path, body);
    expect(direct.status).toBe(status);
    expect(withoutVarying(direct)).toBe(withoutVarying(express));
    expect([direct.status, direct.type]).toEqual([express.status, express.type]);
    if (path.startsWith('/v1/stream')) expect(JSON.parse(direct.text)).toMatchObject({ type: 'error', status });
  });

  it('checks the key as the route requires it: x-api-key where RequireApiKey allows it, refused in the filter’s shape', async () => {
    const body = JSON.stringify({ name: 'Ada', times: 1 });
    const noBearer = async (path: string, contentType?: string) => {
      const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'x-api-key': key, 'content-type': contentType ?? 'application/json' }, body });
      return { status: response.status, requestId: response.headers.get('x-request-id'), text: await response.text() };
    };
    expect((await noBearer('/v1/greetings')).status).toBe(200);
    const [direct, express] = [await noBearer('/v1/stream'), await noBearer('/v1/stream', 'application/vnd.test+json')];
    expect(direct.status).toBe(401);
    expect(JSON.parse(direct.text)).toMatchObject({ type: 'error', status: 401 });
    expect(withoutVarying(direct)).toBe(withoutVarying(express));
  });

  it('leaves a request it is not sure of to Express, unread', async () => {
    const chunked = await fetch(`${base}/v1/greetings`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: new Blob([JSON.stringify({ name: 'Ada', times: 1 })]).stream(),
      duplex: 'half',
    } as RequestInit);
    expect(await chunked.json()).toMatchObject({ servedBy: 'express' });
    expect((await post('/v1/greetings', JSON.stringify({ name: 'x'.repeat(2000), times: 1 }))).status).toBe(413);
  });

  const seen: string[] = [];

  @Injectable()
  class TenantGuard implements CanActivate {
    canActivate(context: ExecutionContext): boolean {
      seen.push(`guard ${servedBy(context.switchToHttp().getRequest<DirectRequest>())}`);
      return context.switchToHttp().getRequest<DirectRequest>().headers['x-tenant'] !== 'banned';
    }
  }

  class Spy implements NestInterceptor {
    intercept(context: ExecutionContext, next: CallHandler) {
      seen.push(`interceptor ${servedBy(context.switchToHttp().getRequest<DirectRequest>())}`);
      return next.handle();
    }
  }

  /** Renders the method's own errors only; the global filter renders the rest. */
  @Catch(GatewayException)
  class TeapotErrors implements ExceptionFilter {
    catch(_exception: unknown, host: ArgumentsHost): void {
      const response = host.switchToHttp().getResponse<ServerResponse>();
      response.statusCode = 418;
      response.end('teapot');
    }
  }

  @Controller()
  class ExtendedController {
    @DirectRoute()
    @Post('intercepted')
    @UseInterceptors(Spy)
    @UseFilters(TeapotErrors)
    intercepted(@Body() body: GreetingDto, @Req() request: DirectRequest) {
      if (body.name === 'nobody') throw new GatewayException(404, 'Nobody to greet.');
      return { name: body.name, servedBy: servedBy(request) };
    }
  }

  it("runs the app's guards, interceptors and filters on the direct path as Nest does on its own", async () => {
    const extended = await startApp(ExtendedController, { providers: [{ provide: APP_GUARD, useClass: TenantGuard }] });
    try {
      const url = `${await extended.getUrl()}/intercepted`;
      const send = (body: object, headers: Record<string, string> = {}) => fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
      seen.length = 0;
      expect(await (await send({ name: 'Ada', times: 1 })).json()).toEqual({ name: 'Ada', servedBy: 'direct' });
      expect(seen).toEqual(['guard direct', 'interceptor direct']);
      expect((await send({ name: 'Ada', times: 1 }, { 'x-tenant': 'banned' })).status).toBe(403);
      const teapot = await send({ name: 'nobody', times: 1 });
      expect([teapot.status, await teapot.text()]).toEqual([418, 'teapot']);
      seen.length = 0;
      // Another JSON type: the same method through Express and Nest.
      expect(await (await send({ name: 'Ada', times: 1 }, { 'content-type': 'application/vnd.test+json' })).json()).toEqual({ name: 'Ada', servedBy: 'express' });
      expect(seen).toEqual(['guard express', 'interceptor express']);
    } finally {
      await extended.close();
    }
  });

  @Controller()
  class QueryController {
    @DirectRoute()
    @Post('query')
    query(@Query('tone') tone: string) {
      return { tone };
    }
  }

  it('refuses to start with a parameter it cannot supply, naming it and the setting', async () => {
    await expect(startApp(QueryController)).rejects.toThrow(
      /^The direct route of QueryController\.query cannot serve QueryController\.query's parameter 1 \(only @Body\(\), @Req\(\), @Res\(\), @Headers\(\) and custom ones are supplied\) as Express does: set TEST_ROUTES=false/,
    );
  });

  /** Writes down each parameter a pipe is given, with the path that served the request. */
  class PipeSpy implements PipeTransform {
    transform(value: unknown, metadata: ArgumentMetadata): unknown {
      seen.push(`${metadata.type}${metadata.data ? ` ${metadata.data}` : ''}`);
      return value;
    }
  }

  @Controller()
  @UsePipes(PipeSpy)
  class PipedController {
    @DirectRoute()
    @Post('piped')
    @HttpCode(200)
    piped(@Body() body: GreetingDto, @Body('name') name: string, @Req() request: DirectRequest, @Headers('x-tone') tone: string | undefined) {
      return { name, tone: tone ?? null, times: body.times, servedBy: servedBy(request) };
    }
  }

  it("gives a route's pipes the parameters Nest's router gives them on Express: the body's, not the request, the response or the headers", async () => {
    const piped = await startApp(PipedController, { providers: [PipeSpy] });
    try {
      const url = `${await piped.getUrl()}/piped`;
      const answers: unknown[] = [];
      const pipesSaw: string[][] = [];
      for (const type of ['application/json', 'application/vnd.test+json']) {
        seen.length = 0;
        answers.push(await (await fetch(url, { method: 'POST', headers: { 'content-type': type, 'x-tone': 'hi' }, body: JSON.stringify({ name: 'Ada', times: 2 }) })).json());
        pipesSaw.push([...seen].sort());
      }
      expect(answers).toEqual([
        { name: 'Ada', tone: 'hi', times: 2, servedBy: 'direct' },
        { name: 'Ada', tone: 'hi', times: 2, servedBy: 'express' },
      ]);
      expect(pipesSaw[0]).toEqual(['body', 'body name']);
      expect(pipesSaw[1]).toEqual(pipesSaw[0]);
    } finally {
      await piped.close();
    }
  });

  @Injectable({ scope: Scope.REQUEST })
  class PerRequestGuard implements CanActivate {
    canActivate(): boolean {
      return true;
    }
  }

  @Controller()
  class ScopedController {
    @DirectRoute()
    @Post('scoped')
    @UseGuards(PerRequestGuard)
    scoped(@Body() body: GreetingDto) {
      return { name: body.name };
    }
  }

  it('refuses to start with a request-scoped guard, which Nest would leave out of the route', async () => {
    await expect(startApp(ScopedController, { providers: [PerRequestGuard] })).rejects.toThrow(
      /^The direct route of ScopedController\.scoped cannot serve a request with its PerRequestGuard \(request-scoped or transient: Nest has no instance of it outside a request\) as Express does: set TEST_ROUTES=false/,
    );
  });

  it("refuses to start when a module applies middleware, which the direct route would skip", async () => {
    const configure = (consumer: MiddlewareConsumer) => consumer.apply((_request: unknown, _response: unknown, next: () => void) => next()).forRoutes('*path');
    await expect(startApp(ExtendedController, { configure })).rejects.toThrow(/^The direct route of ExtendedController\.intercepted serves requests outside Express, so it would skip the middleware that TestModule apply \(configure\(consumer\)\)\. Set TEST_ROUTES=false/);
  });
});
