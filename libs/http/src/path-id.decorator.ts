import { createParamDecorator, type ExecutionContext } from '@nestjs/common';
import type { Request } from 'express';

/**
 * The id captured by a `*name` route segment, slashes included (e.g. `openai/gpt-4o`).
 * Express 5 hands a wildcard over as its path segments; a custom decorator reads them before
 * the global validation pipe could turn the array into a comma-joined string.
 */
export const PathId = createParamDecorator((name: string, context: ExecutionContext): string => {
  const value = context.switchToHttp().getRequest<Request>().params[name] as unknown;
  return Array.isArray(value) ? value.join('/') : String(value ?? '');
});
