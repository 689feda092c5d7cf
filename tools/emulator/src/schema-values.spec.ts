import fc from 'fast-check';
import { z } from 'zod';
import { anyJsonObject, answerSeed, toolArguments, valueForSchema } from './schema-values';

// The oracle is zod: schemas are built as zod types (their JSON Schema from z.toJSONSchema, as
// the Vercel AI SDK and LangChain send them) or written as JSON Schema and read back with
// z.fromJSONSchema; a generated value must parse.

const leaf: fc.Arbitrary<z.ZodType> = fc.oneof(
  fc.constant(z.string()),
  fc.integer({ min: 0, max: 20 }).chain((min) => fc.integer({ min, max: min + 30 }).map((max) => z.string().min(min).max(max))),
  fc.constant(z.email()),
  fc.constant(z.url()),
  fc.constant(z.uuid()),
  fc.constant(z.iso.datetime()),
  fc.constant(z.iso.date()),
  fc.constant(z.boolean()),
  fc.constant(z.null()),
  fc.integer({ min: -1000, max: 1000 }).chain((min) => fc.integer({ min, max: min + 500 }).map((max) => z.number().int().min(min).max(max))),
  fc.double({ min: -1e6, max: 1e6, noNaN: true }).chain((min) => fc.double({ min: 0.001, max: 1e3, noNaN: true }).map((width) => z.number().gt(min).lt(min + width))),
  fc.integer({ min: 1, max: 12 }).chain((step) => fc.integer({ min: 0, max: 200 }).map((min) => z.number().int().multipleOf(step).min(min).max(min + step * 5))),
  fc.uniqueArray(fc.string({ minLength: 1, maxLength: 8 }), { minLength: 1, maxLength: 5 }).map((values) => z.enum(values as [string, ...string[]])),
  fc.oneof(fc.string({ maxLength: 10 }), fc.integer(), fc.boolean()).map((value) => z.literal(value)),
);

const schema: fc.Arbitrary<z.ZodType> = fc.letrec<{ node: z.ZodType }>((tie) => ({
  node: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc.dictionary(fc.stringMatching(/^[a-z][a-zA-Z0-9_]{0,10}$/), tie('node'), { minKeys: 1, maxKeys: 5 }).map((shape) => z.object(shape)),
    fc.dictionary(fc.stringMatching(/^[a-z][a-z0-9_]{0,10}$/), tie('node'), { maxKeys: 4 }).map((shape) => z.strictObject(shape)),
    fc.tuple(tie('node'), fc.integer({ min: 0, max: 6 })).map(([item, min]) => z.array(item).min(min)),
    fc.tuple(tie('node'), fc.integer({ min: 1, max: 4 })).map(([item, max]) => z.array(item).max(max)),
    fc.tuple(tie('node'), tie('node')).map(([a, b]) => z.union([a, b])),
    tie('node').map((inner) => inner.nullable()),
    tie('node').map((inner) => z.object({ kept: inner, maybe: inner.optional() })),
  ),
})).node;

describe('valueForSchema', () => {
  it('makes values that satisfy the JSON Schema of any zod type', () => {
    fc.assert(
      fc.property(schema, fc.integer(), (type, seed) => {
        const jsonSchema = z.toJSONSchema(type);
        const value = valueForSchema(jsonSchema, seed);
        const parsed = type.safeParse(value);
        if (!parsed.success) throw new Error(`${JSON.stringify(value)} does not satisfy ${JSON.stringify(jsonSchema)}: ${parsed.error.message}`);
      }),
      { numRuns: 400 },
    );
  });

  it('makes text that streams word by word: single spaces, none at either end', () => {
    fc.assert(
      fc.property(schema, fc.integer(), (type, seed) => {
        const jsonSchema = z.toJSONSchema(type);
        // An enum or a literal the schema fixes is written as it is, its own spacing included.
        fc.pre(!/\s{2}|[^\S ]/.test(JSON.stringify(jsonSchema)));
        const text = JSON.stringify(valueForSchema(jsonSchema, seed));
        expect(text.trim().split(/\s+/).join(' ')).toBe(text);
      }),
      { numRuns: 200 },
    );
  });

  it('is deterministic for a seed', () => {
    const jsonSchema = z.toJSONSchema(z.object({ name: z.string(), tags: z.array(z.string()), score: z.number() }));
    expect(valueForSchema(jsonSchema, 7)).toEqual(valueForSchema(jsonSchema, 7));
    expect(answerSeed(jsonSchema, 'prompt')).toBe(answerSeed(jsonSchema, 'prompt'));
    expect(answerSeed(jsonSchema, 'prompt')).not.toBe(answerSeed(jsonSchema, 'another prompt'));
  });

  it('follows $ref into $defs and definitions, recursive ones within a bounded depth', () => {
    const recursive = {
      $defs: { node: { type: 'object', properties: { value: { type: 'integer', minimum: 1 }, children: { type: 'array', items: { $ref: '#/$defs/node' } } }, required: ['value', 'children'], additionalProperties: false } },
      $ref: '#/$defs/node',
    };
    const draft7 = { definitions: { colour: { enum: ['red', 'green'] } }, type: 'object', properties: { colour: { $ref: '#/definitions/colour' } }, required: ['colour'] };
    const root = { type: 'object', properties: { name: { type: 'string' }, parent: { anyOf: [{ $ref: '#' }, { type: 'null' }] } }, required: ['name', 'parent'] };
    // zod reads `$defs` only: the draft-7 `definitions` case is checked by hand.
    for (let seed = 0; seed < 20; seed++) expect(['red', 'green']).toContain((valueForSchema(draft7, seed) as { colour: string }).colour);
    for (const jsonSchema of [recursive, root]) {
      for (let seed = 0; seed < 50; seed++) {
        const value = valueForSchema(jsonSchema, seed);
        expect(z.fromJSONSchema(jsonSchema as never).safeParse(value).success).toBe(true);
        expect(JSON.stringify(value).length).toBeLessThan(200_000);
      }
    }
  });

  it('reads what JSON Schema writers other than zod send: type lists, draft-4 exclusive bounds, allOf, oneOf, const, minProperties', () => {
    const cases: object[] = [
      { type: ['string', 'null'], minLength: 3 },
      { type: 'number', minimum: 5, exclusiveMinimum: true, maximum: 6, exclusiveMaximum: true },
      { allOf: [{ type: 'object', properties: { a: { type: 'string' } }, required: ['a'] }, { properties: { b: { const: 3 } }, required: ['b'] }] },
      { oneOf: [{ type: 'integer', minimum: 10 }, { type: 'string', format: 'email' }] },
      { type: 'object', minProperties: 3, additionalProperties: { type: 'integer' } },
      { type: 'array', prefixItems: [{ type: 'string' }, { type: 'boolean' }], minItems: 2 },
      { type: 'array', items: { enum: [1, 2, 3, 4] }, uniqueItems: true, minItems: 3 },
      { type: 'string', format: 'date-time' },
    ];
    for (const jsonSchema of cases) {
      for (let seed = 0; seed < 30; seed++) {
        const value = valueForSchema(jsonSchema, seed);
        const parsed = z.fromJSONSchema(jsonSchema as never).safeParse(value);
        if (!parsed.success) throw new Error(`${JSON.stringify(value)} does not satisfy ${JSON.stringify(jsonSchema)}`);
      }
    }
  });

  it("reads Gemini's OpenAPI schemas: upper-case types, nullable, numbers written as strings", () => {
    const gemini = { type: 'OBJECT', properties: { when: { type: 'STRING', format: 'date-time' }, count: { type: 'INTEGER', minimum: '2', maximum: '4' }, notes: { type: 'ARRAY', items: { type: 'STRING' }, minItems: '2' }, score: { type: 'NUMBER', nullable: true } }, required: ['when', 'count', 'notes'] };
    const value = valueForSchema(gemini, 3) as Record<string, unknown>;
    expect(z.object({ when: z.iso.datetime(), count: z.number().int().min(2).max(4), notes: z.array(z.string()).min(2), score: z.number() }).safeParse(value).success).toBe(true);
  });
});

describe('toolArguments', () => {
  it('fills a location with Paris, as the weather call always did', () => {
    expect(toolArguments({ type: 'object', properties: { location: { type: 'string' } }, required: ['location'] }, 1)).toEqual({ location: 'Paris' });
    expect(toolArguments(undefined, 1)).toEqual({ location: 'Paris' });
  });

  it("satisfies the tool's parameters", () => {
    const parameters = z.object({ query: z.string().min(1), limit: z.number().int().min(1).max(10), filters: z.array(z.enum(['new', 'used'])).min(1) });
    expect(parameters.safeParse(toolArguments(z.toJSONSchema(parameters), 9)).success).toBe(true);
  });
});

describe('anyJsonObject', () => {
  it('is a JSON object', () => {
    expect(anyJsonObject(4)).toEqual(expect.objectContaining({ answer: expect.any(String) }));
  });
});

describe('bounds', () => {
  it('keeps the answer to a hostile schema bounded', () => {
    let schema: Record<string, unknown> = { type: 'string', minLength: 1e9 };
    for (let level = 0; level < 6; level++) schema = { type: 'array', minItems: 1e9, items: schema };
    const started = Date.now();
    const text = JSON.stringify(valueForSchema(schema, 1));
    expect(text.length).toBeLessThan(5_000_000);
    expect(Date.now() - started).toBeLessThan(2_000);
  });
});
