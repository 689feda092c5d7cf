import { BadRequestException, ValidationPipe, type ArgumentMetadata, type ValidationError, type ValidationPipeOptions } from '@nestjs/common';
import { acceptDto, type DtoClass } from './dto-acceptor';
import { refusedFieldOf } from './unknown-fields';
import { BODY_VALIDATION_PREFIX, validationIssues } from './validation-issues';

const PIPE_OPTIONS = { transform: true, whitelist: true, forbidUnknownValues: false, validationError: { target: false, value: true } };

/**
 * Validates bodies against their DTOs and reports every violation by field path, e.g.
 * `Body validation error! messages[0].role: Expected one of 'system', 'user', 'assistant', 'tool', 'developer'. Received 'robot'`.
 *
 * Undeclared fields are dropped (`whitelist`), so a DTO declares everything it forwards; a DTO
 * marked with RefusesUnknownFields has them refused instead (unknown-fields.ts).
 */
export function createValidationPipe(): ValidationPipe {
  return new JsonValidationPipe({ ...PIPE_OPTIONS, exceptionFactory: (errors) => new BadRequestException(formatValidationErrors(errors)) });
}

/**
 * The pipe without the compiled acceptance: class-transformer and class-validator alone, the
 * reference the compiled path is tested against.
 */
export function referenceValidationPipe(): ValidationPipe {
  return new JsonValidationPipe({ ...PIPE_OPTIONS, exceptionFactory: (errors) => new BadRequestException(formatValidationErrors(errors)) }, false);
}

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
 * Objects, arrays and object members a body may hold for the pipe to check, and members one
 * object may have. class-transformer copies each (and builds a class for some), all in one turn
 * of the event loop, and its time grows with the square of an object's members (it removes
 * duplicate keys with indexOf). At these bounds the pipe's worst is about JSON.parse's on a body
 * of BODY_LIMIT, and a decision's free-form `state` of 100,000 values would hardly fit a model's
 * context. Items of arrays that are plain values are not counted: they cost little, and
 * embeddings take token ids by the million.
 */
export const PIPE_CHECKED_VALUES = 100_000;
export const PIPE_CHECKED_MEMBERS = 2_048;

/** Why the pipe is not given the body, or undefined; stops counting past the bounds. */
function oversizeIssue(value: unknown): string | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const pending: object[] = [value];
  let counted = 1;
  while (pending.length > 0) {
    const container = pending.pop()!;
    let items: unknown[] = container as unknown[];
    if (!Array.isArray(container)) {
      items = Object.values(container);
      if (items.length > PIPE_CHECKED_MEMBERS) return `Expected at most ${PIPE_CHECKED_MEMBERS} members in an object. Received one of ${items.length}`;
      counted += items.length;
    }
    for (let index = 0; index < items.length && counted <= PIPE_CHECKED_VALUES; index++) {
      const item: unknown = items[index];
      if (typeof item !== 'object' || item === null) continue;
      counted += 1;
      pending.push(item);
    }
    if (counted > PIPE_CHECKED_VALUES) return `Expected at most ${PIPE_CHECKED_VALUES} objects, arrays and object members in the body. Received more`;
  }
  return undefined;
}

/**
 * Bodies are first offered to the compiled acceptance (dto-acceptor.ts), which returns the
 * instance this pipe would for the valid bodies it is sure of, without class-transformer's copy
 * and class-validator's error objects; the rest take Nest's path below, which alone words errors.
 *
 * Nest's ValidationPipe without two passes that cannot find anything in this app yet walk
 * every body on every request (the second also looks up class-validator metadata for each
 * nested class): values come from JSON.parse (bodies) and from the URL (query, path), so no
 * array has gaps and no value is binary. Those passes exist for other transports (e.g.
 * socket.io attachments); everything else, prototype-key stripping included, is unchanged. A
 * body past PIPE_CHECKED_VALUES or PIPE_CHECKED_MEMBERS is refused before the pipe copies any
 * of it.
 */
class JsonValidationPipe extends ValidationPipe {
  constructor(
    options: ValidationPipeOptions,
    private readonly compiled = true,
  ) {
    super(options);
  }

  override async transform(value: unknown, metadata: ArgumentMetadata): Promise<unknown> {
    if (metadata.type !== 'body' || !metadata.metatype) return super.transform(value, metadata);
    const oversize = oversizeIssue(value);
    if (oversize) throw await this.exceptionFactory([{ property: '', children: [], constraints: { bodySize: oversize } }]);
    // Before the whitelist could drop it: a marked DTO refuses what it does not serve (unknown-fields.ts).
    const refused = refusedFieldOf(metadata.metatype, value);
    if (refused) throw await this.exceptionFactory([{ property: refused.field, children: [], constraints: { unknownField: refused.message } }]);
    const accepted = this.compiled ? acceptDto(metadata.metatype as DtoClass, value) : undefined;
    return accepted ?? super.transform(value, metadata);
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
  return `${BODY_VALIDATION_PREFIX} ${shown.join('; ') || 'the body must be a JSON object'}`;
}

/** Issues an error message lists at most: a body with thousands of bad items gets a readable answer, not megabytes. */
export const ISSUES_SHOWN = 20;
