import type { ErrorBodyDto } from '@igw/contracts';
import type { Request } from 'express';

export function buildErrorBody(request: Request, statusCode: number, message: string): ErrorBodyDto {
  return {
    message,
    path: request.originalUrl?.split('?')[0] ?? request.url,
    requestId: request.context?.requestId ?? '',
    statusCode,
    timestamp: new Date().toISOString(),
  };
}
