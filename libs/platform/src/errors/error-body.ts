import type { ErrorBodyDto } from '@igw/contracts';
import type { ServedRequest } from '../http/request-context';

export function buildErrorBody(request: ServedRequest, statusCode: number, message: string): ErrorBodyDto {
  return {
    message,
    path: (request.originalUrl ?? request.url ?? '').split('?')[0],
    requestId: request.context?.requestId ?? '',
    statusCode,
    timestamp: new Date().toISOString(),
  };
}
