import { applyDecorators, CanActivate, ExecutionContext, HttpStatus, Inject, Injectable, UseGuards } from '@nestjs/common';
import { ApiBearerAuth } from '@nestjs/swagger';
import { ErrorMessages } from '@igw/contracts';
import type { Request } from 'express';
import { GatewayException } from '../errors/gateway.exception';
import { ADMIN_SCHEME, ApiErrorResponses } from '../http/swagger';
import { secretsEqual } from './api-key';

export const ADMIN_TOKEN = Symbol('ADMIN_TOKEN');

@Injectable()
export class AdminTokenGuard implements CanActivate {
  constructor(@Inject(ADMIN_TOKEN) private readonly adminToken: string) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match || !secretsEqual(match[1], this.adminToken)) {
      throw new GatewayException(HttpStatus.UNAUTHORIZED, ErrorMessages.invalidAdminToken);
    }
    return true;
  }
}

export function RequireAdminToken() {
  return applyDecorators(
    UseGuards(AdminTokenGuard),
    ApiBearerAuth(ADMIN_SCHEME),
    ApiErrorResponses({ 401: { description: 'Missing or wrong admin token', messages: ErrorMessages.invalidAdminToken } }),
  );
}
