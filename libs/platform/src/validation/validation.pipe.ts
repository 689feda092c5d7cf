import { BadRequestException, ValidationPipe, type ValidationError } from '@nestjs/common';
import { ErrorMessages, validationIssues } from '@igw/contracts';

/**
 * Validates bodies against their DTOs and reports every violation by field path, e.g.
 * `Body validation error! messages[0].role: Expected one of 'system', 'user', 'assistant', 'tool', 'developer'. Received 'robot'`.
 *
 * Undeclared fields are dropped (`whitelist`), so a DTO declares everything it forwards.
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

/**
 * `Body validation error! <path>: <message>; <path>: <message>`. Messages written in the
 * `Expected ... Received ...` style are kept as they are; any other constraint message gets
 * `. Received <value>` appended. Issue lines that a structure validator reports with a relative
 * path (`[3].function.name: ...`) are resolved against its field (`tools[3].function.name`).
 */
export function formatValidationErrors(errors: ValidationError[]): string {
  const details = validationIssues(errors)
    .map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message))
    .join('; ');
  return `${ErrorMessages.bodyValidationPrefix} ${details || 'the body must be a JSON object'}`;
}
