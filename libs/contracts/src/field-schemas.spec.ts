import { getMetadataStorage, type ValidationArguments } from 'class-validator';
import * as contracts from './index';
import { documentedClasses, isClass, schemaOf, type AnyClass, type PropertySchema } from './dto-schemas.testing';

// Every field checked by a field decorator, in every request DTO the contracts export and the
// classes they document (nested types, variants, extra models), is documented with the bounds
// its check enforces: the check is probed at the edges the schema states (and beyond them where
// it states none), so a bound the validator enforces and the document leaves out, or states
// wrongly, fails here whichever way the two were written.

type Schema = PropertySchema;

const FIELD_CHECKS = ['isNumberField', 'isStringField', 'isOneOf', 'isArrayField', 'isBooleanField'] as const;
type FieldCheck = (typeof FIELD_CHECKS)[number];

const requestDtos = Object.entries(contracts)
  .filter(([name, value]) => name.endsWith('RequestDto') && isClass(value))
  .map(([, value]) => value as AnyClass);

interface Field {
  type: AnyClass;
  property: string;
  check: FieldCheck;
  accepts: (value: unknown) => boolean;
}

function fieldChecks(type: AnyClass): Field[] {
  const storage = getMetadataStorage();
  return storage.getTargetValidationMetadatas(type as never, '', true, false).flatMap((metadata) => {
    const [constraint] = storage.getTargetValidatorConstraints(metadata.constraintCls);
    const check = constraint?.name as FieldCheck | undefined;
    if (!check || !FIELD_CHECKS.includes(check)) return [];
    const instance = constraint.instance as { validate: (value: unknown, args: ValidationArguments) => boolean };
    const accepts = (value: unknown) => instance.validate(value, { value, constraints: [], targetName: type.name, object: {}, property: metadata.propertyName });
    return [{ type, property: metadata.propertyName, check, accepts }];
  });
}

/** What is wrong with the schema of one field against its check; empty when they agree. */
function disagreements({ accepts, check }: Field, schema: Schema): string[] {
  const wrong: string[] = [];
  const expect = (value: unknown, accepted: boolean, why: string) => {
    if (accepts(value) !== accepted) wrong.push(`${why}: the check ${accepted ? 'refuses' : 'accepts'} ${JSON.stringify(value)}`);
  };
  switch (check) {
    case 'isNumberField': {
      const integer = schema.type === 'integer';
      if (!integer && schema.type !== 'number') wrong.push(`type ${String(schema.type)}, not integer or number`);
      const low = schema.minimum ?? -1e300;
      const high = schema.maximum ?? 1e300;
      const step = integer ? 1 : Math.max(Math.abs(low), Math.abs(high), 1) * 1e-9;
      expect(low, true, `minimum ${String(schema.minimum)}`);
      expect(high, true, `maximum ${String(schema.maximum)}`);
      if (schema.minimum !== undefined) expect(low - step, false, `minimum ${schema.minimum}`);
      if (schema.maximum !== undefined) expect(high + step, false, `maximum ${schema.maximum}`);
      if (low < 0.5 && high > 0.5) expect(0.5, !integer, `type ${String(schema.type)}`);
      break;
    }
    case 'isStringField': {
      if (schema.type !== 'string') wrong.push(`type ${String(schema.type)}, not string`);
      if (schema.pattern !== undefined) {
        expect('\u0000', false, `pattern ${schema.pattern}`);
        break;
      }
      const longest = schema.maxLength ?? 10_000;
      expect('x'.repeat(longest), true, `maxLength ${String(schema.maxLength)}`);
      if (schema.maxLength !== undefined) expect('x'.repeat(longest + 1), false, `maxLength ${schema.maxLength}`);
      expect('', schema.minLength === undefined, `minLength ${String(schema.minLength)}`);
      break;
    }
    case 'isOneOf': {
      if (!Array.isArray(schema.enum)) {
        wrong.push('no enum');
        break;
      }
      for (const value of schema.enum) expect(value, true, 'enum');
      expect('not-one-of-the-values', false, 'enum');
      break;
    }
    case 'isArrayField': {
      if (schema.type !== 'array' && !schema.isArray) wrong.push(`type ${String(schema.type)}, not array`);
      const ofStrings = schema.items?.type === 'string' || (schema.isArray && schema.type === String);
      const item = ofStrings ? 'x' : {};
      const longest = schema.maxItems ?? 1_000;
      expect(new Array(longest).fill(item), true, `maxItems ${String(schema.maxItems)}`);
      if (schema.maxItems !== undefined) expect(new Array(longest + 1).fill(item), false, `maxItems ${schema.maxItems}`);
      expect([], schema.minItems === undefined, `minItems ${String(schema.minItems)}`);
      if (ofStrings) expect([1], false, 'items of type string');
      break;
    }
    case 'isBooleanField':
      if (schema.type !== 'boolean') wrong.push(`type ${String(schema.type)}, not boolean`);
      break;
  }
  return wrong;
}

describe('the OpenAPI schema of every request field checked by a field decorator', () => {
  const classes = documentedClasses(requestDtos);
  const fields = classes.flatMap(fieldChecks);

  it('covers the request DTOs and the classes they document', () => {
    expect(requestDtos.map((type) => type.name)).toEqual(expect.arrayContaining(['ChatCompletionRequestDto', 'ResponsesRequestDto', 'MessagesRequestDto', 'GeminiGenerateContentRequestDto']));
    expect(classes.length).toBeGreaterThan(requestDtos.length);
    expect(new Set(fields.map((field) => field.check))).toEqual(new Set(FIELD_CHECKS));
  });

  it('states the bounds, enum and item limits its check enforces', () => {
    const wrong = fields.flatMap((field) => {
      const schema = schemaOf(field.type, field.property);
      if (!schema) return [`${field.type.name}.${field.property}: checked by ${field.check} but not documented`];
      return disagreements(field, schema).map((problem) => `${field.type.name}.${field.property} (${field.check}): ${problem}`);
    });
    expect(wrong).toEqual([]);
  });

  it('would catch a schema that states a bound the check does not have', () => {
    const [model] = fieldChecks(contracts.ChatCompletionRequestDto).filter((field) => field.property === 'model');
    expect(disagreements(model, { type: 'string', minLength: 1, maxLength: 256 })).toEqual([]);
    expect(disagreements(model, { type: 'string', minLength: 1, maxLength: 255 })).toEqual([expect.stringContaining('maxLength 255')]);
    expect(disagreements(model, { type: 'string' })).toEqual([expect.stringContaining('maxLength undefined'), expect.stringContaining('minLength undefined')]);
  });
});
