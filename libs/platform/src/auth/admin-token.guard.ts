import { applyDecorators, CanActivate, ExecutionContext, HttpStatus, Inject, Injectable, Optional, UseGuards } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ErrorMessages } from '@igw/contracts';
import type { Request } from 'express';
import { GatewayException } from '../errors/gateway.exception';
import { ADMIN_SCHEME, ApiErrorResponses } from '../http/swagger';
import { secretsEqual } from './api-key';

export const ADMIN_TOKEN = Symbol('ADMIN_TOKEN');

/**
 * Another credential the admin API accepts besides the admin token header (billing's console
 * session cookie). `authenticates` answers false for a request that carries none; it throws
 * (403) for one that carries a valid session but fails the service's cross-site checks.
 */
export interface AdminSessionVerifier {
  authenticates(request: Request): boolean;
}
export const ADMIN_SESSION_VERIFIER = Symbol('ADMIN_SESSION_VERIFIER');

@Injectable()
export class AdminTokenGuard implements CanActivate {
  constructor(
    @Inject(ADMIN_TOKEN) private readonly adminToken: string,
    @Optional() @Inject(ADMIN_SESSION_VERIFIER) private readonly sessions?: AdminSessionVerifier,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (match && secretsEqual(match[1], this.adminToken)) return true;
    // A wrong Authorization header is refused as such, whatever cookie comes with it.
    if (!match && this.sessions?.authenticates(request)) return true;
    throw new GatewayException(HttpStatus.UNAUTHORIZED, ErrorMessages.invalidAdminToken);
  }
}

export function RequireAdminToken() {
  return applyDecorators(
    UseGuards(AdminTokenGuard),
    ApiBearerAuth(ADMIN_SCHEME),
    ApiErrorResponses({ 401: { description: 'Missing or wrong admin token', messages: ErrorMessages.invalidAdminToken } }),
  );
}
