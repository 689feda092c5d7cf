import { getMetadataStorage, type MetadataStorage } from 'class-validator';
import { describeWrongType, quoteList } from './validation-issues';

/**
 * Request bodies whose undeclared fields are refused rather than dropped. The validation pipe
 * drops undeclared fields (`whitelist`), which suits APIs whose clients send fields the gateway
 * may ignore; for an API whose fields each change what the answer is (OpenAI's Responses:
 * `background`, `conversation`, `prompt`), dropping one answers something the client did not
 * ask for. A marked class names what it does not serve, and why; a field it neither declares nor
 * names is refused as unknown.
 */

/** A field the API has and the gateway does not serve: values it may take that mean the same as leaving it out, and why any other is refused. */
export interface UnservedField {
  /** Values equal to the field's absence (null always is). */
  asAbsent?: readonly unknown[];
  /** `Expected <expected>`: what may be sent instead. */
  expected: string;
  /** Why: the sentence after the expectation. */
  why: string;
}

const refusing = new WeakMap<object, Readonly<Record<string, UnservedField>>>();

/** Marks a body DTO: its undeclared top-level fields are a 400 naming them (the validation pipe checks it before anything else). */
export function RefusesUnknownFields(unserved: Readonly<Record<string, UnservedField>> = {}): ClassDecorator {
  return (target) => {
    refusing.set(target, unserved);
  };
}

/** The fields a DTO class declares (those with a validation decorator, its parents' included). */
export function knownFields(type: Parameters<MetadataStorage['getTargetValidationMetadatas']>[0]): string[] {
  const metadata = getMetadataStorage().getTargetValidationMetadatas(type, '', true, false);
  return [...new Set(metadata.map((entry) => entry.propertyName))];
}

const knownByClass = new WeakMap<object, ReadonlySet<string>>();

/**
 * The first refused field of `value` for a class marked with {@link RefusesUnknownFields}:
 * its name and the message (`Expected ... Received ...`); undefined for an unmarked class, a
 * value that is not an object (the DTO's own rules word that), or a body with no refused field.
 */
export function refusedFieldOf(type: object, value: unknown): { field: string; message: string } | undefined {
  const unserved = refusing.get(type);
  if (unserved === undefined || typeof value !== 'object' || value === null || Array.isArray(value)) return undefined;
  let known = knownByClass.get(type);
  if (known === undefined) {
    known = new Set(knownFields(type as Parameters<typeof knownFields>[0]));
    knownByClass.set(type, known);
  }
  for (const [field, sent] of Object.entries(value as Record<string, unknown>)) {
    if (known.has(field)) continue;
    const rule = Object.prototype.hasOwnProperty.call(unserved, field) ? unserved[field] : undefined;
    if (rule === undefined) return { field, message: `Expected one of the fields ${quoteList([...known])}. Received an unknown field` };
    if (sent === null || sent === undefined || (rule.asAbsent ?? []).some((allowed) => allowed === sent)) continue;
    return { field, message: `Expected ${rule.expected}: ${rule.why}. Received ${describeWrongType(sent)}` };
  }
  return undefined;
}
