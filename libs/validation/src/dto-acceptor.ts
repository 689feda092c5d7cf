import { plainToInstance, Transform, TransformationType } from 'class-transformer';
import { defaultMetadataStorage } from 'class-transformer/cjs/storage';
import { getMetadataStorage, IS_OPTIONAL, ValidationTypes, type ValidationArguments } from 'class-validator';

/**
 * Request DTOs validated without class-transformer and class-validator doing the work, yet by
 * their rules: the decorators on the DTO classes are the only place a rule is written.
 *
 * For each DTO class this module reads, once, what the decorators registered (class-validator's
 * conditions, constraints and nested validations; the transforms declared with
 * {@link dtoTransform}) and answers a JSON body in one walk: the very instance the validation
 * pipe would return (same classes, undeclared fields dropped, free-form values copied, same key
 * order), or `undefined` where the body is invalid or the walk is not sure. The pipe then runs
 * as before and alone words the errors, so every message stays written once too.
 *
 * Not sure, among others: keys named like Object.prototype members or `prototype` (the pipe
 * strips or skips them), values JSON.parse cannot make, free-form values nested deeper than
 * MAX_DEPTH, an asynchronous constraint, and any class-transformer metadata other than
 * {@link dtoTransform}'s (a class carrying one is always left to the pipe).
 */

/** A DTO class; instances are what class-transformer builds and class-validator checks. */
export type DtoClass = new () => object;

/** The transforms the request DTOs use, as data: class-transformer runs them, and so does this module. */
export type DtoTransformSpec =
  /** An object becomes an instance of `type()`; anything else is copied. */
  | { kind: 'object'; type: () => DtoClass }
  /** An object becomes the class its `discriminator` names (if it names one); anything else is copied. */
  | { kind: 'variant'; discriminator: string; variants: Readonly<Record<string, DtoClass>> }
  /** Each object item of an array becomes the class its `discriminator` names, or `fallback`. */
  | { kind: 'array'; discriminator: string; variants: Readonly<Record<string, DtoClass>>; fallback: DtoClass }
  /** The copied value, mapped (null as absent ...). */
  | { kind: 'value'; map: (value: unknown) => unknown };

const transformSpecs = new WeakMap<object, DtoTransformSpec>();

/** A class-transformer `@Transform` that this module can also perform, from its spec. */
export function dtoTransform(spec: DtoTransformSpec): PropertyDecorator {
  const transform = (params: { value: unknown; key: string; obj: unknown }): unknown => {
    const raw = isRecord(params.obj) ? params.obj[params.key] : undefined;
    const copy = params.value;
    switch (spec.kind) {
      case 'object':
        return isRecord(raw) ? plainToInstance(spec.type(), raw) : copy;
      case 'variant': {
        const type = isRecord(raw) ? variantOf(raw, spec.discriminator, spec.variants) : undefined;
        return type ? plainToInstance(type, raw) : copy;
      }
      case 'array':
        // Non-object items keep class-transformer's copy, so nothing is shared with the client's body.
        if (!Array.isArray(raw) || !Array.isArray(copy)) return copy;
        return raw.map((item: unknown, index) => (isRecord(item) ? plainToInstance(variantOf(item, spec.discriminator, spec.variants) ?? spec.fallback, item) : copy[index]));
      case 'value':
        return spec.map(copy);
    }
  };
  transformSpecs.set(transform, spec);
  return Transform(transform, { toClassOnly: true });
}

/**
 * The instance of `type` the validation pipe would return for this JSON value, or undefined
 * when it would refuse the value or this module is not sure.
 */
export function acceptDto<T extends object>(type: new () => T, value: unknown): T | undefined {
  const plan = planOf(type);
  if (plan === UNCOMPILABLE) return undefined;
  try {
    const instance = build(type, plan, value);
    return isValid(instance, plan, false) ? (instance as T) : undefined;
  } catch (error) {
    if (error === NOT_SURE) return undefined;
    throw error;
  }
}

/**
 * Whether an instance (built by class-transformer or by {@link acceptDto}) passes its class's
 * rules; with `strip`, its undeclared fields are dropped first, as `whitelist` does. False means
 * invalid or not sure: the caller then asks class-validator, which words the issues.
 */
function validInstance(instance: object, strip: boolean): boolean {
  const plan = planOf(instance.constructor as AnyClass);
  if (plan === UNCOMPILABLE) return false;
  try {
    return isValid(instance as Source, plan, strip);
  } catch (error) {
    if (error === NOT_SURE) return false;
    throw error;
  }
}

/** The check `instanceIssues` asks first; an object, so a differential test can turn it off. */
export const compiledValidation = { validInstance };

// ---------------------------------------------------------------------------------------------
// Plans: what the decorators of one class registered, read once
// ---------------------------------------------------------------------------------------------

type Source = Record<string, unknown>;
/** A constructor, as instances name theirs. */
type AnyClass = new () => object;

interface Constraint {
  validate: (value: unknown, args: ValidationArguments) => unknown;
  each: boolean;
  condition?: (object: object, value: unknown) => boolean;
  constraints: unknown[];
}

interface Property {
  name: string;
  /** IsOptional: null and undefined skip every check. */
  optional: boolean;
  /** ValidateIf: every one must hold for the property to be checked. */
  conditions: Array<(object: object, value: unknown) => boolean>;
  constraints: Constraint[];
  nested: boolean;
  transform?: DtoTransformSpec;
}

interface Plan {
  targetName: string;
  byName: ReadonlyMap<string, Property>;
  properties: readonly Property[];
}

const UNCOMPILABLE = Symbol('left to the pipe');
const plans = new WeakMap<object, Plan | typeof UNCOMPILABLE>();

function planOf(type: AnyClass): Plan | typeof UNCOMPILABLE {
  let plan = plans.get(type);
  if (plan === undefined) {
    plan = compile(type);
    plans.set(type, plan);
  }
  return plan;
}

const KNOWN_TYPES: ReadonlySet<string> = new Set([ValidationTypes.CONDITIONAL_VALIDATION, ValidationTypes.CUSTOM_VALIDATION, ValidationTypes.NESTED_VALIDATION]);

function compile(type: AnyClass): Plan | typeof UNCOMPILABLE {
  const storage = getMetadataStorage();
  // The arguments class-validator's own `validate(instance)` passes: no schema, no groups.
  const metadatas = storage.getTargetValidationMetadatas(type, undefined as unknown as string, false, false);
  if (metadatas.length === 0) return UNCOMPILABLE;
  const byName = new Map<string, Property>();
  for (const metadata of metadatas) {
    if (!KNOWN_TYPES.has(metadata.type)) return UNCOMPILABLE;
    let property = byName.get(metadata.propertyName);
    if (!property) {
      property = { name: metadata.propertyName, optional: false, conditions: [], constraints: [], nested: false };
      byName.set(metadata.propertyName, property);
    }
    if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION && metadata.name === IS_OPTIONAL) property.optional = true;
    else if (metadata.type === ValidationTypes.CONDITIONAL_VALIDATION) property.conditions.push(metadata.constraints[0] as Property['conditions'][number]);
    else if (metadata.type === ValidationTypes.NESTED_VALIDATION) property.nested = true;
    else {
      for (const constraint of storage.getTargetValidatorConstraints(metadata.constraintCls)) {
        if (constraint.async) return UNCOMPILABLE;
        const instance = constraint.instance as { validate: Constraint['validate'] };
        property.constraints.push({ validate: instance.validate.bind(instance), each: metadata.each, condition: metadata.validateIf, constraints: metadata.constraints });
      }
    }
  }
  for (const property of byName.values()) {
    if (defaultMetadataStorage.findTypeMetadata(type, property.name) || defaultMetadataStorage.findExposeMetadata(type, property.name)) return UNCOMPILABLE;
    if (defaultMetadataStorage.findExcludeMetadata(type, property.name)) return UNCOMPILABLE;
    const transforms = defaultMetadataStorage.findTransformMetadatas(type, property.name, TransformationType.PLAIN_TO_CLASS);
    if (transforms.length > 1) return UNCOMPILABLE;
    if (transforms.length === 1) {
      const spec = transformSpecs.get(transforms[0].transformFn);
      if (!spec) return UNCOMPILABLE;
      property.transform = spec;
    }
  }
  if (defaultMetadataStorage.getExposedMetadatas(type).length > 0 || defaultMetadataStorage.getExcludedMetadatas(type).length > 0) return UNCOMPILABLE;
  return { targetName: type.name, byName, properties: [...byName.values()] };
}

// ---------------------------------------------------------------------------------------------
// Building: class-transformer's plainToInstance, for JSON values
// ---------------------------------------------------------------------------------------------

/** Thrown to leave the walk; one instance, so leaving costs no stack trace. */
const NOT_SURE = new Error('not sure');

function notSure(): never {
  throw NOT_SURE;
}

/** Deeper free-form values are left to the pipe (whose class-transformer recurses without a limit). */
const MAX_DEPTH = 64;

function isRecord(value: unknown): value is Source {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isPlainObject(value: unknown): value is Source {
  return typeof value === 'object' && value !== null && Object.getPrototypeOf(value) === Object.prototype;
}

/**
 * Keys the pipe treats specially: Nest strips `__proto__`, `prototype` and `constructor` from
 * the body in place, and class-transformer skips any key that Object.prototype has.
 */
function isSpecialKey(key: string): boolean {
  return key in Object.prototype || key === 'prototype';
}

function variantOf(item: Source, discriminator: string, variants: Readonly<Record<string, DtoClass>>): DtoClass | undefined {
  const tag = item[discriminator];
  return typeof tag === 'string' && Object.hasOwn(variants, tag) ? variants[tag] : undefined;
}

/**
 * The instance from a plain object: every key read in the client's order (a declared one copied
 * or transformed, an undeclared one copied and dropped, as class-transformer then `whitelist`
 * do). The class's own constructor makes it, so it has the same own keys as class-transformer's.
 */
function build(type: AnyClass, plan: Plan, value: unknown): Source {
  if (!isPlainObject(value)) notSure();
  const instance = new type() as Source;
  const { byName } = plan;
  for (const key in value) {
    if (isSpecialKey(key)) notSure();
    const property = byName.get(key);
    if (property === undefined) copyJson(value[key], 0);
    else instance[key] = property.transform ? transformed(property.transform, value[key]) : copyJson(value[key], 0);
  }
  return instance;
}

/** The transform applied to the client's value; class-transformer's copy of it made only where the transform keeps it. */
function transformed(spec: DtoTransformSpec, raw: unknown): unknown {
  switch (spec.kind) {
    case 'object':
      return isRecord(raw) ? nested(spec.type(), raw) : copyJson(raw, 0);
    case 'variant': {
      const type = isRecord(raw) ? variantOf(raw, spec.discriminator, spec.variants) : undefined;
      return type ? nested(type, raw) : copyJson(raw, 0);
    }
    case 'array':
      if (!Array.isArray(raw)) return copyJson(raw, 0);
      return raw.map((item: unknown) => (isRecord(item) ? nested(variantOf(item, spec.discriminator, spec.variants) ?? spec.fallback, item) : copyJson(item, 1)));
    case 'value':
      return spec.map(copyJson(raw, 0));
  }
}

function nested(type: AnyClass, value: unknown): Source {
  const plan = planOf(type);
  if (plan === UNCOMPILABLE) notSure();
  return build(type, plan, value);
}

/** A JSON value as class-transformer copies it: new arrays and plain objects, the same keys in the same order. */
function copyJson(value: unknown, depth: number): unknown {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value : notSure();
    case 'object': {
      if (value === null) return null;
      if (depth >= MAX_DEPTH) notSure();
      if (Array.isArray(value)) {
        const copy: unknown[] = [];
        // An index loop, so a hole (never made by JSON.parse) is seen as undefined and refused.
        for (let index = 0; index < value.length; index++) copy.push(copyJson(value[index], depth + 1));
        return copy;
      }
      if (Object.getPrototypeOf(value) !== Object.prototype) notSure();
      const object = value as Source;
      const copy: Source = {};
      for (const key in object) {
        if (isSpecialKey(key)) notSure();
        copy[key] = copyJson(object[key], depth + 1);
      }
      return copy;
    }
    default:
      return notSure();
  }
}

// ---------------------------------------------------------------------------------------------
// Checking: class-validator's executor (whitelist on, no groups), answering only yes or no
// ---------------------------------------------------------------------------------------------

/** With `strip`, undeclared fields are deleted first, here and in nested instances (built instances have none). */
function isValid(object: Source, plan: Plan, strip: boolean): boolean {
  if (strip) for (const key of Object.keys(object)) if (!plan.byName.has(key)) delete object[key];
  for (const property of plan.properties) {
    const value = object[property.name];
    if (property.optional && (value === null || value === undefined)) continue;
    let checked = true;
    for (const condition of property.conditions) checked = condition(object, value) && checked;
    if (!checked) continue;
    const { constraints } = property;
    if (constraints.length > 0) {
      // One arguments object for the property's constraints: they read it, none keeps it.
      const args: ValidationArguments = { targetName: plan.targetName, property: property.name, object, value, constraints: [] };
      for (const constraint of constraints) if (!meets(constraint, args)) return false;
    }
    if (property.nested && value !== undefined && !nestedValid(value, strip)) return false;
  }
  return true;
}

function meets(constraint: Constraint, args: ValidationArguments): boolean {
  const { value } = args;
  if (constraint.condition && !constraint.condition(args.object, value)) return true;
  args.constraints = constraint.constraints;
  if (!constraint.each || !Array.isArray(value)) return answer(constraint.validate(value, args));
  for (const item of value) if (!answer(constraint.validate(item, args))) return false;
  return true;
}

function answer(result: unknown): boolean {
  if (result instanceof Promise) notSure();
  return Boolean(result);
}

/** ValidateNested: every item of an array, or the object itself, valid by its own class. */
function nestedValid(value: unknown, strip: boolean): boolean {
  if (Array.isArray(value)) {
    for (const item of value) if (!nestedValid(item, strip)) return false;
    return true;
  }
  if (typeof value !== 'object' || value === null) return false;
  // Only instances of compiled classes: a plain object under ValidateNested would be emptied by the whitelist.
  const plan = planOf(value.constructor as AnyClass);
  if (plan === UNCOMPILABLE) notSure();
  return isValid(value as Source, plan, strip);
}
