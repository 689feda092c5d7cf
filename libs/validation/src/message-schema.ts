/**
 * Schemas of the messages that cross a trust boundary on a queue: one declaration gives the
 * message's TypeScript type (`MessageOf`) and its runtime check (`messageProblem`), whose answer
 * is the first problem found, worded `<path> is not <what was expected>` (kept by the consumer
 * with the refused message, for an operator).
 */

/** One field: what it must be, and the check of a value. `T` exists only for the inferred type. */
export interface FieldSchema<T, Optional extends boolean = boolean> {
  readonly optional: Optional;
  /** The problem of `value` at `path` (e.g. `prices[2].unit`), or undefined when it is sound. */
  readonly problem: (value: unknown, path: string) => string | undefined;
  readonly type?: T;
}

export type Shape = Readonly<Record<string, FieldSchema<unknown>>>;

type Required<S extends Shape> = { -readonly [K in keyof S as S[K]['optional'] extends true ? never : K]: TypeOfField<S[K]> };
type Optional<S extends Shape> = { -readonly [K in keyof S as S[K]['optional'] extends true ? K : never]?: TypeOfField<S[K]> };
type TypeOfField<F> = F extends FieldSchema<infer T> ? T : never;
/** The TypeScript type of a message of shape `S`. */
export type MessageOf<S extends Shape> = { -readonly [K in keyof (Required<S> & Optional<S>)]: (Required<S> & Optional<S>)[K] };

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

/** A field checked by `sound`, `expected` naming what it must be (`a non-empty string`). */
export function field<T>(expected: string, sound: (value: unknown) => value is T): FieldSchema<T, false> {
  return { optional: false, problem: (value, path) => (sound(value) ? undefined : `${path} is not ${expected}`) };
}

/** A field taken as sent, whatever it holds: its consumer reads it with a check of its own. */
export function anyValue(): FieldSchema<unknown, false> {
  return { optional: false, problem: () => undefined };
}

/** The field may be absent (undefined); null is a wrong value like any other. */
export function optional<T>(schema: FieldSchema<T>): FieldSchema<T, true> {
  return { optional: true, problem: (value, path) => (value === undefined ? undefined : schema.problem(value, path)) };
}

export function stringField(expected: string, rule: { minLength?: number; maxLength?: number; pattern?: RegExp } = {}): FieldSchema<string, false> {
  return field(expected, (value): value is string => {
    if (typeof value !== 'string') return false;
    if (rule.minLength !== undefined && value.length < rule.minLength) return false;
    if (rule.maxLength !== undefined && value.length > rule.maxLength) return false;
    return !rule.pattern || rule.pattern.test(value);
  });
}

/** A safe integer within the bounds. */
export function integerField(expected: string, rule: { min?: number; max?: number }): FieldSchema<number, false> {
  return field(expected, (value): value is number => Number.isSafeInteger(value) && (rule.min === undefined || (value as number) >= rule.min) && (rule.max === undefined || (value as number) <= rule.max));
}

/** A finite number within the bounds. */
export function numberField(expected: string, rule: { min?: number }): FieldSchema<number, false> {
  return field(expected, (value): value is number => typeof value === 'number' && Number.isFinite(value) && (rule.min === undefined || value >= rule.min));
}

/** An object of any keys whose values are `values` (a key shows in a path cut to `keyLength` characters). */
export function recordField<T>(values: FieldSchema<T>, keyLength: number): FieldSchema<Record<string, T>, false> {
  return {
    optional: false,
    problem: (value, path) => {
      if (!isRecord(value)) return `${path} is not an object`;
      for (const [key, item] of Object.entries(value)) {
        const problem = values.problem(item, `${path}.${key.slice(0, keyLength)}`);
        if (problem) return problem;
      }
      return undefined;
    },
  };
}

export function arrayField<T>(items: FieldSchema<T>): FieldSchema<T[], false> {
  return {
    optional: false,
    problem: (value, path) => {
      if (!Array.isArray(value)) return `${path} is not an array`;
      for (const [index, item] of value.entries()) {
        const problem = items.problem(item, `${path}[${index}]`);
        if (problem) return problem;
      }
      return undefined;
    },
  };
}

/** An object of `shape`'s fields (others are let through); anything else fails on its first field. */
export function objectField<S extends Shape>(shape: S): FieldSchema<MessageOf<S>, false> {
  return { optional: false, problem: (value, path) => shapeProblem(shape, isRecord(value) ? value : {}, `${path}.`) };
}

function shapeProblem(shape: Shape, value: Record<string, unknown>, prefix: string): string | undefined {
  for (const [key, schema] of Object.entries(shape)) {
    const problem = schema.problem(value[key], `${prefix}${key}`);
    if (problem) return problem;
  }
  return undefined;
}

/** The first problem of a message against its shape, in the shape's order, or undefined when it has none. */
export function messageProblem<S extends Shape>(shape: S, candidate: unknown): string | undefined {
  if (!isRecord(candidate)) return 'not an object';
  return shapeProblem(shape, candidate, '');
}

/** Whether the message is sound against its shape: the type guard of `messageProblem`. */
export function isMessageOf<S extends Shape>(shape: S, candidate: unknown): candidate is MessageOf<S> {
  return messageProblem(shape, candidate) === undefined;
}
