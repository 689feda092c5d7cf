import type { ServerResponse } from 'node:http';
import { RequestMethod, type ArgumentMetadata, type ExceptionFilter, type Type } from '@nestjs/common';
import {
  CUSTOM_ROUTE_ARGS_METADATA,
  EXCEPTION_FILTERS_METADATA,
  FILTER_CATCH_EXCEPTIONS,
  GUARDS_METADATA,
  HEADERS_METADATA,
  HTTP_CODE_METADATA,
  METHOD_METADATA,
  PATH_METADATA,
  REDIRECT_METADATA,
  RENDER_METADATA,
  ROUTE_ARGS_METADATA,
  SSE_METADATA,
  VERSION_METADATA,
} from '@nestjs/common/constants';
import { ExecutionContextHost } from '@nestjs/core/helpers/execution-context-host';
import { appValidationPipe } from '@igw/contracts';
import { ApiKeyAuthenticator } from '../auth/api-key-authenticator';
import { apiKeyRequirementsOf, ApiKeyGuard } from '../auth/api-key.guard';
import type { DirectRoute, DirectRouteContext } from './http-app';
import { jsonDirectRoute } from './json-direct-route';
import { sendJson } from './json-response';
import type { ServedRequest } from './request-context';

export interface ControllerDirectRouteOptions {
  controller: Type;
  /** The controller method (a `@Post`) whose requests the route serves. */
  method: string;
  /** The setting that sends the route's requests through Express and Nest instead: e.g. `DIRECT_ROUTES=false`. */
  turnOff: string;
}

/** Nest's route parameter kinds (RouteParamtypes) a direct route can supply. */
const REQUEST = 0;
const RESPONSE = 1;
const BODY = 3;
const HEADERS = 6;

type ArgumentOf = (request: ServedRequest, response: ServerResponse, body: unknown) => unknown;

interface RouteArgument {
  index: number;
  data?: unknown;
  pipes?: unknown[];
}

/**
 * A controller's `@Post` method served as a JSON direct route, everything read from the
 * method's own metadata so that the two ways of serving it cannot drift apart: its paths,
 * the key requirements of its RequireApiKey, its `@Body()` DTO (validated by the app's global
 * pipe), its `@HttpCode`, and its exception filter (which renders every error, as Nest would
 * have it). The method itself answers: called with the validated body and Node's own request
 * and response for `@Req()` and `@Res()` (the responder must not rely on what Express adds to
 * them), or its returned object sent as JSON.
 *
 * Anything the route could not do as Nest does is refused when the app starts, naming it:
 * parameters other than `@Body()`, `@Req()`, `@Res()` and `@Headers()`, parameter pipes,
 * `@Header`, `@Redirect`, `@Render`, `@Sse`, versions, a filter that does not catch every
 * error; other guards, interceptors and pipes are refused by the app's coverage check
 * (direct-route-coverage.ts). Each refusal says to set `turnOff`.
 */
export function controllerDirectRoute({ app, bodyLimitBytes }: DirectRouteContext, { controller, method, turnOff }: ControllerDirectRouteOptions): DirectRoute {
  const name = `The direct route of ${controller.name}.${method}`;
  const refuse = (what: string) => new Error(`${name} cannot serve ${what} as Nest does: set ${turnOff} to serve it through Express and Nest, or serve it another way.`);
  const handler = (controller.prototype as Record<string, unknown>)[method];
  if (typeof handler !== 'function') throw refuse(`a method it does not have (${method})`);
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

  const argumentsOf = routeArguments(controller, method, refuse);
  const bodyMetadata = argumentsOf.body;
  const answersItself = argumentsOf.answersItself;
  const status = (Reflect.getMetadata(HTTP_CODE_METADATA, handler) as number | undefined) ?? 201;
  const instance = app.get(controller) as Record<string, (...args: unknown[]) => unknown>;
  const validationPipe = appValidationPipe();

  const guards = [...((Reflect.getMetadata(GUARDS_METADATA, controller) as unknown[] | undefined) ?? []), ...((Reflect.getMetadata(GUARDS_METADATA, handler) as unknown[] | undefined) ?? [])];
  const checksKey = guards.includes(ApiKeyGuard);
  const filter = routeFilter(app, controller, handler, refuse);

  return jsonDirectRoute({
    name,
    turnOff,
    paths: routePaths(controller, handler),
    handler: { controller, method },
    // Guards other than ApiKeyGuard, interceptors and pipes of the method are not run: the coverage check refuses them.
    runs: [...(checksKey ? [ApiKeyGuard] : []), ...(filter ? [filter.listed] : [])],
    bodyLimitBytes,
    apiKey: checksKey ? { authenticator: app.get(ApiKeyAuthenticator), requirements: apiKeyRequirementsOf(controller, method) } : undefined,
    sendError: filter ? (request, response, error) => filter.instance.catch(error, new ExecutionContextHost([request, response])) : undefined,
    async respond({ parsed }, request, response) {
      const body = bodyMetadata ? await validationPipe.transform(parsed, bodyMetadata) : parsed;
      const result = await instance[method](...argumentsOf.values.map((argumentOf) => argumentOf(request, response, body)));
      if (answersItself) return;
      if (typeof result !== 'object' || result === null) throw new Error(`${name} answers objects only; ${controller.name}.${method} returned ${typeof result}`);
      sendJson(response, status, result);
    },
  });
}

/** `/` + the controller's path + the method's, for each of either's paths (both may list several). */
function routePaths(controller: Type, handler: object): string[] {
  const list = (value: unknown) => (Array.isArray(value) ? (value as string[]) : [typeof value === 'string' ? value : '']);
  const trim = (path: string) => path.replace(/^\/+|\/+$/g, '');
  return list(Reflect.getMetadata(PATH_METADATA, controller)).flatMap((prefix) =>
    list(Reflect.getMetadata(PATH_METADATA, handler)).map((path) => `/${[trim(prefix), trim(path)].filter(Boolean).join('/')}`),
  );
}

/** The values of the method's parameters, in order, and the metadata the global pipe gets for its body. */
function routeArguments(controller: Type, method: string, refuse: (what: string) => Error): { values: ArgumentOf[]; body?: ArgumentMetadata; answersItself: boolean } {
  const declared = (Reflect.getMetadata(ROUTE_ARGS_METADATA, controller, method) as Record<string, RouteArgument> | undefined) ?? {};
  const types = (Reflect.getMetadata('design:paramtypes', controller.prototype as object, method) as unknown[] | undefined) ?? [];
  const values: ArgumentOf[] = [];
  let body: ArgumentMetadata | undefined;
  let answersItself = false;
  for (const [key, { index, data, pipes }] of Object.entries(declared)) {
    const parameter = `${controller.name}.${method}'s parameter ${index + 1}`;
    if (key.includes(CUSTOM_ROUTE_ARGS_METADATA)) throw refuse(`${parameter} (a custom parameter decorator)`);
    if (pipes && pipes.length > 0) throw refuse(`${parameter} (it has pipes of its own)`);
    const kind = Number(key.split(':')[0]);
    if (kind === BODY && data === undefined) {
      body = { type: 'body', metatype: types[index] as Type | undefined, data: undefined };
      values[index] = (_request, _response, validated) => validated;
    } else if (kind === REQUEST) {
      values[index] = (request) => request;
    } else if (kind === RESPONSE && !(data as { passthrough?: boolean } | undefined)?.passthrough) {
      answersItself = true;
      values[index] = (_request, response) => response;
    } else if (kind === HEADERS) {
      values[index] = (request) => (typeof data === 'string' ? request.headers[data.toLowerCase()] : request.headers);
    } else {
      throw refuse(`${parameter} (only @Body(), @Req(), @Res() and @Headers() are supplied)`);
    }
  }
  if (values.length !== types.length || values.some((value) => value === undefined)) throw refuse(`a parameter of ${controller.name}.${method} without a decorator`);
  return { values, body, answersItself };
}

/**
 * The filter Nest would give the route's errors to (the method's, else the controller's, the
 * last listed first, as Nest tries them), which must catch every error; none when the route
 * has none (the app's global filter then renders them).
 */
function routeFilter(app: DirectRouteContext['app'], controller: Type, handler: object, refuse: (what: string) => Error): { instance: ExceptionFilter; listed: unknown } | undefined {
  const listed = [...((Reflect.getMetadata(EXCEPTION_FILTERS_METADATA, controller) as unknown[] | undefined) ?? []), ...((Reflect.getMetadata(EXCEPTION_FILTERS_METADATA, handler) as unknown[] | undefined) ?? [])];
  const first = listed.at(-1);
  if (first === undefined) return undefined;
  const type = (typeof first === 'function' ? first : (first as object).constructor) as Type<ExceptionFilter>;
  const caught = (Reflect.getMetadata(FILTER_CATCH_EXCEPTIONS, type) as unknown[] | undefined) ?? [];
  if (caught.length > 0) throw refuse(`the errors of a route whose filter ${type.name} catches some errors only`);
  return { instance: typeof first === 'function' ? filterInstance(app, type) : (first as ExceptionFilter), listed: first };
}

function filterInstance(app: DirectRouteContext['app'], type: Type<ExceptionFilter>): ExceptionFilter {
  try {
    return app.get(type, { strict: false });
  } catch {
    // A filter listed by class and not provided anywhere: Nest builds it the same way.
    return new type();
  }
}
