import { BadRequestException, ValidationPipe, type ValidationError } from '@nestjs/common';
import { validationIssues } from '../chat/validation-issues';
import { ErrorMessages } from '../errors/error-body.dto';

/**
 * Validates bodies against their DTOs and reports every violation by field path, e.g.
 * `Body validation error! messages[0].role: Expected one of 'system', 'user', 'assistant', 'tool', 'developer'. Received 'robot'`.
 *
 * Undeclared fields are dropped (`whitelist`), so a DTO declares everything it forwards.
 */
export function createValidationPipe(): ValidationPipe {
  return new JsonValidationPipe({
    transform: true,
    whitelist: true,
    forbidUnknownValues: false,
    validationError: { target: false, value: true },
    exceptionFactory: (errors) => new BadRequestException(formatValidationErrors(errors)),
  });
}

let appPipe: ValidationPipe | undefined;

/**
 * The one pipe instance the apps validate with: installed globally by startHttpApp, and called
 * directly by code that validates a body itself (validateChatBody), so both behave the same.
 */
export function appValidationPipe(): ValidationPipe {
  appPipe ??= createValidationPipe();
  return appPipe;
}

/**
 * Nest's ValidationPipe without two passes that cannot find anything in this app yet walk
 * every body on every request (the second also looks up class-validator metadata for each
 * nested class): values come from JSON.parse (bodies) and from the URL (query, path), so no
 * array has gaps and no value is binary. Those passes exist for other transports (e.g.
 * socket.io attachments); everything else, prototype-key stripping included, is unchanged.
 */
class JsonValidationPipe extends ValidationPipe {
  protected override closeArrayGaps(): void {
    // JSON.parse and the query parser never make sparse arrays.
  }

  protected override findNestedBinaryValues(): ValidationError[] {
    // JSON.parse and the query parser never make Buffers, typed arrays or ArrayBuffers.
    return [];
  }
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
