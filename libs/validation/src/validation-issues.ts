import type { ValidationError } from 'class-validator';

/**
 * The wording of body validation messages, shared by the DTOs that write them and by the
 * global validation pipe that prints them (`Body validation error! <path>: <message>`).
 *
 * A message reads `Expected <what the contract wants>. Received <what came>`. Most messages
 * come from one decorator on one field. Validators that check a whole structure at once (a
 * tool list, a content array, a tool_choice object) may report several issues in one message,
 * one per line, each starting with a path relative to the decorated field:
 *
 *     [3].function.name: Expected 1-64 letters, digits, underscores or dashes. Received 'bad name!'
 *
 * `validationIssues` resolves those lines against the field's own path, so the client reads
 * `tools[3].function.name: ...`.
 */

/** How every 400 about the body starts; the error messages of every service reuse it. */
export const BODY_VALIDATION_PREFIX = 'Body validation error!';

export interface ValidationIssue {
  /** Where the problem is, e.g. `messages[2].content[0].cache_control.ttl` ('' for the body itself). */
  path: string;
  /** `Expected ... Received ...`, or a third-party constraint message with `Received ...` appended. */
  message: string;
}

const MAX_QUOTED = 60;

/** A value as messages name it: strings quoted, anything else by its type (`number 3`, `array`, `nothing`). */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (typeof value === 'string') return quote(value);
  if (Array.isArray(value)) return 'array';
  if (typeof value === 'object') return 'object';
  return `${typeof value} ${String(value)}`;
}

/** For a value of the wrong type: also names the type of strings (`string 'hot'`). */
export function describeWrongType(value: unknown): string {
  return typeof value === 'string' ? `string ${quote(value)}` : describeValue(value);
}

/** For a value of the right type but outside what is allowed: numbers bare (`3`), strings quoted. */
export function describeWrongValue(value: unknown): string {
  return typeof value === 'number' ? String(value) : describeValue(value);
}

/** `'a', 'b', 'c'`, the way allowed values are listed. */
export function quoteList(values: readonly string[]): string {
  return values.map((value) => quote(value)).join(', ');
}

/** `Expected one of 'a', 'b'. Received 'x'` (or `Expected 'a'. ...` for a single allowed value). */
export function expectedOneOf(values: readonly string[], value: unknown): string {
  const expected = values.length === 1 ? quote(values[0]) : `one of ${quoteList(values)}`;
  return `Expected ${expected}. Received ${typeof value === 'string' ? quote(value) : describeWrongType(value)}`;
}

function quote(text: string): string {
  const shown = text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text;
  return `'${shown.replace(/\r/g, '\\r').replace(/\n/g, '\\n')}'`;
}

/** `[3]`, `.function`, `.name`, `.50256` … at the start of an issue line, then `: `. */
const RELATIVE_ISSUE = /^((?:\[\d+\]|\.[A-Za-z0-9_$-]+)+): ([\s\S]*)$/;

/** Every issue of class-validator's error tree, by full path; duplicates collapse. */
export function validationIssues(errors: readonly ValidationError[], parent = ''): ValidationIssue[] {
  const issues = collect(errors, parent);
  const seen = new Set<string>();
  return issues.filter((issue) => {
    const key = `${issue.path}\u0000${issue.message}`;
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

function collect(errors: readonly ValidationError[], parent: string): ValidationIssue[] {
  return errors.flatMap((error) => {
    const path = joinPath(parent, error.property);
    const constraints = error.constraints ?? {};
    let names = Object.keys(constraints);
    // "must be an object" from @ValidateNested repeats what the field's own type check said.
    if (names.length > 1) names = names.filter((name) => name !== 'nestedValidation');
    const own = names.flatMap((name) =>
      constraints[name].split('\n').map((line): ValidationIssue => {
        const relative = RELATIVE_ISSUE.exec(line);
        if (relative) return { path: appendRelative(path, relative[1]), message: relative[2] };
        return { path, message: withReceived(line, error.value) };
      }),
    );
    return [...own, ...collect(error.children ?? [], path)];
  });
}

/** One issue line for a validator that reports on a structure: `[2].type: Expected ...`. */
export function relativeIssueLine(relativePath: string, message: string): string {
  if (!relativePath) return message;
  return `${/^[[.]/.test(relativePath) ? relativePath : `.${relativePath}`}: ${message}`;
}

export function joinPath(parent: string, property: string | undefined): string {
  if (property === undefined || property === '') return parent;
  if (/^\d+$/.test(property)) return `${parent}[${property}]`;
  return parent ? `${parent}.${property}` : property;
}

function appendRelative(path: string, relative: string): string {
  return path ? `${path}${relative}` : relative.replace(/^\./, '');
}

function withReceived(message: string, value: unknown): string {
  if (/Received /.test(message)) return message;
  return `${message}. Received ${describeValue(value)}`;
}
