import { applyDecorators, CanActivate, ExecutionContext, HttpStatus, Injectable, SetMetadata, UseGuards } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { ApiBearerAuth, ApiResponse } from '@nestjs/swagger';
import { ErrorBodyDto, ErrorMessages } from '@igw/contracts';
import type { Request } from 'express';
import { GatewayException } from '../errors/gateway.exception';
import { ApiKeyAuthenticator } from './api-key-authenticator';

export interface ApiKeyRequirements {
  /** Refuse with 403 when the account has no credits left (every paid endpoint). */
  credits: boolean;
  /** Also accept the key in the `Api-Key` header (the Azure-style path). */
  apiKeyHeader?: boolean;
}

const API_KEY_REQUIREMENTS = 'igw:api-key-requirements';

@Injectable()
export class ApiKeyGuard implements CanActivate {
  constructor(
    private readonly authenticator: ApiKeyAuthenticator,
    private readonly reflector: Reflector,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const requirements = this.reflector.getAllAndOverride<ApiKeyRequirements | undefined>(API_KEY_REQUIREMENTS, [
      context.getHandler(),
      context.getClass(),
    ]) ?? { credits: true };
    const request = context.switchToHttp().getRequest<Request>();
    const presented = presentedKey(request, requirements.apiKeyHeader ?? false);
    const auth = presented ? await this.authenticator.authenticate(presented) : null;
    if (!auth) throw new GatewayException(HttpStatus.UNAUTHORIZED, ErrorMessages.invalidApiKey);
    if (requirements.credits && auth.status === 'suspended') {
      throw new GatewayException(HttpStatus.FORBIDDEN, ErrorMessages.accountSuspended);
    }
    if (requirements.credits && auth.balanceMicro <= 0n) {
      throw new GatewayException(HttpStatus.FORBIDDEN, ErrorMessages.creditsExhausted);
    }
    request.context.auth = auth;
    return true;
  }
}

function presentedKey(request: Request, acceptApiKeyHeader: boolean): string | undefined {
  const authorization = request.headers.authorization;
  if (authorization) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(authorization);
    if (match) return match[1];
  }
  if (acceptApiKeyHeader) {
    const header = request.headers['api-key'];
    if (typeof header === 'string' && header.trim()) return header.trim();
  }
  return undefined;
}

/** Marks a route as needing an API key (and, by default, credits). */
export function RequireApiKey(requirements: ApiKeyRequirements = { credits: true }) {
  return applyDecorators(
    SetMetadata(API_KEY_REQUIREMENTS, requirements),
    UseGuards(ApiKeyGuard),
    ApiBearerAuth(),
    ApiResponse({ status: 401, description: 'Missing, invalid or revoked API key', type: ErrorBodyDto }),
    ...(requirements.credits ? [ApiResponse({ status: 403, description: 'No credits left', type: ErrorBodyDto })] : []),
  );
}
