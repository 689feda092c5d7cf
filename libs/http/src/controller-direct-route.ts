import type { ServerResponse } from 'node:http';
import { RequestMethod, Scope, type ArgumentMetadata, type INestApplication, type PipeTransform, type Type } from '@nestjs/common';
import { GUARDS_METADATA, HEADERS_METADATA, HTTP_CODE_METADATA, METHOD_METADATA, PIPES_METADATA, PATH_METADATA, REDIRECT_METADATA, RENDER_METADATA, ROUTE_ARGS_METADATA, SSE_METADATA, VERSION_METADATA } from '@nestjs/common/constants';
import { RouteParamtypes } from '@nestjs/common/enums/route-paramtypes.enum';
import { DiscoveryService, ExternalContextCreator, MetadataScanner, ModuleRef, ModulesContainer } from '@nestjs/core';
import { sendErrorResponse } from './errors/all-exceptions.filter';
import { claimsJsonRequest, pathMatcher } from './json-direct-route';
import { sendJson } from './json-response';
import { startRequestContext, type ServedRequest } from './request-context';

/**
 * Marks a controller's `@Post` method whose JSON requests are also served straight from Node's
 * server (when the app serves direct routes): Express's routing and `req`/`res` decoration are
 * skipped, while Nest's own guards, interceptors, pipes and filters of the method, the app's
 * global ones included, run as on any route (through Nest's ExternalContextCreator). The
 * method's `@Req()` and `@Res()` are then Node's IncomingMessage and ServerResponse, so they
 * must be typed as such (ServedRequest, ServerResponse): nothing Express adds is there.
 */
export const DirectRoute = DiscoveryService.createDecorator<void>();

/** A route served straight from Node's server, ahead of Express. */
export interface NodeRoute {
  /** Named in a refusal: e.g. `The direct route of ChatController.create`. */
  name: string;
  paths: readonly string[];
  /** Serves the request and returns true; or returns false, having read nothing, to leave it to Express. */
  serve(request: ServedRequest, response: ServerResponse): boolean;
}

export interface DirectRouteOptions {
  bodyLimitBytes: number;
  /** The setting that sends the direct routes' requests through Express and Nest instead: e.g. `DIRECT_ROUTES=false`. */
  turnOff: string;
}

/** Every `@DirectRoute()` method of the app's controllers, as a route served from Node's server. */
export function discoverDirectRoutes(app: INestApplication, options: DirectRouteOptions): NodeRoute[] {
  const modules = app.get(ModulesContainer);
  const discovery = new DiscoveryService(modules);
  const contextCreator = controllerContextCreator(app.get(ExternalContextCreator), modules);
  const scanner = new MetadataScanner();
  const moduleRef = app.get(ModuleRef);
  const routes: NodeRoute[] = [];
  for (const wrapper of discovery.getControllers()) {
    const instance = wrapper.instance as Record<string, unknown> | undefined;
    if (!instance || typeof instance !== 'object') continue;
    for (const method of scanner.getAllMethodNames(Object.getPrototypeOf(instance) as object)) {
      if (discovery.getMetadataByDecorator(DirectRoute, wrapper, method) === undefined) continue;
      routes.push(controllerDirectRoute(contextCreator, moduleRef, instance, method, options));
    }
  }
  if (routes.length > 0) refuseModuleMiddleware(modules, routes, options.turnOff);
  return routes;
}

/**
 * Express runs a module's middleware (its MiddlewareConsumer) before the routes it applies to,
 * which a direct route cannot: an app whose modules apply any serves no direct route. (Middleware
 * added with `app.use` after the app started is mounted after Nest's routes, so no route runs it.)
 */
function refuseModuleMiddleware(modules: ModulesContainer, routes: NodeRoute[], turnOff: string): void {
  const configuring = [...modules.values()].map((module) => module.metatype as Type | undefined).filter((metatype) => typeof (metatype?.prototype as { configure?: unknown } | undefined)?.configure === 'function');
  if (configuring.length === 0) return;
  throw new Error(
    `${routes.map((route) => route.name).join(', ')} ${routes.length === 1 ? 'serves requests outside Express, so it' : 'serve requests outside Express, so they'} would skip the middleware that ${configuring.map((metatype) => metatype!.name).join(' and ')} apply (configure(consumer)). ` +
      `Set ${turnOff} to serve these requests through Express and Nest, or make the middleware a guard or an interceptor.`,
  );
}

/**
 * Nest's ExternalContextCreator finds the module whose enhancers (the guards, interceptors,
 * pipes and filters listed by class) it resolves among the modules' providers, where a
 * controller is not: this one finds a controller's module among the modules' controllers
 * (through its public getContextModuleKey), and says whether it was asked, so that a Nest version
 * that finds modules another way refuses to start rather than skip the route's enhancers.
 */
function controllerContextCreator(creator: ExternalContextCreator, modules: ModulesContainer): RouteContextCreator {
  const controllerCreator = Object.create(creator) as RouteContextCreator;
  controllerCreator.askedForModule = false;
  controllerCreator.getContextModuleKey = (classRef) => {
    controllerCreator.askedForModule = true;
    for (const [key, module] of modules.entries()) if (classRef && module.controllers.has(classRef)) return key;
    return '';
  };
  controllerCreator.createPipesFn = routerPipes;
  return controllerCreator;
}

/**
 * Nest resolves a route's guards and pipes once, outside any request: one that is
 * request-scoped or transient (by its own scope or a dependency's) would run there as an
 * instance whose constructor never ran, so a direct route with one refuses to start.
 */
function refuseScopedEnhancers(moduleRef: ModuleRef, controller: Type, handler: object, method: string, refuse: (what: string) => Error): void {
  const declared: unknown[] = [];
  for (const key of [GUARDS_METADATA, PIPES_METADATA]) for (const target of [controller, handler]) declared.push(...((Reflect.getMetadata(key, target) as unknown[] | undefined) ?? []));
  const parameters = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) as Record<string, { pipes?: unknown[] }> | undefined) ?? {};
  for (const { pipes } of Object.values(parameters)) declared.push(...(pipes ?? []));
  for (const enhancer of declared) {
    // An instance (`UseGuards(new Guard())`) is the one every request gets.
    if (typeof enhancer !== 'function') continue;
    if (moduleRef.introspect(enhancer as Type).scope === Scope.DEFAULT) continue;
    throw refuse(`a request with its ${(enhancer as Type).name} (request-scoped or transient: Nest has no instance of it outside a request)`);
  }
}

type PipedParameter = Parameters<ExternalContextCreator['createPipesFn']>[1][number];

/**
 * The pipes of a route's parameters, run as Nest's router runs them for Express: on `@Body()`
 * and custom parameters only (RouterExecutionContext.isPipeable), never on `@Req()`, `@Res()`
 * or `@Headers()`, and one after the other without a promise for a pipe that answers at once.
 * (ExternalContextCreator's own runs every pipe of the route on every parameter, the request and
 * the response too, each behind promises, which a small request pays for in CPU.)
 */
function routerPipes(routePipes: PipeTransform[], parameters: PipedParameter[]): ReturnType<ExternalContextCreator['createPipesFn']> {
  if (parameters.length === 0) return null;
  const plan = parameters.map((parameter) => {
    const custom = typeof parameter.type === 'string';
    const piped = custom || parameter.type === RouteParamtypes.BODY;
    const metadata: ArgumentMetadata = { type: custom ? 'custom' : 'body', metatype: parameter.metatype as ArgumentMetadata['metatype'], data: parameter.data as string | undefined };
    return { index: parameter.index, extractValue: parameter.extractValue, metadata, pipes: piped ? routePipes.concat(parameter.pipes) : [] };
  });
  return async (args, ...params) => {
    for (const { index, extractValue, metadata, pipes } of plan) {
      let value: unknown = extractValue(...params);
      for (const pipe of pipes) {
        value = pipe.transform(isPromise(value) ? await value : value, metadata);
      }
      args[index] = isPromise(value) ? await value : value;
    }
  };
}

const isPromise = (value: unknown): value is PromiseLike<unknown> => typeof (value as PromiseLike<unknown> | null)?.then === 'function';

/** ExternalContextCreator, telling whether it looked for the module of the last route it created. */
type RouteContextCreator = ExternalContextCreator & { askedForModule: boolean };

type ParamsFactory = Parameters<ExternalContextCreator['create']>[4];

/** The values of the parameters a direct route supplies, from Node's request and response. */
const nodeParams: NonNullable<ParamsFactory> = {
  exchangeKeyForValue(type: number, data: unknown, [request, response]: [ServedRequest & { body?: unknown }, ServerResponse]) {
    switch (type as RouteParamtypes) {
      case RouteParamtypes.REQUEST:
        return request;
      case RouteParamtypes.RESPONSE:
        return response;
      case RouteParamtypes.BODY:
        return typeof data === 'string' ? (request.body as Record<string, unknown> | undefined)?.[data] : request.body;
      case RouteParamtypes.HEADERS:
        return typeof data === 'string' ? request.headers[data.toLowerCase()] : request.headers;
      default:
        return undefined;
    }
  },
} as NonNullable<ParamsFactory>;

const SUPPLIED = new Set([RouteParamtypes.REQUEST, RouteParamtypes.RESPONSE, RouteParamtypes.BODY, RouteParamtypes.HEADERS]);

/**
 * A controller's `@DirectRoute()` method served from Node's server: its paths and `@HttpCode`
 * read from its own metadata, its guards, interceptors, pipes and filters (the app's global ones
 * too) run by Nest's ExternalContextCreator, so the two ways of serving it cannot drift apart.
 * What the route could not do as Express would (parameters other than `@Body()`, `@Req()`,
 * `@Res()`, `@Headers()` and custom ones, `@Header`, `@Redirect`, `@Render`, `@Sse`, versions)
 * is refused when the app starts, naming it.
 */
function controllerDirectRoute(contextCreator: RouteContextCreator, moduleRef: ModuleRef, instance: Record<string, unknown>, method: string, { bodyLimitBytes, turnOff }: DirectRouteOptions): NodeRoute {
  const controller = instance.constructor as Type;
  const name = `The direct route of ${controller.name}.${method}`;
  const refuse = (what: string) => new Error(`${name} cannot serve ${what} as Express does: set ${turnOff} to serve it through Express and Nest, or remove @DirectRoute().`);
  const handler = instance[method] as (...args: unknown[]) => unknown;
  if (Reflect.getMetadata(METHOD_METADATA, handler) !== RequestMethod.POST) throw refuse('a method that is not a @Post route');
  for (const [key, what] of [
    [HEADERS_METADATA, '@Header()'],
    [REDIRECT_METADATA, '@Redirect()'],
    [RENDER_METADATA, '@Render()'],
    [SSE_METADATA, '@Sse()'],
    [VERSION_METADATA, 'a route version'],
  ] as const) {
    if (Reflect.getMetadata(key, handler) !== undefined || (key === VERSION_METADATA && Reflect.getMetadata(key, controller) !== undefined)) throw refuse(`a route with ${what}`);
  }
  const answersItself = checkParameters(controller, method, refuse);
  const status = (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ?? 201;
  const paths = routePaths(controller, handler);
  const claimed = pathMatcher(paths);
  contextCreator.askedForModule = false;
  const run = contextCreator.create(instance, handler, method, ROUTE_ARGS_METADATA, nodeParams, undefined, undefined, undefined, 'http') as (request: ServedRequest, response: ServerResponse) => Promise<unknown>;
  if (!contextCreator.askedForModule) throw refuse("the guards, interceptors, pipes and filters of its controller's module, which this Nest version's ExternalContextCreator finds another way");
  refuseScopedEnhancers(moduleRef, controller, handler, method, refuse);

  async function serve(request: ServedRequest, response: ServerResponse): Promise<void> {
    startRequestContext(request, response);
    try {
      // Errors are rendered by the route's filters inside `run`; it then returns what they return.
      const result = await run(request, response);
      if (answersItself || response.headersSent || response.writableEnded) return;
      if (typeof result !== 'object' || result === null) throw new Error(`${name} answers objects only; ${controller.name}.${method} returned ${typeof result}`);
      sendJson(response, status, result);
    } catch (error) {
      sendErrorResponse(request, response, error);
    }
  }

  return {
    name,
    paths,
    serve(request, response) {
      if (!claimsJsonRequest(request, claimed, bodyLimitBytes)) return false;
      void serve(request, response);
      return true;
    },
  };
}

/** `/` + the controller's path + the method's, for each of either's paths (both may list several). */
function routePaths(controller: Type, handler: object): string[] {
  const list = (value: unknown) => (Array.isArray(value) ? (value as string[]) : [typeof value === 'string' ? value : '']);
  const trim = (path: string) => path.replace(/^\/+|\/+$/g, '');
  return list(Reflect.getMetadata(PATH_METADATA, controller)).flatMap((prefix) =>
    list(Reflect.getMetadata(PATH_METADATA, handler)).map((path) => `/${[trim(prefix), trim(path)].filter(Boolean).join('/')}`),
  );
}

/** Refuses parameters the route cannot supply; true when the method answers through `@Res()` itself. */
function checkParameters(controller: Type, method: string, refuse: (what: string) => Error): boolean {
  const declared = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) as Record<string, { index: number; data?: unknown }> | undefined) ?? {};
  const types = (Reflect.getMetadata('design:paramtypes', controller.prototype as object, method) as unknown[] | undefined) ?? [];
  const decorated = new Set<number>();
  let answersItself = false;
  for (const [key, { index, data }] of Object.entries(declared)) {
    decorated.add(index);
    const [kind] = key.split(':');
    if (kind !== String(Number(kind))) continue; // a custom parameter decorator: Nest's context creator supplies it
    const type = Number(kind) as RouteParamtypes;
    if (!SUPPLIED.has(type)) throw refuse(`${controller.name}.${method}'s parameter ${index + 1} (only @Body(), @Req(), @Res(), @Headers() and custom ones are supplied)`);
    if (type === RouteParamtypes.RESPONSE) {
      if ((data as { passthrough?: boolean } | undefined)?.passthrough) throw refuse(`${controller.name}.${method}'s parameter ${index + 1} (@Res({ passthrough: true }))`);
      answersItself = true;
    }
  }
  if (types.some((_type, index) => !decorated.has(index))) throw refuse(`a parameter of ${controller.name}.${method} without a decorator`);
  return answersItself;
}
