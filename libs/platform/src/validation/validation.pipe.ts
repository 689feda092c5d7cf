import { BadRequestException, ValidationPipe, type ValidationError } from '@nestjs/common';
import { ErrorMessages } from '@igw/contracts';

/**
 * Validates bodies against their DTOs and reports every violation by field path, e.g.
 * `Body validation error! messages[0].role: Expected one of 'user', 'system' Received 'bot'`.
 */
export function createValidationPipe(): ValidationPipe {
  return new ValidationPipe({
    transform: true,
    whitelist: true,
    forbidUnknownValues: false,
    validationError: { target: false, value: true },
    exceptionFactory: (errors) => new BadRequestException(formatValidationErrors(errors)),
  });
}

export function formatValidationErrors(errors: ValidationError[]): string {
  const details = flatten(errors, '').join('; ');
  return `${ErrorMessages.bodyValidationPrefix} ${details || 'the body must be a JSON object'}`;
}

function flatten(errors: ValidationError[], parent: string): string[] {
  return errors.flatMap((error) => {
    const path = joinPath(parent, error.property);
    const own = Object.values(error.constraints ?? {}).map((constraint) => `${path}: ${withReceived(constraint, error.value)}`);
    return [...own, ...flatten(error.children ?? [], path)];
  });
}

function joinPath(parent: string, property: string): string {
  if (/^\d+$/.test(property)) return `${parent}[${property}]`;
  return parent ? `${parent}.${property}` : property;
}

function withReceived(constraint: string, value: unknown): string {
  if (/Received /.test(constraint)) return constraint;
  return `${constraint}. Received ${describeValue(value)}`;
}

function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return `'${value.length > 60 ? `${value.slice(0, 60)}…` : value}'`;
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  return `${typeof value} ${String(value)}`;
}
