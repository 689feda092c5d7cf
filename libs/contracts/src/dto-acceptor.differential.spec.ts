import { BadRequestException, type ValidationPipe } from '@nestjs/common';
import { isDeepStrictEqual } from 'node:util';
import { GeminiBatchEmbedContentsRequestDto, GeminiCountTokensRequestDto, GeminiEmbedContentRequestDto, GeminiGenerateContentRequestDto } from './gemini/gemini-request.dto';
import { MessagesCountTokensRequestDto, MessagesRequestDto } from './messages/messages-request.dto';
import { ResponsesRequestDto } from './responses/responses-request.dto';
import { acceptDto, compiledValidation, type DtoClass, refusedFieldOf, createValidationPipe, referenceValidationPipe } from '@igw/validation';
import { classOfType, documentedClasses, propertyKeys, schemaOf, type AnyClass, type PropertySchema } from './dto-schemas.testing';
// The specs of these request contracts run in this file too: every body they send through the
// pipe is recorded and joins the corpus, so a case added there is checked here without a copy.
import './responses/responses-request.validation.spec';
import './messages/messages-request.validation.spec';
import './gemini/gemini-request.validation.spec';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { seededRandom } from '../../../tools/emulator/src/seeded-random';
import { slotsOf, type Json } from './json-slots.testing';

// The compiled acceptance (dto-acceptor.ts) against class-transformer and class-validator alone,
// on the body of every direct route besides chat (chat-body.differential.spec.ts has its own,
// deeper corpus). Bodies are generated from each DTO's OpenAPI metadata (the schema its field
// decorators derive from their rules: types, bounds, enums, variants), then mutated (each slot
// given wrong values or removed, undeclared and prototype-named keys added). For every body:
// when the acceptor returns a value the pipe accepts the body and returns an equal value (same
// classes, same JSON); when the pipe refuses, the acceptor never accepts. The acceptor may say
// "not sure" on a valid body; the share it takes of the valid generated bodies is held above a
// floor so it keeps covering the requests clients send.


const SEED = Number(process.env.DTO_ACCEPTOR_SEED ?? 20_261_203);
const GENERATED = 300;
const MUTATED_PER_BODY = 4;
/** The share of valid generated bodies the acceptor must take. */
const COVERAGE_FLOOR = 0.5;

/**
 * The body of each direct route other than chat, by route, with a small valid body of it: the
 * contract specs' valid bodies join it (some routes' specs send only bodies to refuse).
 */
const DIRECT_ROUTE_BODIES: Array<[string, DtoClass, Json]> = [
  ['POST /v1/responses', ResponsesRequestDto, { model: 'gpt-4o-mini', input: 'Hello' }],
  ['POST /v1/messages', MessagesRequestDto, { model: 'claude-sonnet-4-5', max_tokens: 64, messages: [{ role: 'user', content: 'Hello' }] }],
  ['POST /v1/messages/count_tokens', MessagesCountTokensRequestDto, { model: 'claude-sonnet-4-5', messages: [{ role: 'user', content: 'Hello' }] }],
  ['Gemini generateContent and streamGenerateContent', GeminiGenerateContentRequestDto, { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] }],
  ['Gemini countTokens', GeminiCountTokensRequestDto, { contents: [{ role: 'user', parts: [{ text: 'Hello' }] }] }],
  ['Gemini embedContent', GeminiEmbedContentRequestDto, { content: { parts: [{ text: 'Hello' }] } }],
  ['Gemini batchEmbedContents', GeminiBatchEmbedContentsRequestDto, { requests: [{ model: 'models/text-embedding-004', content: { parts: [{ text: 'Hello' }] } }] }],
];

// ---- recording the existing specs' bodies ------------------------------------------------------

const recorded = new Map<DtoClass, Set<string>>(DIRECT_ROUTE_BODIES.map(([, dto, minimal]) => [dto, new Set<string>([JSON.stringify(minimal)])]));
// The app's pipe class (it answers from the compiled acceptance before it calls ValidationPipe's transform).
const appPipe = Object.getPrototypeOf(createValidationPipe()) as ValidationPipe;
const originalTransform = appPipe.transform;
jest.spyOn(appPipe, 'transform').mockImplementation(function (this: ValidationPipe, value, metadata) {
  const bodies = metadata.metatype ? recorded.get(metadata.metatype as DtoClass) : undefined;
  // The reference pipe below is this file's own; only the contract specs' pipes are recorded.
  if (this !== referencePipe && bodies && value !== undefined) bodies.add(JSON.stringify(value));
  return originalTransform.call(this, value, metadata);
});

// ---- a generator of bodies from the OpenAPI metadata -------------------------------------------

const classesByName = new Map<string, AnyClass>(documentedClasses(DIRECT_ROUTE_BODIES.map(([, dto]) => dto)).map((type) => [type.name, type]));

class Generator {
  constructor(private readonly random: () => number) {}

  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.random() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)];
  }

  instance(type: AnyClass, depth: number): Json {
    const body: Record<string, Json> = {};
    for (const key of propertyKeys(type)) {
      const schema = schemaOf(type, key) ?? {};
      const required = schema.required !== false;
      if (required ? this.chance(0.97) : this.chance(depth > 2 ? 0.1 : 0.4)) body[key] = this.value(schema, depth + 1);
    }
    return body;
  }

  value(schema: PropertySchema, depth: number): Json {
    if (schema.example !== undefined && this.chance(0.3)) return schema.example as Json;
    if (schema.$ref) {
      const type = classesByName.get(schema.$ref.replace('#/components/schemas/', ''));
      return type ? this.instance(type, depth) : {};
    }
    if (schema.oneOf) return this.value(this.pick(schema.oneOf), depth);
    if (Array.isArray(schema.enum)) return this.pick(schema.enum) as Json;
    if (schema.isArray) return this.array({ ...schema, isArray: false }, schema, depth);
    const type = classOfType(schema.type);
    if (type) return this.instance(type, depth);
    switch (schema.type) {
      case 'string':
      case String:
        return this.string(schema);
      case 'integer':
        return this.number(schema, true);
      case 'number':
      case Number:
        return this.number(schema, false);
      case 'boolean':
      case Boolean:
        return this.chance(0.5);
      case 'array':
        return this.array(schema.items ?? {}, schema, depth);
      default:
        return this.freeJson(depth);
    }
  }

  string(schema: PropertySchema): string {
    const longest = Math.min(schema.maxLength ?? 12, 12);
    const shortest = Math.min(schema.minLength ?? 0, longest);
    return this.pick(['weather', 'x', 'Paris 18°C', 'a_b-c', 'https://example.com/a.png']).padEnd(shortest, 'y').slice(0, this.int(Math.max(shortest, 1), longest));
  }

  number(schema: PropertySchema, integer: boolean): number {
    const low = schema.minimum ?? -1_000;
    const high = Math.min(schema.maximum ?? 1_000, low + 1_000);
    const edge = this.chance(0.3) ? this.pick([low, high]) : low + this.random() * (high - low);
    return integer ? Math.round(edge) : edge;
  }

  array(items: PropertySchema, schema: PropertySchema, depth: number): Json[] {
    const most = Math.min(schema.maxItems ?? 3, depth > 3 ? 1 : 3);
    const length = this.int(Math.min(schema.minItems ?? 0, most), most);
    return Array.from({ length }, () => this.value(items, depth + 1));
  }

  freeJson(depth: number): Json {
    const kind = depth > 4 ? this.int(0, 2) : this.int(0, 4);
    if (kind === 0) return this.pick(['text', 1, true, null]);
    if (kind === 1) return 'free';
    if (kind === 2) return this.int(0, 9);
    if (kind === 3) return [this.freeJson(depth + 1)];
    return { type: 'object', nested: this.freeJson(depth + 1) };
  }
}

// ---- mutations -----------------------------------------------------------------------------------

const WRONG_VALUES: Json[] = [null, true, 0, -1, 0.5, 1e20, '', 'x', [], [{}], {}, { type: 'text', text: 'a' }];
const EXTRA_KEYS: Array<[string, Json]> = [
  ['junk', 1],
  ['type', 'text'],
  ['role', 'user'],
  ['toString', 'x'],
  ['constructor', 'x'],
  ['prototype', 'x'],
  ['__proto__', {}],
];

function mutate(generator: Generator, text: string): string {
  const body = JSON.parse(text) as Json;
  const slots = slotsOf(body);
  if (slots.length === 0) return JSON.stringify(generator.pick(WRONG_VALUES));
  const [parent, key] = generator.pick(slots);
  const current = (parent as Record<string, Json>)[key as string];
  const kind = generator.int(0, 3);
  if (kind === 0) (parent as Record<string, Json>)[key as string] = generator.pick(WRONG_VALUES);
  else if (kind === 1 && Array.isArray(parent)) parent.splice(key as number, 1);
  else if (kind === 1) delete (parent as Record<string, Json>)[key as string];
  else if (kind === 2 && current && typeof current === 'object' && !Array.isArray(current)) {
    const [name, value] = generator.pick(EXTRA_KEYS);
    // defineProperty: `__proto__` as an own key, as JSON.parse makes it.
    Object.defineProperty(current, name, { value, enumerable: true, writable: true, configurable: true });
  } else if (Array.isArray(current) && current.length > 0) while (current.length < 130) current.push(current[0]);
  else (parent as Record<string, Json>)[key as string] = generator.pick(WRONG_VALUES);
  return JSON.stringify(body);
}

// ---- the comparison ------------------------------------------------------------------------------

const referencePipe = referenceValidationPipe();

interface Outcome {
  valid: boolean;
  accepted: boolean;
  problem?: string;
}

async function compare(text: string, dto: DtoClass): Promise<Outcome> {
  const input: unknown = JSON.parse(text);
  // As the app's pipe asks it: a field a marked DTO refuses is refused before the acceptance runs.
  const fast = refusedFieldOf(dto, input) ? undefined : acceptDto(dto, input);
  let slow: unknown;
  let valid = true;
  const compiled = jest.spyOn(compiledValidation, 'validInstance').mockReturnValue(false);
  try {
    slow = await referencePipe.transform(JSON.parse(text), { type: 'body', metatype: dto });
  } catch (error) {
    if (!(error instanceof BadRequestException) && fast !== undefined) return { valid: false, accepted: true, problem: `accepted a body the pipe fails on: ${String(error)}` };
    valid = false;
  } finally {
    compiled.mockRestore();
  }
  const outcome = { valid, accepted: fast !== undefined };
  if (fast === undefined) return outcome;
  if (!valid) return { ...outcome, problem: 'accepted a body the pipe refuses' };
  if (!(fast instanceof dto)) return { ...outcome, problem: `not a ${dto.name}` };
  if (!isDeepStrictEqual(fast, slow)) return { ...outcome, problem: `differs from the pipe's value: ${JSON.stringify(fast)} against ${JSON.stringify(slow)}` };
  if (JSON.stringify(fast) !== JSON.stringify(slow)) return { ...outcome, problem: 'other JSON on the wire (key order)' };
  return outcome;
}

async function differential(texts: Iterable<string>, dto: DtoClass): Promise<{ outcomes: Outcome[]; problems: string[] }> {
  const outcomes: Outcome[] = [];
  const problems: string[] = [];
  for (const text of texts) {
    const outcome = await compare(text, dto);
    outcomes.push(outcome);
    if (outcome.problem && problems.length < 5) problems.push(`${outcome.problem}\n  body ${text}`);
  }
  return { outcomes, problems };
}

function share(outcomes: Outcome[]): { valid: number; accepted: number; share: number } {
  const valid = outcomes.filter((outcome) => outcome.valid);
  const accepted = valid.filter((outcome) => outcome.accepted).length;
  return { valid: valid.length, accepted, share: valid.length ? accepted / valid.length : 0 };
}

/** Bodies made of the fields of valid bodies: each top-level field taken from one of them at random (or left out). */
function recombined(generator: Generator, valid: readonly string[], count: number): string[] {
  const bodies = valid.map((text) => JSON.parse(text) as Record<string, Json>).filter((body) => body && typeof body === 'object' && !Array.isArray(body));
  if (bodies.length === 0) return [];
  return Array.from({ length: count }, () => {
    const body = structuredClone(generator.pick(bodies));
    for (const donor of [generator.pick(bodies), generator.pick(bodies)]) {
      for (const [key, value] of Object.entries(donor)) if (generator.chance(0.4)) body[key] = value;
    }
    return JSON.stringify(body);
  });
}

describe.each(DIRECT_ROUTE_BODIES)('the compiled acceptance against the validation pipe: %s', (route, dto) => {
  const generator = new Generator(seededRandom(SEED + route.length));
  const generated = [...new Set(Array.from({ length: GENERATED }, () => JSON.stringify(generator.instance(dto, 0))))];
  const validRecorded: string[] = [];

  it('agrees on the bodies of the contract specs', async () => {
    const bodies = [...recorded.get(dto)!];
    const { outcomes, problems } = await differential(bodies, dto);
    expect(problems).toEqual([]);
    validRecorded.push(...bodies.filter((_, index) => outcomes[index].valid));
    expect(validRecorded.length).toBeGreaterThan(0);
  });

  it('agrees on bodies generated from the OpenAPI metadata', async () => {
    const { problems } = await differential(generated, dto);
    expect(problems).toEqual([]);
  });

  it("agrees on recombinations of the specs' valid bodies, and takes most of the valid ones", async () => {
    const bodies = [...new Set(recombined(generator, validRecorded, GENERATED))];
    const { outcomes, problems } = await differential(bodies, dto);
    expect(problems).toEqual([]);
    const { valid, accepted, share: taken } = share(outcomes);
    process.stdout.write(`${route}: ${validRecorded.length} valid bodies of the specs; ${bodies.length} recombined, ${valid} valid, acceptor took ${accepted}\n`);
    expect(valid).toBeGreaterThan(bodies.length / 4);
    expect(taken).toBeGreaterThanOrEqual(COVERAGE_FLOOR);
  });

  it('agrees on mutations of the generated and the valid bodies', async () => {
    const sources = [...generated, ...validRecorded, ...recombined(generator, validRecorded, GENERATED)];
    const mutated = new Set(sources.flatMap((text) => Array.from({ length: MUTATED_PER_BODY }, () => mutate(generator, text))));
    const { outcomes, problems } = await differential(mutated, dto);
    expect(problems).toEqual([]);
    const { valid, accepted } = share(outcomes);
    process.stdout.write(`${route}: ${outcomes.length} mutated, ${valid} valid, acceptor took ${accepted}\n`);
    expect(outcomes.length - valid).toBeGreaterThan(outcomes.length / 4);
  });
});
