import { applyDecorators, CanActivate, ExecutionContext, HttpStatus, Inject, Injectable, UseGuards } from '@nestjs/common';
import { ApiBearerAuth, ApiResponse } from '@nestjs/swagger';
import { ErrorBodyDto } from '@igw/contracts';
import type { Request } from 'express';
import { GatewayException } from '../errors/gateway.exception';
import { secretsEqual } from './api-key';

export const ADMIN_TOKEN = Symbol('ADMIN_TOKEN');

@Injectable()
export class AdminTokenGuard implements CanActivate {
  constructor(@Inject(ADMIN_TOKEN) private readonly adminToken: string) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<Request>();
    const match = /^Bearer\s+(\S+)\s*$/i.exec(request.headers.authorization ?? '');
    if (!match || !secretsEqual(match[1], this.adminToken)) {
      throw new GatewayException(HttpStatus.UNAUTHORIZED, 'Unauthorized: a valid admin token is required. Send it as "Authorization: Bearer <ADMIN_TOKEN>".');
    }
    return true;
  }
}

export function RequireAdminToken() {
  return applyDecorators(
    UseGuards(AdminTokenGuard),
    ApiBearerAuth('admin'),
    ApiResponse({ status: 401, description: 'Missing or wrong admin token', type: ErrorBodyDto }),
  );
}
