import { BadRequestException, ValidationPipe, type ArgumentMetadata, type ValidationError } from '@nestjs/common';
import { validationIssues } from '../chat/validation-issues';
import { ErrorMessages } from '../errors/error-body.dto';

/**
 * Validates bodies against their DTOs and reports every violation by field path, e.g.
 * `Body validation error! messages[0].role: Expected one of 'system', 'user', 'assistant', 'tool', 'developer'. Received 'robot'`.
 *
 * Undeclared fields are dropped (`whitelist`), so a DTO declares everything it forwards.
 */
export function createValidationPipe(): ValidationPipe {
  return new JsonValidationPipe({ ...PIPE_OPTIONS, exceptionFactory: (errors) => new BadRequestException(formatValidationErrors(errors)) });
}

const PIPE_OPTIONS = { transform: true, whitelist: true, forbidUnknownValues: false, validationError: { target: false, value: true } };

/** What {@link errorTreeValidationPipe} throws: class-validator's tree, unworded. */
export class BodyValidationErrors extends Error {
  constructor(readonly errors: ValidationError[]) {
    super('invalid body');
  }
}

let treePipe: ValidationPipe | undefined;

/**
 * The app's pipe, throwing {@link BodyValidationErrors} instead of the worded 400: for a caller
 * that validates part of a body and renumbers the paths before wording them (validateChatBody).
 */
export function errorTreeValidationPipe(): ValidationPipe {
  treePipe ??= new JsonValidationPipe({ ...PIPE_OPTIONS, exceptionFactory: (errors) => new BodyValidationErrors(errors) });
  return treePipe;
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
 * Objects and arrays a body may hold for the pipe to check: class-transformer copies each (and
 * builds a class for some), all in one turn of the event loop; a million empty objects in an
 * undeclared field held a replica for over a second, three million for half a minute. A body of
 * token ids (embeddings) holds numbers, which are cheap, in a few thousand arrays.
 */
export const PIPE_CHECKED_CONTAINERS = 50_000;

const TOO_MANY_CONTAINERS: ValidationError = {
  property: '',
  children: [],
  constraints: { jsonSize: `Expected at most ${PIPE_CHECKED_CONTAINERS} objects and arrays in the body. Received more` },
};

/** Whether the value holds more than `limit` objects and arrays, itself included; stops counting past it. */
function holdsMoreContainers(value: unknown, limit: number): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const pending: object[] = [value];
  let seen = 1;
  while (pending.length > 0) {
    const container = pending.pop()!;
    const items = Array.isArray(container) ? container : Object.values(container);
    for (let index = 0; index < items.length; index++) {
      const item: unknown = items[index];
      if (typeof item !== 'object' || item === null) continue;
      if (++seen > limit) return true;
      pending.push(item);
    }
  }
  return false;
}

/**
 * Nest's ValidationPipe without two passes that cannot find anything in this app yet walk
 * every body on every request (the second also looks up class-validator metadata for each
 * nested class): values come from JSON.parse (bodies) and from the URL (query, path), so no
 * array has gaps and no value is binary. Those passes exist for other transports (e.g.
 * socket.io attachments); everything else, prototype-key stripping included, is unchanged. A
 * body holding more than PIPE_CHECKED_CONTAINERS objects and arrays is refused before the pipe
 * copies any of it.
 */
class JsonValidationPipe extends ValidationPipe {
  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type === 'body' && holdsMoreContainers(value, PIPE_CHECKED_CONTAINERS)) throw await this.exceptionFactory([TOO_MANY_CONTAINERS]);
    return super.transform(value, metadata);
  }

  protected override closeArrayGaps(): void {
    // JSON.parse and the query parser never make sparse arrays.
  }

  protected override findNestedBinaryValues(): ValidationError[] {
    // JSON.parse and the query parser never make Buffers, typed arrays or ArrayBuffers.
    return [];
  }
}

/**
 * `Body validation error! <path>: <message>; <path>: <message>`, the first ISSUES_SHOWN issues
 * and how many more there are. Messages written in the `Expected ... Received ...` style are
 * kept as they are; any other constraint message gets `. Received <value>` appended. Issue
 * lines that a structure validator reports with a relative path (`[3].function.name: ...`)
 * are resolved against its field (`tools[3].function.name`).
 */
export function formatValidationErrors(errors: ValidationError[], { partOfTheBody = false } = {}): string {
  const issues = validationIssues(errors);
  const shown = issues.slice(0, ISSUES_SHOWN).map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message));
  // Found in part of the body (validateChatBody): more may lie past it, so no count.
  if (issues.length > ISSUES_SHOWN) shown.push(partOfTheBody ? 'and more' : `and ${issues.length - ISSUES_SHOWN} more`);
  return `${ErrorMessages.bodyValidationPrefix} ${shown.join('; ') || 'the body must be a JSON object'}`;
}

/** Issues an error message lists at most: a body with thousands of bad items gets a readable answer, not megabytes. */
export const ISSUES_SHOWN = 20;
