import { applyDecorators, CanActivate, ExecutionContext, HttpStatus, Inject, Injectable, Optional } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ErrorMessages } from '@igw/contracts';
import type { Request } from 'express';
import { GatewayException } from '../errors/gateway.exception';
import { UseCredentialGuard } from '../body-parsing';
import { ADMIN_SCHEME, ApiErrorResponses } from '../swagger';
import { AdminTokenThrottle } from './admin-token-throttle';
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
    private readonly throttle: AdminTokenThrottle,
    @Optional() @Inject(ADMIN_SESSION_VERIFIER) private readonly sessions?: AdminSessionVerifier,
  ) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (match) {
      // Only a presented token is a guess; a request with none (or a session cookie) spends nothing.
      const client = this.throttle.clientOf(request);
      this.throttle.refuseIfBlocked(client);
      if (secretsEqual(match[1], this.adminToken)) {
        this.throttle.succeeded(client);
        return true;
      }
      this.throttle.failed(client);
    }
    // A wrong Authorization header is refused as such, whatever cookie comes with it.
    else if (this.sessions?.authenticates(request)) return true;
    throw new GatewayException(HttpStatus.UNAUTHORIZED, ErrorMessages.invalidAdminToken);
  }
}

export function RequireAdminToken() {
  return applyDecorators(
    UseCredentialGuard(AdminTokenGuard),
    ApiBearerAuth(ADMIN_SCHEME),
    ApiErrorResponses({
      401: { description: 'Missing or wrong admin token', messages: ErrorMessages.invalidAdminToken },
      429: { description: 'Too many wrong admin tokens from this address (retry-after says when to try again)', messages: 'Too Many Requests: too many wrong admin tokens from this address. Retry in 840 s.' },
    }),
  );
}
