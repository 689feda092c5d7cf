import { ApiExtraModels, ApiProperty, getSchemaPath, type ApiPropertyOptions } from '@nestjs/swagger';
import { plainToInstance } from 'class-transformer';
import { IsOptional, ValidateBy, ValidateNested, validateSync, type ValidationArguments, type ValidationOptions } from 'class-validator';
import {
  describeWrongType,
  describeWrongValue,
  expectedOneOf,
  relativeIssueLine,
  validationIssues,
} from './validation-issues';
import { acceptDto, compiledValidation, dtoTransform, type DtoClass } from './dto-acceptor';

/**
 * Validation decorators of the request contracts. Each one writes its own message in the
 * `Expected ... Received ...` style (see validation-issues.ts) and checks one field
 * completely, so a bad field gets one message, not one per failed rule. The field decorators
 * also document the field in the OpenAPI document from the same rule (bounds, enum, item
 * limits, the classes of nested objects and variants), so a rule is written once: what the
 * document adds beside the rule (words, examples, optionality) is the field's {@link FieldDoc}.
 */

export type { DtoClass } from './dto-acceptor';

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Applies several property decorators as one. */
export function composeDecorators(...decorators: PropertyDecorator[]): PropertyDecorator {
  return (target, key) => {
    for (const decorator of decorators) decorator(target, key);
  };
}

/** What a field's OpenAPI description says beside what its rule states. */
export interface FieldDoc {
  description?: string;
  example?: unknown;
  default?: unknown;
  deprecated?: boolean;
  /** Documents null as allowed. Every optional field takes null as absent; this says so where OpenAI's API does. */
  nullable?: boolean;
  /** The field may be left out (and null means absent): class-validator's IsOptional, and not required in the document. */
  optional?: boolean;
}

/**
 * The field's validators and its OpenAPI schema: `schema` (derived from the rule) with the
 * field's doc over it. A property documented by several decorators gets their schemas merged,
 * the outermost decorator's keys winning.
 */
export function documentedField(schema: ApiPropertyOptions, doc: FieldDoc | undefined, ...validators: PropertyDecorator[]): PropertyDecorator {
  const { optional, ...words } = doc ?? {};
  const documentation = ApiProperty({ ...schema, ...words, ...(optional ? { required: false } : {}) } as ApiPropertyOptions);
  return composeDecorators(documentation, ...(optional ? [IsOptional()] : []), ...validators);
}

/**
 * The schema of a value that is one of several classes, chosen by `discriminator`
 * (`variants` maps each value to its class; a class may serve several values). The classes
 * join the document through the decorated class's extra models.
 */
export function variantsSchema(discriminator: string, variants: Readonly<Record<string, DtoClass>>): { oneOf: Array<{ $ref: string }>; discriminator: { propertyName: string; mapping: Record<string, string> } } {
  const classes = [...new Set(Object.values(variants))];
  return {
    oneOf: classes.map((type) => ({ $ref: getSchemaPath(type) })),
    discriminator: { propertyName: discriminator, mapping: Object.fromEntries(Object.entries(variants).map(([value, type]) => [value, getSchemaPath(type)])) },
  };
}

/** Adds the classes of `variants` to the extra models of the decorated property's class, where the document's $refs find them. */
export function VariantModels(variants: Readonly<Record<string, DtoClass>>): PropertyDecorator {
  return (target) => ApiExtraModels(...new Set(Object.values(variants)))(target.constructor);
}

/**
 * What is wrong with a value: one message per problem, or issue lines whose path is relative
 * to the field (`[2].type: ...`). An empty list means the value is valid.
 */
/**
 * The issues of a value. `firstOnly`: the caller asks only whether there is one (class-validator's
 * validate, the compiled acceptance), so a check that walks a list may stop at the first item
 * with issues (eachItemIssues): a body of a hundred thousand bad parts costs one, not all.
 */
export type Check = (value: unknown, args: ValidationArguments, firstOnly: boolean) => readonly string[];

/** A validator from a check; its message lists everything the check found. */
export function Checked(name: string, check: Check, options?: ValidationOptions): PropertyDecorator {
  const run = (value: unknown, args: ValidationArguments | undefined, firstOnly: boolean): readonly string[] =>
    check(value, args ?? { value, constraints: [], targetName: '', object: {}, property: '' }, firstOnly);
  return ValidateBy(
    {
      name,
      validator: {
        validate: (value: unknown, args?: ValidationArguments) => run(value, args, true).length === 0,
        defaultMessage: (args?: ValidationArguments) => run(args?.value, args, false).join('\n'),
      },
    },
    options,
  );
}

/** The issues of each item in order, or with `firstOnly` those of the first item that has any. */
export function eachItemIssues<T>(items: readonly T[], firstOnly: boolean, issuesOf: (item: T, index: number) => readonly string[]): string[] {
  const issues: string[] = [];
  for (let index = 0; index < items.length; index++) {
    const found = issuesOf(items[index], index);
    if (found.length === 0) continue;
    issues.push(...found);
    if (firstOnly) break;
  }
  return issues;
}

export interface StringRule {
  /** Refuse ''. */
  nonEmpty?: boolean;
  maxLength?: number;
  pattern?: RegExp;
  /** What the pattern allows, e.g. `1-64 letters, digits, underscores or dashes`. */
  patternText?: string;
  /** Overrides `a string` in the type message, e.g. `a string (the id of the tool call answered)`. */
  expected?: string;
}

export function stringIssues(value: unknown, rule: StringRule = {}): string[] {
  const expected = rule.expected ?? (rule.nonEmpty ? 'a non-empty string' : 'a string');
  if (typeof value !== 'string') return [`Expected ${expected}. Received ${describeWrongType(value)}`];
  if (rule.nonEmpty && value === '') return [`Expected ${expected}. Received ''`];
  if (rule.maxLength !== undefined && value.length > rule.maxLength) {
    return [`Expected at most ${rule.maxLength} characters. Received ${value.length} characters`];
  }
  if (rule.pattern && !rule.pattern.test(value)) return [`Expected ${rule.patternText ?? `a string matching ${rule.pattern}`}. Received ${describeWrongValue(value)}`];
  return [];
}

function stringSchema(rule: StringRule): ApiPropertyOptions {
  return { type: 'string', ...(rule.nonEmpty ? { minLength: 1 } : {}), ...(rule.maxLength !== undefined ? { maxLength: rule.maxLength } : {}), ...(rule.pattern ? { pattern: rule.pattern.source } : {}) };
}

export function IsStringField(rule: StringRule = {}, doc?: FieldDoc): PropertyDecorator {
  return documentedField(stringSchema(rule), doc, Checked('isStringField', (value) => stringIssues(value, rule)));
}

export function IsBooleanField(doc?: FieldDoc): PropertyDecorator {
  return documentedField({ type: 'boolean' }, doc, Checked('isBooleanField', (value) => (typeof value === 'boolean' ? [] : [`Expected a boolean. Received ${describeWrongType(value)}`])));
}

export interface NumberRule {
  min?: number;
  max?: number;
  /** A whole number, and a safe one (within ±(2^53 - 1), where every integer is exact). */
  integer?: boolean;
  /** At most this many digits after the decimal point (credits: micro-credits are the unit). */
  maxDecimals?: number;
}

export function numberIssues(value: unknown, rule: NumberRule): string[] {
  const noun = rule.integer ? 'an integer' : 'a number';
  if (typeof value !== 'number' || !Number.isFinite(value)) return [`Expected ${noun}. Received ${describeWrongType(value)}`];
  if (rule.integer && !Number.isInteger(value)) return [`Expected an integer. Received ${value}`];
  const tooLow = rule.min !== undefined && value < rule.min;
  const tooHigh = rule.max !== undefined && value > rule.max;
  if (tooLow || tooHigh) return [`Expected ${noun} ${rangeText(rule)}. Received ${describeWrongValue(value)}`];
  if (rule.integer && !Number.isSafeInteger(value)) {
    return [`Expected an integer ${value > 0 ? `of at most ${Number.MAX_SAFE_INTEGER}` : `of at least ${Number.MIN_SAFE_INTEGER}`}. Received ${value}`];
  }
  if (rule.maxDecimals !== undefined && Number(value.toFixed(rule.maxDecimals)) !== value) {
    return [`Expected a number with at most ${rule.maxDecimals} decimal places. Received ${value}`];
  }
  return [];
}

function rangeText(rule: NumberRule): string {
  if (rule.min !== undefined && rule.max !== undefined) return `from ${rule.min} to ${rule.max}`;
  if (rule.min !== undefined) return `of at least ${rule.min}`;
  return `of at most ${rule.max}`;
}

/** An integer is bounded by the safe integers even where the rule sets no bound. */
function numberSchema(rule: NumberRule): ApiPropertyOptions {
  const minimum = rule.min ?? (rule.integer ? Number.MIN_SAFE_INTEGER : undefined);
  const maximum = rule.max ?? (rule.integer ? Number.MAX_SAFE_INTEGER : undefined);
  return { type: rule.integer ? 'integer' : 'number', ...(minimum !== undefined ? { minimum } : {}), ...(maximum !== undefined ? { maximum } : {}) };
}

export function IsNumberField(rule: NumberRule = {}, doc?: FieldDoc): PropertyDecorator {
  return documentedField(numberSchema(rule), doc, Checked('isNumberField', (value) => numberIssues(value, rule)));
}

export function IsOneOf(values: readonly string[], doc?: FieldDoc): PropertyDecorator {
  return documentedField({ enum: [...values] }, doc, Checked('isOneOf', (value) => (typeof value === 'string' && values.includes(value) ? [] : [expectedOneOf(values, value)])));
}

function objectCheck(expected: string): PropertyDecorator {
  return Checked('isObjectField', (value) => (isRecord(value) ? [] : [`Expected ${expected}. Received ${describeWrongType(value)}`]));
}

/** A free-form object, forwarded as sent. */
export function IsObjectField(expected = 'an object', doc?: FieldDoc): PropertyDecorator {
  return documentedField({ type: 'object', additionalProperties: true }, doc, objectCheck(expected));
}

/** The bounds OpenAI puts on `metadata`: what a client may attach to what is kept for it. */
export interface StringMapRule {
  maxEntries: number;
  maxKeyLength: number;
  maxValueLength: number;
}

/** An object of string values within `rule`'s bounds (a key's or value's length in characters, as OpenAI counts them). */
export function IsStringMapField(rule: StringMapRule): PropertyDecorator {
  return Checked('isStringMapField', (value) => {
    if (!isRecord(value)) return [`Expected an object of strings. Received ${describeWrongType(value)}`];
    const keys = Object.keys(value);
    if (keys.length > rule.maxEntries) return [`Expected at most ${rule.maxEntries} pairs. Received ${keys.length}`];
    for (const key of keys) {
      const shown = JSON.stringify(key.length > 80 ? `${key.slice(0, 80)}…` : key);
      if (key.length > rule.maxKeyLength) return [`Expected keys of at most ${rule.maxKeyLength} characters. Received ${shown} (${key.length})`];
      const entry: unknown = value[key];
      if (typeof entry !== 'string') return [relativeIssueLine(`.${key}`, `Expected a string. Received ${describeWrongType(entry)}`)];
      if (entry.length > rule.maxValueLength) return [relativeIssueLine(`.${key}`, `Expected at most ${rule.maxValueLength} characters. Received ${entry.length}`)];
    }
    return [];
  });
}

export interface ArrayRule {
  /** Plural noun of the items, e.g. `messages`, `tools`. */
  items: string;
  nonEmpty?: boolean;
  max?: number;
  /** Each item must be a string. */
  ofStrings?: boolean;
  /**
   * Each item must be an object, described thus (e.g. `a message object with a role`). Needed
   * next to @ValidateNested, which would otherwise let an array nested in the array pass.
   */
  ofObjects?: string;
}

export function arrayIssues(value: unknown, rule: ArrayRule): string[] {
  const expected = `${rule.nonEmpty ? 'a non-empty array' : 'an array'} of ${rule.items}`;
  if (!Array.isArray(value)) return [`Expected ${expected}. Received ${describeWrongType(value)}`];
  if (rule.nonEmpty && value.length === 0) return [`Expected ${expected}. Received an empty array`];
  if (rule.max !== undefined && value.length > rule.max) return [`Expected at most ${rule.max} ${rule.items}. Received ${value.length}`];
  const issues: string[] = [];
  if (!rule.ofStrings && !rule.ofObjects) return issues;
  for (let index = 0; index < value.length; index++) {
    const item: unknown = value[index];
    if (rule.ofStrings && typeof item !== 'string') issues.push(relativeIssueLine(`[${index}]`, `Expected a string. Received ${describeWrongType(item)}`));
    else if (rule.ofObjects && !isRecord(item)) issues.push(relativeIssueLine(`[${index}]`, `Expected ${rule.ofObjects}. Received ${describeWrongType(item)}`));
  }
  return issues;
}

function arraySchema(rule: ArrayRule): ApiPropertyOptions {
  // Items of objects are described by their classes, where the field's decorator knows them.
  return { type: 'array', ...(rule.ofStrings ? { items: { type: 'string' } } : {}), ...(rule.nonEmpty ? { minItems: 1 } : {}), ...(rule.max !== undefined ? { maxItems: rule.max } : {}) };
}

export function IsArrayField(rule: ArrayRule, doc?: FieldDoc): PropertyDecorator {
  return documentedField(arraySchema(rule), doc, Checked('isArrayField', (value) => arrayIssues(value, rule)));
}

/**
 * A class whose only rule is that `discriminator` is one of `allowed`: what an item with an
 * unknown discriminator becomes, so it fails with `Expected one of ... Received ...`.
 */
export function unknownVariant(discriminator: string, allowed: readonly string[]): DtoClass {
  class UnknownVariant {}
  IsOneOf(allowed)(UnknownVariant.prototype, discriminator);
  return UnknownVariant;
}

/**
 * Turns each object item of an array into the class its discriminator names (`fallback` for
 * any other). Anything else keeps class-transformer's own copy: the validated body never shares
 * objects with the client's, so dropping undeclared fields cannot touch the original.
 */
export function ArrayOfVariants(discriminator: string, variants: Readonly<Record<string, DtoClass>>, fallback: DtoClass): PropertyDecorator {
  return dtoTransform({ kind: 'array', discriminator, variants, fallback });
}

/** Turns an object into the class its discriminator names; anything else keeps class-transformer's copy. */
export function ObjectOfVariants(discriminator: string, variants: Readonly<Record<string, DtoClass>>): PropertyDecorator {
  return dtoTransform({ kind: 'variant', discriminator, variants });
}

/** Turns the value into an instance of `type()` when it is an object; anything else keeps class-transformer's copy. */
export function ObjectOf(type: () => DtoClass): PropertyDecorator {
  return dtoTransform({ kind: 'object', type });
}

/** null means the default, as in OpenAI's nullable fields; the services read only the value. */
export function NullMeansAbsent(): PropertyDecorator {
  return dtoTransform({ kind: 'value', map: (value) => (value === null ? undefined : value) });
}

/** A nested object validated against its class (undeclared fields inside it are dropped). */
export function NestedObject(type: () => DtoClass, expected = 'an object', doc?: FieldDoc): PropertyDecorator {
  return documentedField(
    // Swagger resolves a type function only when it is named `type`, as this property's arrow is.
    { type: () => type() },
    doc,
    ObjectOf(type),
    objectCheck(expected),
    ValidateNested({ message: (args: ValidationArguments) => `Expected ${expected}. Received ${describeWrongType(args.value)}` }),
  );
}

/**
 * Validates an instance the way the global pipe does, from inside another validator, and
 * returns its issues as lines relative to the decorated field, prefixed with `at` (e.g. `[2]`).
 * With `strip`, undeclared fields of the instance are dropped, as the pipe's whitelist would.
 */
export function instanceIssues(instance: object, at: string, strip: boolean): string[] {
  if (compiledValidation.validInstance(instance, strip)) return [];
  const errors = validateSync(instance, { whitelist: strip, forbidUnknownValues: false, validationError: { target: false, value: true } });
  return validationIssues(errors).map((issue) => relativeIssueLine(joinRelative(at, issue.path), issue.message));
}

function joinRelative(at: string, path: string): string {
  if (!path) return at;
  if (path.startsWith('[')) return `${at}${path}`;
  return `${at}.${path}`;
}

/** The issues of a plain object as an instance of `type`, which keeps every field (nothing is dropped). */
export function plainIssues(type: DtoClass, plain: Record<string, unknown>, at: string): string[] {
  if (acceptDto(type, plain) !== undefined) return [];
  return instanceIssues(plainToInstance(type, plain), at, false);
}
