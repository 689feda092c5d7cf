import { DECORATORS } from '@nestjs/swagger';

// For specs: the OpenAPI metadata the DTO classes carry (what SwaggerModule turns into the
// document's schemas), read class by class.

/** A property's OpenAPI options as its decorators left them. */
export interface PropertySchema {
  type?: unknown;
  enum?: unknown[];
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  pattern?: string;
  minItems?: number;
  maxItems?: number;
  items?: PropertySchema;
  /** Swagger's own array form (`type: [String]`): `type` is then the items' type. */
  isArray?: boolean;
  required?: boolean;
  nullable?: boolean;
  example?: unknown;
  oneOf?: PropertySchema[];
  $ref?: string;
  additionalProperties?: unknown;
  properties?: Record<string, PropertySchema>;
}

export type AnyClass = abstract new (...args: never[]) => object;

export function isClass(value: unknown): value is AnyClass {
  return typeof value === 'function' && value.prototype !== undefined && value.name !== '' && value.name !== 'type';
}

const BUILT_IN: unknown[] = [String, Number, Boolean, Object, Array];

/** The class a property's `type` names (lazily or not), or undefined for a primitive or a schema type name. */
export function classOfType(declared: unknown): AnyClass | undefined {
  const resolved = typeof declared === 'function' && declared.name === 'type' ? (declared as () => unknown)() : declared;
  return isClass(resolved) && !BUILT_IN.includes(resolved) ? resolved : undefined;
}

/** The documented properties of a class, its parents' included, in declaration order. */
export function propertyKeys(type: AnyClass): string[] {
  const keys = (Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES_ARRAY, type.prototype) as string[] | undefined) ?? [];
  return [...new Set(keys.map((key) => key.slice(1)))];
}

export function schemaOf(type: AnyClass, key: string): PropertySchema | undefined {
  return Reflect.getMetadata(DECORATORS.API_MODEL_PROPERTIES, type.prototype, key) as PropertySchema | undefined;
}

/** The classes a class's schema names: its properties' types, its extra models, its parent. */
function namedClasses(type: AnyClass): AnyClass[] {
  const found: AnyClass[] = [...((Reflect.getMetadata(DECORATORS.API_EXTRA_MODELS, type) as AnyClass[] | undefined) ?? [])];
  for (const key of propertyKeys(type)) {
    const named = classOfType(schemaOf(type, key)?.type);
    if (named) found.push(named);
  }
  const parent = Object.getPrototypeOf(type) as unknown;
  if (isClass(parent)) found.push(parent);
  return found;
}

/** `roots` and every class their schemas name, transitively. */
export function documentedClasses(roots: readonly AnyClass[]): AnyClass[] {
  const seen = new Set<AnyClass>();
  const pending = [...roots];
  while (pending.length > 0) {
    const type = pending.pop()!;
    if (seen.has(type)) continue;
    seen.add(type);
    pending.push(...namedClasses(type));
  }
  return [...seen];
}
