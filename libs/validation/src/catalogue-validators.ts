import { ValidateIf, ValidateNested, type ValidationArguments, type ValidationError } from 'class-validator';
import { arrayIssues, ArrayOfVariants, Checked, composeDecorators, IsArrayField, type ArrayRule, type DtoClass } from './field-validators';
import { knownFields } from './unknown-fields';
import { describeWrongType, describeWrongValue, joinPath, quoteList, relativeIssueLine } from './validation-issues';

/**
 * What the catalogue file's DTOs need beyond the request bodies' decorators: lists of objects
 * of one class, lists of plain values checked item by item, optional fields that refuse null,
 * wording for unknown fields, which the file refuses (forbidNonWhitelisted) where a request
 * body drops them, and a guard for what class-transformer cannot copy (the global pipe has
 * Nest's own, but these DTOs are validated outside it).
 */

/**
 * What class-transformer cannot copy, found before it tries: a key named like an Object.prototype
 * member (it reads `constructor` to pick a class, and skips the others, which would then pass
 * unchecked) or nesting deeper than `maxDepth` (it recurses without a limit). Errors by path.
 */
export function untransformableErrors(value: unknown, maxDepth: number): ValidationError[] {
  const errors: ValidationError[] = [];
  const pending = [{ value, path: '', depth: 0 }];
  for (let next = pending.pop(); next; next = pending.pop()) {
    const { value: container, path, depth } = next;
    if (typeof container !== 'object' || container === null) continue;
    const problem = (at: string, message: string) => errors.push({ property: at, children: [], constraints: { untransformable: message } });
    if (depth > maxDepth) {
      problem(path, `Expected at most ${maxDepth} levels of nesting. Received more`);
      continue;
    }
    for (const [key, item] of Object.entries(container)) {
      const itemPath = Array.isArray(container) ? `${path}[${key}]` : joinPath(path, key);
      if (!Array.isArray(container) && (key in Object.prototype || key === 'prototype')) problem(itemPath, `Expected no field named like a JavaScript object member. Received '${key}'`);
      else pending.push({ value: item, path: itemPath, depth: depth + 1 });
    }
  }
  return errors;
}

/**
 * The field may be left out; null is checked like any other value. (@IsOptional lets null
 * through, and code reading the entry tells an absent field by `=== undefined`.)
 */
export function MayBeOmitted(): PropertyDecorator {
  return ValidateIf((_object: object, value: unknown) => value !== undefined);
}

/** A list whose object items each become `type` and are validated against it; `ofObjects` names an item. */
export function NestedList(type: DtoClass, rule: ArrayRule & { ofObjects: string }): PropertyDecorator {
  return composeDecorators(
    // No discriminator names a variant, so every object item becomes `type`.
    ArrayOfVariants('', {}, type),
    IsArrayField(rule),
    ValidateNested({ each: true, message: (args: ValidationArguments) => `Expected ${rule.ofObjects}. Received ${describeWrongType(args.value)}` }),
  );
}

export interface ListRule extends ArrayRule {
  /** What is wrong with one item; nothing when it is valid. */
  item?: (item: unknown) => readonly string[];
  /** Refuse an item listed twice. */
  unique?: boolean;
}

/** A list of plain values: the list's own issues first, then each bad item's, then a repeated item. */
export function listIssues(value: unknown, rule: ListRule): string[] {
  const issues = arrayIssues(value, rule);
  if (issues.length > 0 || !Array.isArray(value)) return issues;
  const itemIssues = value.flatMap((item: unknown, index) => (rule.item?.(item) ?? []).map((message) => relativeIssueLine(`[${index}]`, message)));
  if (itemIssues.length > 0 || !rule.unique) return itemIssues;
  const repeated = value.find((item: unknown, index) => value.indexOf(item) !== index);
  return repeated === undefined ? [] : [`Expected no ${rule.items} twice. Received ${describeWrongValue(repeated)} twice`];
}

export function IsListField(rule: ListRule): PropertyDecorator {
  return Checked('isListField', (value) => listIssues(value, rule));
}

/** `Expected one of ... Received ...` for a value that is not one of `values`; nothing when it is. */
export function oneOfIssues(values: readonly string[], value: unknown): string[] {
  return typeof value === 'string' && values.includes(value) ? [] : [`Expected one of ${quoteList(values)}. Received ${describeWrongType(value)}`];
}

/**
 * Words class-validator's `property x should not exist` (forbidNonWhitelisted) like every other
 * message, naming the fields the object may have so that a misspelt one is found at a glance.
 * Needs the errors' targets (validationError.target left on).
 */
export function wordUnknownFields(errors: readonly ValidationError[]): void {
  for (const error of errors) {
    if (error.constraints?.whitelistValidation !== undefined && typeof error.target === 'object') {
      error.constraints.whitelistValidation = `Expected one of the fields ${quoteList(knownFields(error.target.constructor))}. Received an unknown field`;
    }
    wordUnknownFields(error.children ?? []);
  }
}

