import { applyDecorators, CanActivate, ExecutionContext, HttpStatus, Injectable, SetMetadata } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ErrorMessages, type AuthenticatedKey } from '@igw/contracts';
import type { Request } from 'express';
import { GatewayException } from '../errors/gateway.exception';
import { UseCredentialGuard } from '../body-parsing';
import type { ServedRequest } from '../request-context';
import { API_KEY_ERRORS, ApiErrorResponses } from '../swagger';
import { isWellFormedApiKey } from './api-key';
import { ApiKeyAuthenticator } from './api-key-authenticator';

export interface ApiKeyRequirements {
  /**
   * A paid endpoint: a suspended account gets 403 here. Its credits are checked (403 when
   * nothing is left) when the service admits the request, together with the rate limits,
   * because only then is the request's cost ceiling known.
   */
  credits: boolean;
  /**
   * A route that costs nothing but serves only an active account (reading or deleting what a
   * key stored): a suspended account gets its 403 here too.
   */
  active?: boolean;
  /** Also accept the key in the `Api-Key` header (the Azure-style path). */
  apiKeyHeader?: boolean;
  /** Also accept the key in the `X-Api-Key` header (the Anthropic-style Messages API); a 401 names that header. */
  xApiKeyHeader?: boolean;
  /** Also accept the key in the `X-Goog-Api-Key` header or the `key` query parameter (Google's Generative Language API); a 401 names that header. */
  googApiKeyHeader?: boolean;
}

const API_KEY_REQUIREMENTS = 'igw:api-key-requirements';

@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly reflector: Reflector,
  ) {}

  /** Route metadata never changes at run time: read once per controller method, not once per request. */
  private readonly requirementsByRoute = new WeakMap<object, WeakMap<object, ApiKeyRequirements>>();

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<Request>();
    request.context.auth = await authenticateRequest(this.authenticator, request, this.requirementsOf(context));
    return true;
  }

  private requirementsOf(context: ExecutionContext): ApiKeyRequirements {
    const handler = context.getHandler();
    const controller = context.getClass();
    let byHandler = this.requirementsByRoute.get(controller);
    if (!byHandler) this.requirementsByRoute.set(controller, (byHandler = new WeakMap()));
    let requirements = byHandler.get(handler);
    if (!requirements) {
      requirements = requirementsOfRoute(this.reflector.getAllAndOverride<ApiKeyRequirements | undefined>(API_KEY_REQUIREMENTS, [handler, controller]));
      byHandler.set(handler, requirements);
    }
    return requirements;
  }
}

const requirementsOfRoute = (declared: ApiKeyRequirements | undefined): ApiKeyRequirements => declared ?? { credits: true };

/** The caller's key, accepted, or the 401/403 that says why not. */
export async function authenticateRequest(authenticator: ApiKeyAuthenticator, request: ServedRequest, requirements: ApiKeyRequirements): Promise<AuthenticatedKey> {
  const presented = presentedKey(request, requirements);
  // A key that cannot be one of ours is refused here, before any hash, cache entry or look-up.
  const auth = presented && isWellFormedApiKey(presented) ? await authenticator.authenticate(presented, request) : null;
  if (!auth) throw new GatewayException(HttpStatus.UNAUTHORIZED, missingKeyMessage(requirements));
  const expiresAt = auth.rules?.expiresAt;
  if (expiresAt !== undefined && Date.parse(expiresAt) <= Date.now()) {
    throw new GatewayException(HttpStatus.UNAUTHORIZED, `Unauthorized: this API key expired at ${expiresAt} (the key's expiry rule). Ask an administrator for a new key or a later expiry.`);
  }
  if ((requirements.credits || requirements.active) && auth.status === 'suspended') {
    throw new GatewayException(HttpStatus.FORBIDDEN, ErrorMessages.accountSuspended);
  }
  return auth;
}

function presentedKey(request: ServedRequest, requirements: ApiKeyRequirements): string | undefined {
  const authorization = request.headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  if (requirements.apiKeyHeader) return headerKey(request.headers['api-key']);
  if (requirements.xApiKeyHeader) return headerKey(request.headers['x-api-key']);
  if (requirements.googApiKeyHeader) return headerKey(request.headers['x-goog-api-key']) ?? queryKey(request.url);
  return undefined;
}

/** The 401 names the header the route's own clients send (the spec's Bearer wording elsewhere). */
function missingKeyMessage(requirements: ApiKeyRequirements): string {
  if (requirements.xApiKeyHeader) return ErrorMessages.invalidApiKeyIn('x-api-key: <API_KEY>');
  if (requirements.googApiKeyHeader) return ErrorMessages.invalidApiKeyIn('x-goog-api-key: <API_KEY>', 'or as ?key=<API_KEY>');
  return ErrorMessages.invalidApiKey;
}

/** `?key=` of the request's URL (Google's clients' other placement); never logged, the access log records the route only. */
function queryKey(url: string | undefined): string | undefined {
  const queryAt = url?.indexOf('?') ?? -1;
  if (queryAt === -1 || !url!.includes('key=', queryAt)) return undefined;
  return headerKey(new URLSearchParams(url!.slice(queryAt + 1)).get('key') ?? undefined);
}

function headerKey(header: string | string[] | undefined): string | undefined {
  return typeof header === 'string' && header.trim() ? header.trim() : undefined;
}

/** Marks a route as needing an API key (and, by default, credits), checked before its body is read. */
export function RequireApiKey(requirements: ApiKeyRequirements = { credits: true }) {
  return applyDecorators(
    SetMetadata(API_KEY_REQUIREMENTS, requirements),
    UseCredentialGuard(ApiKeyGuard),
    ApiBearerAuth(),
    ApiErrorResponses(requirements.credits ? API_KEY_ERRORS : requirements.active ? { 401: API_KEY_ERRORS[401], 403: API_KEY_ERRORS[403] } : { 401: API_KEY_ERRORS[401] }),
  );
}
