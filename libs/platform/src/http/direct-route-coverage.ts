import type { INestApplication } from '@nestjs/common';
import { EXCEPTION_FILTERS_METADATA, GUARDS_METADATA, INTERCEPTORS_METADATA, PIPES_METADATA } from '@nestjs/common/constants';
import { ApplicationConfig } from '@nestjs/core';

/**
 * What a direct route claims and what it runs of the app's pipeline, so the app can refuse to
 * start when someone added a guard, interceptor, pipe, filter or middleware the route would skip.
 */
export interface DirectRouteCoverage {
  /** Named in the refusal: e.g. `The chat fast path`. */
  name: string;
  /** The setting that sends the route's requests through Express and Nest instead: e.g. `DIRECT_ROUTES=false`. */
  turnOff: string;
  method: 'POST';
  paths: readonly string[];
  /** The controller method that serves the same requests through Nest: its own enhancers count too. */
  handler?: { controller: abstract new (...args: never[]) => unknown; method: string };
  /**
   * Enhancers the route runs itself (classes, instances or middleware functions): the app's own
   * pieces, and any an extension added to the route's code after registering it on the app.
   */
  runs: readonly unknown[];
}

interface ExpressLayer {
  name: string;
  handle: unknown;
  route?: { methods: Record<string, boolean | undefined>; stack: Array<{ handle: unknown }> };
  match(path: string): boolean;
}

interface MiddlewareConfiguration {
  middleware: unknown;
}

const GLOBAL_ENHANCERS: ReadonlyArray<{ kind: string; read: (config: ApplicationConfig) => unknown[] }> = [
  { kind: 'global guard', read: (config) => [...config.getGlobalGuards(), ...config.getGlobalRequestGuards()] },
  { kind: 'global interceptor', read: (config) => [...config.getGlobalInterceptors(), ...config.getGlobalRequestInterceptors()] },
  { kind: 'global pipe', read: (config) => [...config.getGlobalPipes(), ...config.getGlobalRequestPipes()] },
  { kind: 'global exception filter', read: (config) => [...config.getGlobalFilters(), ...config.getGlobalRequestFilters()] },
];

const ROUTE_ENHANCERS = [
  { kind: 'guard', key: GUARDS_METADATA },
  { kind: 'interceptor', key: INTERCEPTORS_METADATA },
  { kind: 'pipe', key: PIPES_METADATA },
  { kind: 'exception filter', key: EXCEPTION_FILTERS_METADATA },
];

/**
 * Throws, naming each one, when the app has enhancers that would not run on a direct route:
 * global guards, interceptors, pipes and filters (`APP_*` providers or `app.useGlobal*`),
 * those on the route's controller method, and Express middleware (`app.use`, a module's
 * `MiddlewareConsumer`) that would run before the route's controller. Call it once the app is
 * initialised (module middleware is mounted then) and before it serves any request.
 */
export function refuseSkippedEnhancers(app: INestApplication, route: DirectRouteCoverage): void {
  const skipped = [...skippedGlobalEnhancers(app, route), ...skippedRouteEnhancers(route), ...skippedMiddleware(app, route)];
  if (skipped.length === 0) return;
  throw new Error(
    `${route.name} serves ${route.method} ${route.paths.join(' and ')} outside Express and Nest, so it would skip ${skipped.join(', ')}. ` +
      `Set ${route.turnOff} to serve these requests through Express and Nest, or run the enhancer in the direct route too and list it in its \`runs\`.`,
  );
}

function skippedGlobalEnhancers(app: INestApplication, route: DirectRouteCoverage): string[] {
  // Nest keeps the global enhancers in the app's ApplicationConfig, which it does not expose.
  const config = (app as unknown as { config?: unknown }).config;
  if (!(config instanceof ApplicationConfig)) {
    throw new Error(`${route.name} cannot read this Nest version's global enhancers to check that it skips none: set ${route.turnOff}.`);
  }
  return GLOBAL_ENHANCERS.flatMap(({ kind, read }) => read(config).filter((enhancer) => !isRun(route, enhancer)).map((enhancer) => `the ${kind} ${nameOf(enhancer)}`));
}

function skippedRouteEnhancers(route: DirectRouteCoverage): string[] {
  if (!route.handler) return [];
  const { controller, method } = route.handler;
  const targets = [controller, (controller.prototype as Record<string, unknown>)[method]];
  return ROUTE_ENHANCERS.flatMap(({ kind, key }) =>
    targets
      .flatMap((target) => (Reflect.getMetadata(key, target as object) as unknown[] | undefined) ?? [])
      .filter((enhancer) => !isRun(route, enhancer))
      .map((enhancer) => `the ${kind} ${nameOf(enhancer)} of ${controller.name}.${method}`),
  );
}

/**
 * The middleware Express holds now: right after the app is created, Nest's adapter's own
 * (its request and response hooks), which every direct route lists in its `runs`.
 */
export function mountedMiddleware(app: INestApplication): unknown[] {
  return expressStack(app)?.map((layer) => layer.handle) ?? [];
}

function expressStack(app: INestApplication): ExpressLayer[] | undefined {
  const stack = (app.getHttpAdapter().getInstance() as { router?: { stack?: unknown } }).router?.stack;
  return Array.isArray(stack) ? (stack as ExpressLayer[]) : undefined;
}

/**
 * Express runs the middleware mounted on a path in order, up to the route that answers. Nest
 * mounts a module's middleware with a wrapper of its own, so those are named by the classes the
 * modules apply (all of them: the wrapper does not say which one it runs).
 */
function skippedMiddleware(app: INestApplication, route: DirectRouteCoverage): string[] {
  const stack = expressStack(app);
  if (!stack) throw new Error(`${route.name} cannot read Express's middleware to check that it skips none: set ${route.turnOff}.`);
  const method = route.method.toLowerCase();
  const skipped = new Set<string>();
  for (const layer of stack) {
    if (!route.paths.some((path) => layer.match(path))) continue;
    if (layer.route && !layer.route.methods[method] && !layer.route.methods._all) continue;
    // Nest mounts a module's middleware for a controller or an exact path as an Express route:
    // its function is Nest's `handler`, where a controller method's is named `Controller.method`.
    const handlers = layer.route ? layer.route.stack.map((routeLayer) => routeLayer.handle) : [layer.handle];
    if (layer.route && !handlers.some(isModuleMiddleware)) break;
    for (const handle of handlers) {
      if (isRun(route, handle)) continue;
      skipped.add(isModuleMiddleware(handle) ? `the middleware ${moduleMiddlewareNames(app)} (applied by a module's MiddlewareConsumer)` : `the middleware ${nameOf(handle)}`);
    }
  }
  return [...skipped];
}

function isModuleMiddleware(handle: unknown): boolean {
  return typeof handle === 'function' && handle.name === 'handler';
}

function moduleMiddlewareNames(app: INestApplication): string {
  const container = (app as unknown as { middlewareContainer?: { getConfigurations?: () => Map<string, Set<MiddlewareConfiguration>> } }).middlewareContainer;
  const configurations = container?.getConfigurations?.() ?? new Map<string, Set<MiddlewareConfiguration>>();
  const names = [...configurations.values()].flatMap((set) => [...set]).flatMap((configuration) => [configuration.middleware].flat().map(nameOf));
  return names.length > 0 ? [...new Set(names)].join(' or ') : '(unnamed)';
}

function isRun(route: DirectRouteCoverage, enhancer: unknown): boolean {
  const instance = unwrapped(enhancer);
  return route.runs.some((known) => known === instance || (typeof known === 'function' && typeof known.prototype === 'object' && instance instanceof known));
}

/** A request-scoped `APP_*` provider arrives as Nest's InstanceWrapper: its class stands for it. */
function unwrapped(enhancer: unknown): unknown {
  if (enhancer && typeof enhancer === 'object' && 'isDependencyTreeStatic' in enhancer) return (enhancer as { metatype?: unknown }).metatype;
  return enhancer;
}

function nameOf(enhancer: unknown): string {
  const instance = unwrapped(enhancer);
  if (typeof instance === 'function') return instance.name || '(anonymous)';
  if (instance && typeof instance === 'object') return instance.constructor.name;
  return String(instance);
}
