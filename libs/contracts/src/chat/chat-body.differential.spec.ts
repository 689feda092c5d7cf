import { BadRequestException, ValidationPipe } from '@nestjs/common';
import * as classTransformer from 'class-transformer';
import { isDeepStrictEqual } from 'node:util';
import { acceptDto, compiledValidation, referenceValidationPipe } from '@igw/validation';
import { AzureChatCompletionRequestDto } from './azure-chat-completion-request.dto';
import { validateChatBody } from './chat-body';
import { AssistantMessageDto, CHAT_REQUEST_RULES, ChatCompletionRequestDto, StreamOptionsDto, TextContentPartDto, UserMessageDto } from './chat-completion-request.dto';
// The two specs of the chat request contract run in this file too: every body they send through
// the pipe (or through plainToInstance) is recorded below and joins the differential corpus, so
// a case added there is checked against the compiled acceptance here without being copied.
import './chat-completion-request.validation.spec';
import './chat-completion-request.dto.spec';
// eslint-disable-next-line @nx/enforce-module-boundaries
import { seededRandom } from '../../../../tools/emulator/src/seeded-random';
import { slotsOf, type Json, type JsonObject, type Slot } from '../json-slots.testing';

// The compiled acceptance (libs/validation/src/dto-acceptor.ts), on the chat body's
// DTOs, against class-transformer and class-validator alone (the reference pipe, with the
// compiled check of nested instances turned off), body by body: whenever the acceptor returns a value, the pipe must accept the
// same body and return an equal value (same classes, same own keys with undefined ones, same
// JSON on the wire, nothing shared with the client's body). The corpus: the bodies of the
// existing specs, valid bodies from a seeded generator over every field, and mutations of
// those (wrong types, numbers just out of range, missing and extra fields, prototype-named keys,
// nested junk). The acceptor may say "not sure" (undefined) for anything; the share of valid
// bodies it takes is held above a floor, so it keeps covering the common requests.

type Dto = typeof ChatCompletionRequestDto | typeof AzureChatCompletionRequestDto;
type NumberRule = { min?: number; max?: number; integer?: boolean };

const SEED = Number(process.env.CHAT_ACCEPTOR_SEED ?? 20_250_601);

const GENERATED_VALID = 1_000;
const MUTATED = 2_000;

/**
 * A body as the server sees it: from JSON.parse (in Jest's realm; structuredClone would make
 * objects of the outer realm, which the acceptor rightly does not take for plain objects).
 */
function parsed<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

// ---- recording the existing specs' bodies ------------------------------------------------------

const recorded = new Set<string>();
/** Only while the existing specs run: the checks below call the pipe too. */
let recording = true;

function record(body: unknown): void {
  if (recording && body !== undefined) recorded.add(JSON.stringify(body));
}

const originalTransform = ValidationPipe.prototype.transform;
jest.spyOn(ValidationPipe.prototype, 'transform').mockImplementation(function (this: ValidationPipe, value, metadata) {
  if (metadata.metatype === ChatCompletionRequestDto) record(value);
  return originalTransform.call(this, value, metadata);
});
const originalPlainToInstance = classTransformer.plainToInstance;
jest.spyOn(classTransformer, 'plainToInstance').mockImplementation(((type: unknown, value: unknown, options?: classTransformer.ClassTransformOptions) => {
  if (type === ChatCompletionRequestDto) record(value);
  return originalPlainToInstance(type as typeof ChatCompletionRequestDto, value as object, options);
}) as typeof classTransformer.plainToInstance);

// ---- the differential check --------------------------------------------------------------------

interface Outcome {
  text: string;
  /** The pipe accepted the body. */
  valid: boolean;
  /** The acceptor returned a value. */
  accepted: boolean;
  problem?: string;
}

const referencePipe = referenceValidationPipe();

/** What class-transformer and class-validator alone make of a body: nested instances are checked by class-validator too. */
async function reference(text: string, dto: Dto): Promise<unknown> {
  const compiled = jest.spyOn(compiledValidation, 'validInstance').mockReturnValue(false);
  try {
    return await referencePipe.transform(JSON.parse(text), { type: 'body', metatype: dto });
  } finally {
    compiled.mockRestore();
  }
}

async function compare(text: string, dto: Dto): Promise<Outcome> {
  const input: unknown = JSON.parse(text);
  const fast = acceptDto<InstanceType<Dto>>(dto, input);
  let slow: unknown;
  let valid = true;
  try {
    slow = await reference(text, dto);
  } catch (error) {
    // Anything but a 400 (none seen so far) is the pipe's own failure; only accepting such a body is wrong here.
    if (!(error instanceof BadRequestException) && fast !== undefined) return { text, valid: false, accepted: true, problem: `accepted a body the pipe fails on: ${String(error)}` };
    valid = false;
  }
  const outcome = { text, valid, accepted: fast !== undefined };
  if (JSON.stringify(input) !== text) return { ...outcome, problem: 'the acceptor changed the body' };
  if (fast === undefined) return outcome;
  if (!valid) return { ...outcome, problem: 'accepted a body the pipe refuses' };
  if (!(fast instanceof dto)) return { ...outcome, problem: `not a ${dto.name}` };
  if (!isDeepStrictEqual(fast, slow)) return { ...outcome, problem: `differs from the pipe's value:\n  acceptor ${show(fast)}\n  pipe     ${show(slow)}` };
  if (JSON.stringify(fast) !== JSON.stringify(slow)) return { ...outcome, problem: 'other JSON on the wire (key order)' };
  if (sharesObjects(fast, input)) return { ...outcome, problem: "shares an object with the client's body" };
  return outcome;
}

/** Classes and undefined fields made visible, for failure messages. */
function show(value: unknown): string {
  return JSON.stringify(value, function (this: unknown, _key, item: unknown) {
    if (item === undefined) return '<undefined>';
    if (item && typeof item === 'object' && !Array.isArray(item) && Object.getPrototypeOf(item) !== Object.prototype) {
      const fields: Record<string, unknown> = { $class: (item as object).constructor.name };
      for (const key of Object.keys(item)) fields[key] = (item as Record<string, unknown>)[key];
      return fields;
    }
    return item;
  });
}

function objectsOf(value: unknown, into = new Set<unknown>()): Set<unknown> {
  if (value && typeof value === 'object' && !into.has(value)) {
    into.add(value);
    for (const item of Object.values(value)) objectsOf(item, into);
  }
  return into;
}

function sharesObjects(result: unknown, input: unknown): boolean {
  const inputs = objectsOf(input);
  return [...objectsOf(result)].some((object) => inputs.has(object));
}

async function differential(texts: Iterable<string>, dto: Dto): Promise<{ outcomes: Outcome[]; problems: string[] }> {
  const outcomes: Outcome[] = [];
  for (const text of texts) outcomes.push(await compare(text, dto));
  const problems = outcomes.filter((outcome) => outcome.problem).map((outcome) => `${outcome.problem}\n  body ${outcome.text}`);
  return { outcomes, problems: problems.slice(0, 5) };
}

/** Share of the bodies the pipe accepts that the acceptor takes. */
function coverage(outcomes: Outcome[]): { valid: number; accepted: number; share: number } {
  const valid = outcomes.filter((outcome) => outcome.valid);
  const accepted = valid.filter((outcome) => outcome.accepted).length;
  return { valid: valid.length, accepted, share: valid.length ? accepted / valid.length : 0 };
}

function report(label: string, outcomes: Outcome[]): void {
  const { valid, accepted, share } = coverage(outcomes);
  process.stdout.write(`${label}: ${outcomes.length} bodies, ${valid} valid, acceptor took ${accepted} (${(share * 100).toFixed(1)}%)\n`);
}

// ---- a seeded generator of request bodies ------------------------------------------------------

type Random = () => number;


class Generator {
  constructor(private readonly random: Random) {}

  int(min: number, max: number): number {
    return min + Math.floor(this.random() * (max - min + 1));
  }

  chance(probability: number): boolean {
    return this.random() < probability;
  }

  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.random() * items.length)];
  }

  times<T>(min: number, max: number, make: (index: number) => T): T[] {
    return Array.from({ length: this.int(min, max) }, (_, index) => make(index));
  }

  /** Each optional field with its probability; the value from `make`. */
  some(object: JsonObject, fields: Record<string, [number, () => Json]>): JsonObject {
    for (const [key, [probability, make]] of Object.entries(fields)) if (this.chance(probability)) object[key] = make();
    return object;
  }

  // -- text and free-form JSON

  text(): string {
    return this.pick(['Hello', 'What is the weather in Paris?', '', ' ', 'line\nbreak', 'ünïcödé 18°C 🌍', 'x'.repeat(300), '{"json": true}', 'toString']);
  }

  name(): string {
    return this.pick(['get_weather', 'lookup-user', 'a', 'f_1', 'A'.repeat(64), 'search_web', 'run_sql']);
  }

  freeJson(depth = 0): Json {
    const kind = depth > 3 ? this.int(0, 3) : this.int(0, 5);
    switch (kind) {
      case 0:
        return this.text();
      case 1:
        return this.pick([0, -1, 1.5, 42, 1e21, -0.001, 7]);
      case 2:
        return this.pick([true, false]);
      case 3:
        return null;
      case 4:
        return this.times(0, 3, () => this.freeJson(depth + 1));
      default: {
        const object: JsonObject = {};
        for (let index = this.int(0, 4); index > 0; index--) object[this.pick(['a', 'b', 'type', 'value', 'nested', '0', '10', 'odd key', '', 'ünï'])] = this.freeJson(depth + 1);
        return object;
      }
    }
  }

  schema(depth = 0): JsonObject {
    const type = depth > 2 ? this.pick(['string', 'number', 'integer', 'boolean']) : this.pick(['object', 'object', 'array', 'string', 'number', 'integer', 'boolean', 'enum', 'anyOf']);
    const schema: JsonObject = {};
    switch (type) {
      case 'object': {
        const properties: JsonObject = {};
        const names = this.times(0, 4, () => this.pick(['city', 'unit', 'query', 'limit', 'filters', 'id', 'tags', 'when', 'type', 'default']));
        for (const property of names) properties[property] = this.schema(depth + 1);
        schema.type = 'object';
        schema.properties = properties;
        if (names.length && this.chance(0.6)) schema.required = names.slice(0, this.int(1, names.length));
        if (this.chance(0.4)) schema.additionalProperties = this.chance(0.8) ? false : this.schema(depth + 1);
        break;
      }
      case 'array':
        schema.type = 'array';
        schema.items = this.schema(depth + 1);
        if (this.chance(0.3)) schema.minItems = this.int(0, 3);
        break;
      case 'enum':
        schema.type = 'string';
        schema.enum = this.times(1, 4, () => this.pick(['celsius', 'fahrenheit', 'asc', 'desc', '']));
        break;
      case 'anyOf':
        schema.anyOf = this.times(1, 3, () => this.schema(depth + 1));
        break;
      default:
        schema.type = type;
        if (type !== 'boolean' && this.chance(0.2)) schema[type === 'string' ? 'maxLength' : 'minimum'] = this.int(0, 100);
        if (type === 'string' && this.chance(0.2)) schema.format = this.pick(['date-time', 'uri', 'email']);
    }
    if (this.chance(0.4)) schema.description = this.text();
    if (this.chance(0.1)) schema.$schema = 'http://json-schema.org/draft-07/schema#';
    if (this.chance(0.05)) schema.examples = [this.freeJson(3)];
    return schema;
  }

  /** Undeclared fields, dropped by the pipe (and by the acceptor). */
  extras(object: JsonObject, probability = 0.05): JsonObject {
    if (this.chance(probability)) object[this.pick(['junk', 'top_k', 'repetition_penalty', 'x_trace', 'annotations'])] = this.freeJson(1);
    return object;
  }

  // -- messages

  cacheControl(): JsonObject {
    return this.some({ type: 'ephemeral' }, { ttl: [0.5, () => this.pick(['5m', '1h'])] });
  }

  textPart(): JsonObject {
    return this.extras(this.some({ type: 'text', text: this.text() }, { cache_control: [0.2, () => this.cacheControl()] }));
  }

  userPart(): JsonObject {
    const part = this.pick<() => JsonObject>([
      () => this.textPart(),
      () => ({ type: 'image_url', image_url: this.some({ url: this.pick(['https://example.com/cat.png', 'data:image/png;base64,iVBORw0KGgo=']) }, { detail: [0.5, () => this.pick(['auto', 'low', 'high'])] }) }),
      () => ({ type: 'input_audio', input_audio: { data: 'UklGRg==', format: this.pick(['wav', 'mp3']) } }),
      () => ({
        type: 'file',
        file: this.some(this.chance(0.5) ? { file_id: 'file-abc' } : { file_data: 'data:application/pdf;base64,JVBE' }, { filename: [0.5, () => 'a.pdf'] }),
      }),
    ])();
    if (part.type !== 'text' && this.chance(0.1)) part.cache_control = this.cacheControl();
    return this.extras(part);
  }

  textContent(): Json {
    return this.chance(0.7) ? this.text() : this.times(0, 3, () => this.textPart());
  }

  toolCall(index: number): JsonObject {
    const call: JsonObject = this.chance(0.8)
      ? { id: `call_${index}`, type: 'function', function: { name: this.name(), arguments: this.pick(['{}', '{"city":"Paris"}', 'not json']) } }
      : { id: `call_${index}`, type: 'custom', custom: { name: this.name(), input: 'select 1' } };
    if (this.chance(0.2)) call.extra_content = { google: { thought_signature: 'c2ln' }, other: this.freeJson(1) };
    return this.extras(call);
  }

  message(): JsonObject {
    const role = this.pick(['user', 'user', 'user', 'system', 'developer', 'assistant', 'assistant', 'tool']);
    const name: [number, () => Json] = [0.15, () => (this.chance(0.8) ? this.pick(['alice', 'bot', '']) : null)];
    switch (role) {
      case 'user':
        return this.extras(this.some({ role, content: this.chance(0.6) ? this.text() : this.times(0, 4, () => this.userPart()) }, { name }));
      case 'assistant': {
        const message: JsonObject = { role };
        const shape = this.int(0, 3);
        if (shape === 0) message.content = this.textContent();
        if (shape === 1) Object.assign(message, { content: this.pick([null, 'Calling a tool']), tool_calls: this.times(1, 3, (index) => this.toolCall(index)) });
        if (shape === 2) message.tool_calls = this.times(1, 2, (index) => this.toolCall(index));
        if (shape === 3) message.function_call = { name: this.name(), arguments: '{}' };
        return this.extras(this.some(message, { name, refusal: [0.1, () => this.pick([null, 'I cannot help with that.'])] }));
      }
      case 'tool':
        return this.extras(this.some({ role, tool_call_id: `call_${this.int(0, 3)}`, content: this.textContent() }, { name }));
      default:
        return this.extras(this.some({ role, content: this.textContent() }, { name }));
    }
  }

  // -- tools

  tool(): JsonObject {
    const kind = this.pick(['function', 'function', 'function', 'function', 'custom', 'other']);
    if (kind === 'function') {
      const definition = this.some(
        { name: this.name() },
        { description: [0.7, () => this.text()], parameters: [0.8, () => this.schema()], strict: [0.2, () => this.pick([true, false, null])] },
      );
      return this.some({ type: 'function', function: this.extras(definition) }, { cache_control: [0.1, () => this.cacheControl()] });
    }
    if (kind === 'custom') {
      const format = this.pick<() => Json>([() => ({ type: 'text' }), () => ({ type: 'grammar', grammar: { definition: 'start: "a"', syntax: this.pick(['lark', 'regex']) } })]);
      return { type: 'custom', custom: this.some({ name: this.name() }, { description: [0.5, () => 'SQL'], format: [0.6, format] }) };
    }
    return this.some({ type: this.pick(['web_search_preview', 'code_interpreter', 'file_search']) }, { options: [0.5, () => this.freeJson(1)] });
  }

  toolChoice(): Json {
    return this.pick<() => Json>([
      () => this.pick(['none', 'auto', 'required']),
      () => ({ type: 'function', function: { name: this.name() } }),
      () => ({ type: 'custom', custom: this.chance(0.5) ? this.name() : { name: this.name() } }),
      () => ({ type: 'allowed_tools', allowed_tools: { mode: this.pick(['auto', 'required']), tools: this.times(0, 3, () => this.tool()) } }),
    ])();
  }

  // -- the request

  body(): JsonObject {
    const body: JsonObject = { model: this.pick(['mini', 'gpt-4o-mini', 'openai/gpt-4o', 'anthropic/claude-sonnet-4', 'm'.repeat(256)]), messages: this.times(1, 6, () => this.message()) };
    const nullable = <T extends Json>(make: () => T): (() => Json) => () => (this.chance(0.05) ? null : make());
    this.some(body, {
      provider: [0.1, () => this.pick(['auto', 'fallback', 'OpenAI', 'groq'])],
      max_completion_tokens: [0.15, () => this.pick([1, 256, 4096, 100_000])],
      max_tokens: [0.3, () => this.pick([1, 16, 512, 4096, 4096.5])],
      stream: [0.4, () => this.chance(0.6)],
      enable_search: [0.05, () => this.chance(0.5)],
      search_options: [0.05, nullable(() => this.some({}, { forced_search: [0.5, () => true], search_strategy: [0.5, () => this.pick(['turbo', 'max', 'agent'])], enable_source: [0.5, () => false] }))],
      tools: [0.35, nullable(() => this.times(1, 5, () => this.tool()))],
      normalize_tool_schemas: [0.05, () => this.chance(0.5)],
      parallel_tool_calls: [0.1, () => this.chance(0.5)],
      temperature: [0.4, () => this.pick([0, 0.2, 0.7, 1, 1.3, 2])],
      top_p: [0.15, () => this.pick([0.01, 0.5, 0.9, 1])],
      stop: [0.1, () => this.pick<() => Json>([() => 'END', () => this.times(0, 4, () => this.pick(['\n', 'END', '###'])), () => null])()],
      logit_bias: [0.05, nullable(() => ({ '50256': -100, '1': 100, '7': 0.5 }))],
      reasoning_effort: [0.1, () => this.pick(['none', 'low', 'medium', 'high'])],
      reasoning: [0.05, () => (this.chance(0.5) ? this.some({}, { effort: [0.7, () => this.pick(['low', 'medium', 'high'])], exclude: [0.3, () => true] }) : { max_tokens: this.pick([1, 2048]), effort: null })],
      n: [0.05, () => this.pick([1, 2, 128])],
      seed: [0.05, () => this.pick([-7, 0, 12345])],
      user: [0.05, () => 'user-42'],
      response_format: [
        0.1,
        () =>
          this.pick<() => Json>([
            () => ({ type: 'text' }),
            () => ({ type: 'json_object' }),
            () => ({ type: 'json_schema', json_schema: { name: 'answer', strict: true, schema: this.schema() } }),
          ])(),
      ],
      presence_penalty: [0.05, () => this.pick([-2, 0, 0.5, 2])],
      frequency_penalty: [0.05, () => this.pick([-2, -0.5, 2])],
      metadata: [0.05, () => ({ team: 'search', run: '7' })],
      store: [0.05, () => this.chance(0.5)],
      service_tier: [0.05, () => this.pick(['auto', 'flex', 'priority'])],
      modalities: [0.03, () => this.pick([['text'], ['text', 'audio'], []])],
      audio: [0.03, () => ({ voice: 'alloy', format: 'wav' })],
      prediction: [0.03, () => ({ type: 'content', content: 'old code' })],
      web_search_options: [0.03, () => ({ search_context_size: 'low', user_location: { type: 'approximate', approximate: { city: 'Oslo' } } })],
      verbosity: [0.03, () => this.pick(['low', 'medium', 'high'])],
    });
    if (body.stream === true && this.chance(0.6)) body.stream_options = this.chance(0.95) ? { include_usage: this.chance(0.7) } : null;
    if (this.chance(0.08)) {
      body.logprobs = this.pick([true, true, false, null]);
      if (body.logprobs === true && this.chance(0.6)) body.top_logprobs = this.pick([0, 5, 20]);
    }
    if (body.tools && this.chance(0.5)) body.tool_choice = this.toolChoice();
    else if (this.chance(0.03)) body.tool_choice = this.toolChoice();
    this.extras(body, 0.1);
    // Clients send fields in any order; the DTO keeps its own.
    return this.chance(0.3) ? Object.fromEntries(Object.entries(body).sort(() => this.random() - 0.5)) : body;
  }

  // -- mutations

  /** Numbers at and just beyond every bound of the contract's number rules, and fractions of integers. */
  boundary(): number {
    return this.pick(BOUNDARY_NUMBERS);
  }

  junk(): Json {
    return this.pick<() => Json>([
      () => null,
      () => this.pick([true, false]),
      () => this.boundary(),
      () => this.pick(['', ' ', 'x', 'true', '1', 'User', 'bad name!', 'a.b', 'a'.repeat(65), 'm'.repeat(257), 'ephemeral', 'text', 'function', 'json_schema', 'grammar', 'auto', 'none']),
      () => [],
      () => [this.freeJson(2)],
      () => ({}),
      () => ({ type: this.pick(['text', 'function', 'custom', 'ephemeral', 'image_url', 'allowed_tools', '']), junk: 1 }),
      () => this.freeJson(1),
    ])();
  }

  /** A value that belongs somewhere in a request, maybe not here. */
  misplaced(): Json {
    return this.pick<() => Json>([
      () => this.junk(),
      () => this.message(),
      () => this.textPart(),
      () => this.userPart(),
      () => this.tool(),
      () => this.toolChoice(),
      () => this.toolCall(0),
      () => this.cacheControl(),
      () => ({ include_usage: true }),
      () => ({ type: 'json_schema' }),
      () => ({ effort: 'low', max_tokens: 10 }),
    ])();
  }

  mutate(body: JsonObject): JsonObject {
    for (let count = this.int(1, 3); count > 0; count--) {
      if (this.chance(0.35)) {
        // A request field, present or not: its bounds, a wrong type, another field's value.
        set(body, this.pick(REQUEST_FIELDS), this.chance(0.4) ? this.boundary() : this.misplaced());
        continue;
      }
      const slots = slotsOf(body);
      const [parent, key] = this.pick(slots);
      const value = parent[key as never] as Json;
      switch (this.int(0, 7)) {
        case 0:
          set(parent, key, this.junk());
          break;
        case 1:
          set(parent, key, this.misplaced());
          break;
        case 2:
          if (Array.isArray(parent)) parent.splice(key as number, 1);
          else delete (parent as JsonObject)[key];
          break;
        case 3: {
          const target = this.pick(slots.map(([object]) => object).filter((object): object is JsonObject => !Array.isArray(object)));
          const name = this.pick(['junk', 'type', 'name', 'content', 'role', 'text', 'toString', 'constructor', '__proto__', 'prototype', 'valueOf', 'hasOwnProperty', 'isPrototypeOf', '__defineGetter__', 'toLocaleString']);
          set(target, name, this.chance(0.5) ? this.junk() : this.freeJson(1));
          break;
        }
        case 4:
          if (typeof value === 'number') set(parent, key, this.chance(0.5) ? this.boundary() : this.pick([value + 0.5, value - 0.5, -value, value * 10, value + 1e-9, value - 1e-9]));
          else if (typeof value === 'string') set(parent, key, this.pick(['', ' ', value.toUpperCase(), `${value} `, value.repeat(3), 5]));
          else if (typeof value === 'boolean') set(parent, key, this.pick([!value, String(value), Number(value)]));
          else set(parent, key, this.junk());
          break;
        case 5:
          set(parent, key, this.chance(0.5) ? [value] : { value });
          break;
        case 6:
          if (Array.isArray(value)) {
            const item = value.length ? value[0] : this.junk();
            for (let index = this.pick([1, 4, 128]); index > 0; index--) value.push(structuredClone(item));
          } else set(parent, key, this.junk());
          break;
        default:
          if (value && typeof value === 'object' && !Array.isArray(value)) {
            // A prototype-named key deep inside (e.g. a property called toString in a tool's schema).
            set(value, this.pick(['toString', 'constructor', '__proto__', 'prototype', 'valueOf', 'watch']), this.freeJson(2));
          } else set(parent, key, this.junk());
      }
    }
    return body;
  }
}

/** Every field of the request DTO. */
const REQUEST_FIELDS = Object.keys(new ChatCompletionRequestDto());

const BOUNDARY_NUMBERS = [
  ...new Set(
    Object.values(CHAT_REQUEST_RULES as Record<string, NumberRule>).flatMap((rule) => [
      ...[rule.min, rule.max].flatMap((bound) => (bound === undefined ? [] : [bound, bound - 1e-9, bound + 1e-9, bound - 0.5, bound + 0.5, bound - 1, bound + 1])),
      ...(rule.integer ? [0.5, 7.25] : []),
    ]),
  ),
  -1e9,
  1e9,
  -0,
];

/** Assignment that makes an own property even for `__proto__`, as JSON.parse does. */
function set(parent: JsonObject | Json[], key: string | number, value: Json): void {
  Object.defineProperty(parent, key, { value, enumerable: true, writable: true, configurable: true });
}

function corpus(): { generated: string[]; mutated: string[] } {
  const generator = new Generator(seededRandom(SEED));
  const generated = Array.from({ length: GENERATED_VALID }, () => JSON.stringify(generator.body()));
  const mutated = Array.from({ length: MUTATED }, () => JSON.stringify(generator.mutate(JSON.parse(generator.pick(generated)) as JsonObject)));
  return { generated, mutated };
}

/**
 * Valid bodies that together hold nearly every field and construct of the contract, for the slot
 * sweep (in parts, as the sweep's cost grows with the square of a body's size).
 */
const EVERYTHING: JsonObject[] = [
  {
    model: 'gpt-4o-mini',
    messages: [
      { role: 'system', content: [{ type: 'text', text: 'S', cache_control: { type: 'ephemeral', ttl: '1h' } }], name: 'rules' },
      { role: 'developer', content: 'D' },
      {
        role: 'user',
        name: 'alice',
        content: [
          { type: 'text', text: 'What is this?' },
          { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'high' }, cache_control: { type: 'ephemeral' } },
          { type: 'input_audio', input_audio: { data: 'UklGRg==', format: 'wav' } },
          { type: 'file', file: { file_id: 'file-1' } },
          { type: 'file', file: { file_data: 'data:application/pdf;base64,JVBE', filename: 'a.pdf' } },
        ],
      },
      {
        role: 'assistant',
        content: null,
        refusal: null,
        tool_calls: [
          { id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' }, extra_content: { google: { thought_signature: 'c2ln' } } },
          { id: 'call_2', type: 'custom', custom: { name: 'run_sql', input: 'select 1' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_1', content: [{ type: 'text', text: '18°C' }] },
      { role: 'assistant', function_call: { name: 'get_weather', arguments: '{}' } },
    ],
    stream: true,
    stream_options: { include_usage: true },
  },
  {
    model: 'gpt-4o-mini',
    messages: [{ role: 'user', content: 'Hi' }],
    tools: [
      {
        type: 'function',
        function: { name: 'get_weather', description: 'Weather', parameters: { type: 'object', properties: { city: { type: 'string' } }, required: ['city'] }, strict: true },
        cache_control: { type: 'ephemeral', ttl: '5m' },
      },
      { type: 'custom', custom: { name: 'run_sql', description: 'SQL', format: { type: 'grammar', grammar: { definition: 'start: "a"', syntax: 'lark' } } } },
      { type: 'web_search_preview', search_context_size: 'high' },
    ],
    tool_choice: { type: 'allowed_tools', allowed_tools: { mode: 'auto', tools: [{ type: 'function', function: { name: 'get_weather' } }] } },
    normalize_tool_schemas: false,
    parallel_tool_calls: true,
  },
  {
    model: 'gpt-4o-mini',
    provider: 'auto',
    messages: [{ role: 'user', content: 'Hi' }],
    max_completion_tokens: 100,
    max_tokens: 100,
    enable_search: true,
    search_options: { forced_search: true, search_strategy: 'agent', enable_source: true },
    temperature: 1,
    top_p: 0.5,
    stop: ['a', 'b'],
    logit_bias: { '1': 5 },
    logprobs: true,
    top_logprobs: 2,
    reasoning_effort: 'low',
    reasoning: { max_tokens: 100, exclude: false },
    n: 1,
    seed: 1,
    user: 'u',
    response_format: { type: 'json_schema', json_schema: { name: 'a', schema: { type: 'object' } } },
    presence_penalty: 0,
    frequency_penalty: 0,
    metadata: { a: '1' },
    store: true,
    service_tier: 'auto',
    modalities: ['text'],
    audio: { voice: 'alloy' },
    prediction: { type: 'content', content: 'x' },
    web_search_options: {},
    verbosity: 'low',
  },
  { model: 'm', messages: [{ role: 'user', content: 'Hi' }], tool_choice: { type: 'custom', custom: 'run_sql' } },
  { model: 'm', messages: [{ role: 'user', content: 'Hi' }], tool_choice: { type: 'custom', custom: { name: 'run_sql' } } },
  { model: 'm', messages: [{ role: 'user', content: 'Hi' }], tool_choice: { type: 'function', function: { name: 'f' } }, reasoning: { effort: 'high' } },
];

const SLOT_VALUES: Json[] = [null, true, 0, 0.5, 129, '', 'x', 'text', [], [{}], {}, { type: 'text', text: 'a' }, { name: 'f' }];
const FIELD_VALUES: Json[] = [...new Set<Json>([...BOUNDARY_NUMBERS, null, true, '', 'x', 'auto', [], ['x'], {}, { '1': 5 }, { x: 1 }, { '-1': 1 }, { type: 'text' }])];
/** Undeclared fields, fields of other classes, prototype-named keys. */
const EXTRA_FIELDS: Array<[string, Json]> = [
  ['junk', 1],
  ['type', 'text'],
  ['name', ''],
  ['content', null],
  ['effort', 'low'],
  ['json_schema', null],
  ['grammar', null],
  ['file_id', null],
  ['tool_calls', []],
  ['toString', 'x'],
  ['constructor', 'x'],
  ['prototype', 'x'],
  ['__proto__', {}],
  ['valueOf', 1],
];

/**
 * Single edits of EVERYTHING: each slot replaced by each of SLOT_VALUES, or removed; each object
 * given each of EXTRA_FIELDS; each array grown past the limits (4 stop sequences, 128 tools).
 */
function slotSweep(): string[] {
  const texts: string[] = [];
  for (const original of EVERYTHING) {
    const slots = slotsOf(original).length;
    const edit = (change: (slot: Slot) => void) => {
      for (let index = 0; index < slots; index++) {
        const body = parsed(original);
        change(slotsOf(body)[index]);
        texts.push(JSON.stringify(body));
      }
    };
    for (const value of SLOT_VALUES) edit(([parent, key]) => set(parent, key, parsed(value)));
    edit(([parent, key]) => (Array.isArray(parent) ? parent.splice(key as number, 1) : delete parent[key]));
    for (const [name, extra] of EXTRA_FIELDS) {
      edit(([parent, key]) => {
        const value = parent[key as never] as Json;
        if (value && typeof value === 'object' && !Array.isArray(value)) set(value, name, parsed(extra));
      });
    }
    for (const length of [5, 129]) {
      edit(([parent, key]) => {
        const value = parent[key as never] as Json;
        if (Array.isArray(value) && value.length > 0) while (value.length < length) value.push(parsed(value[0]));
      });
    }
  }
  return [...new Set(texts)];
}

/**
 * Each request field given each bound of the number rules and a few wrong types, on a body where
 * the fields others depend on (stream, logprobs) are set.
 */
function fieldSweep(): string[] {
  const texts: string[] = [];
  const base: JsonObject = { model: 'm', messages: [{ role: 'user', content: 'Hi' }], stream: true, logprobs: true };
  for (const field of REQUEST_FIELDS) for (const value of FIELD_VALUES) texts.push(JSON.stringify({ ...base, [field]: value }));
  for (const value of FIELD_VALUES) texts.push(JSON.stringify({ ...base, reasoning: { max_tokens: value } }), JSON.stringify({ ...base, logit_bias: { '7': value } }));
  const { model: _model, ...withoutModel } = base;
  texts.push(JSON.stringify(withoutModel));
  return [...new Set(texts)];
}

// ---- the tests ---------------------------------------------------------------------------------

/** Bodies as OpenAI SDKs and the bench send them: the acceptor must take every one. */
const COMMON: Array<[string, JsonObject]> = [
  ['the bench body', { model: 'mini', messages: [{ role: 'user', content: 'Hello' }], stream: false }],
  ['a minimal request', { model: 'gpt-4o-mini', messages: [{ role: 'user', content: 'Hi' }] }],
  [
    'an SDK request with tools, streaming usage, temperature and max_tokens',
    {
      model: 'gpt-4o-mini',
      messages: [
        { role: 'system', content: 'You are a helpful assistant.' },
        { role: 'user', content: 'What is the weather in Paris?' },
      ],
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: 'Current weather of a city',
            parameters: { type: 'object', properties: { city: { type: 'string' }, unit: { type: 'string', enum: ['celsius', 'fahrenheit'] } }, required: ['city'], additionalProperties: false },
            strict: true,
          },
        },
      ],
      tool_choice: 'auto',
      parallel_tool_calls: true,
      temperature: 0.7,
      top_p: 1,
      max_tokens: 512,
      stream: true,
      stream_options: { include_usage: true },
    },
  ],
  [
    'a tool-call round trip',
    {
      model: 'gpt-4o-mini',
      messages: [
        { role: 'developer', content: 'Be brief.' },
        { role: 'user', content: 'What is the weather in Paris?' },
        { role: 'assistant', content: null, tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } }] },
        { role: 'tool', tool_call_id: 'call_1', content: '18°C' },
      ],
      tools: [{ type: 'function', function: { name: 'get_weather', parameters: { type: 'object', properties: { city: { type: 'string' } } } } }],
      max_completion_tokens: 1024,
    },
  ],
  [
    'an image question',
    {
      model: 'gpt-4o',
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is this?' }, { type: 'image_url', image_url: { url: 'https://example.com/cat.png', detail: 'auto' } }] }],
      max_tokens: 300,
    },
  ],
  [
    'structured output',
    {
      model: 'gpt-4o-mini',
      messages: [{ role: 'user', content: 'Extract.' }],
      response_format: { type: 'json_schema', json_schema: { name: 'answer', strict: true, schema: { type: 'object', properties: { a: { type: 'string' } }, required: ['a'], additionalProperties: false } } },
      seed: 7,
      n: 1,
      logprobs: true,
      top_logprobs: 3,
    },
  ],
];

describe('the fast chat request acceptor against the validation pipe', () => {
  const { generated, mutated } = corpus();
  const slotEdits = slotSweep();
  const fieldEdits = fieldSweep();

  beforeAll(() => {
    recording = false;
  });

  it.each([
    ['POST /v1/chat/completions', ChatCompletionRequestDto],
    ['the Azure-style path', AzureChatCompletionRequestDto],
  ] as Array<[string, Dto]>)('%s: takes the common requests, as the pipe builds them', async (_path, dto) => {
    const results = await differential(
      COMMON.map(([, body]) => JSON.stringify(body)),
      dto,
    );
    expect(results.problems).toEqual([]);
    expect(results.outcomes.map((outcome, index) => [COMMON[index][0], outcome.valid, outcome.accepted])).toEqual(COMMON.map(([name]) => [name, true, true]));
  });

  it.each([
    ['POST /v1/chat/completions', ChatCompletionRequestDto],
    ['the Azure-style path', AzureChatCompletionRequestDto],
  ] as Array<[string, Dto]>)('%s: never differs from the pipe on the bodies of the existing specs', async (path, dto) => {
    expect(recorded.size).toBeGreaterThan(150);
    const { outcomes, problems } = await differential(recorded, dto);
    report(`${path}, existing spec bodies`, outcomes);
    expect(problems).toEqual([]);
    // Their valid bodies exercise every field, rare ones included; most must take the fast path.
    expect(coverage(outcomes).share).toBeGreaterThan(0.9);
  });

  it.each([
    ['POST /v1/chat/completions', ChatCompletionRequestDto],
    ['the Azure-style path', AzureChatCompletionRequestDto],
  ] as Array<[string, Dto]>)(`%s: never differs from the pipe on ${GENERATED_VALID} generated bodies, and takes nearly all valid ones`, async (path, dto) => {
    const { outcomes, problems } = await differential(generated, dto);
    report(`${path}, generated bodies`, outcomes);
    expect(problems).toEqual([]);
    const { valid, share } = coverage(outcomes);
    expect(valid).toBeGreaterThan(GENERATED_VALID * 0.9);
    expect(share).toBeGreaterThan(0.99);
  });

  it.each([
    ['POST /v1/chat/completions', ChatCompletionRequestDto],
    ['the Azure-style path', AzureChatCompletionRequestDto],
  ] as Array<[string, Dto]>)(`%s: never differs from the pipe on ${MUTATED} mutated bodies`, async (path, dto) => {
    const { outcomes, problems } = await differential(mutated, dto);
    report(`${path}, mutated bodies`, outcomes);
    expect(problems).toEqual([]);
    // The mutations must produce both kinds, or they test little.
    const { valid, accepted } = coverage(outcomes);
    expect(valid).toBeGreaterThan(MUTATED * 0.1);
    expect(MUTATED - valid).toBeGreaterThan(MUTATED * 0.5);
    expect(accepted).toBeGreaterThan(valid * 0.5);
  });

  // The Azure-style DTO differs only at the top (model), so the costly slot sweep runs once.
  it('POST /v1/chat/completions: never differs from the pipe on single edits of a body with every field', async () => {
    const { outcomes, problems } = await differential(slotEdits, ChatCompletionRequestDto);
    report('POST /v1/chat/completions, single edits of a body with every field', outcomes);
    expect(problems).toEqual([]);
    expect(outcomes.length).toBeGreaterThan(1_500);
  });

  it.each([
    ['POST /v1/chat/completions', ChatCompletionRequestDto],
    ['the Azure-style path', AzureChatCompletionRequestDto],
  ] as Array<[string, Dto]>)('%s: never differs from the pipe on every request field at the bounds of the number rules', async (path, dto) => {
    const { outcomes, problems } = await differential(fieldEdits, dto);
    report(`${path}, request fields at the bounds`, outcomes);
    expect(problems).toEqual([]);
    expect(coverage(outcomes).valid).toBeGreaterThan(200);
  });
});

describe('the acceptor, by example', () => {
  it('builds the classes the pipe builds', () => {
    const value = acceptDto(ChatCompletionRequestDto, 
      parsed({
        model: 'm',
        stream: true,
        stream_options: { include_usage: true },
        messages: [
          { role: 'user', content: [{ type: 'text', text: 'a' }] },
          { role: 'assistant', content: null, tool_calls: [{ id: 'c', type: 'function', function: { name: 'f', arguments: '{}' } }] },
        ],
      }),
    );
    expect(value).toBeInstanceOf(ChatCompletionRequestDto);
    expect(value?.messages[0]).toBeInstanceOf(UserMessageDto);
    expect((value?.messages[0].content as unknown[])[0]).toBeInstanceOf(TextContentPartDto);
    expect(value?.messages[1]).toBeInstanceOf(AssistantMessageDto);
    expect(value?.stream_options).toBeInstanceOf(StreamOptionsDto);
  });

  it.each<[string, unknown]>([
    ['a property called toString in a tool schema', { type: 'object', properties: { toString: { type: 'string' } } }],
    ['a property called constructor in a tool schema', { type: 'object', properties: { constructor: { type: 'string' } } }],
    ['a property called prototype in a tool schema', { type: 'object', properties: { prototype: { type: 'string' } } }],
    ['a __proto__ key in a tool schema', JSON.parse('{"type":"object","properties":{"__proto__":{"type":"string"}}}')],
  ])('is not sure about %s, which the pipe drops', async (_name, parameters) => {
    const body = { model: 'm', messages: [{ role: 'user', content: 'Hi' }], tools: [{ type: 'function', function: { name: 'f', parameters } }] };
    expect(acceptDto(ChatCompletionRequestDto, parsed(body))).toBeUndefined();
    const validated = await validateChatBody(parsed(body), { azure: false });
    expect(JSON.stringify(validated.tools)).toBe('[{"type":"function","function":{"name":"f","parameters":{"type":"object","properties":{}}}}]');
  });
});

describe('validateChatBody', () => {
  const settle = (promise: Promise<unknown>): Promise<{ value?: unknown; error?: unknown }> =>
    promise.then(
      (value) => ({ value }),
      (error: unknown) => ({ error }),
    );

  it.each([false, true])('answers like the pipe, errors included (azure: %p)', async (azure) => {
    const dto = azure ? AzureChatCompletionRequestDto : ChatCompletionRequestDto;
    expect(recorded.size).toBeGreaterThan(150);
    for (const text of recorded) {
      const viaPipe = await settle(reference(text, dto));
      const viaFunction = await settle(validateChatBody(JSON.parse(text), { azure }));
      if (viaPipe.error) {
        expect(viaFunction.error).toBeInstanceOf(BadRequestException);
        expect([text, (viaFunction.error as BadRequestException).getResponse()]).toEqual([text, (viaPipe.error as BadRequestException).getResponse()]);
      } else {
        expect([text, viaFunction.value instanceof dto && isDeepStrictEqual(viaFunction.value, viaPipe.value)]).toEqual([text, true]);
      }
    }
  });

  it('refuses what is not a JSON object as the pipe does', async () => {
    for (const body of [undefined, null, 'hello', 42, []]) {
      await expect(validateChatBody(body, { azure: false })).rejects.toThrow(/^Body validation error! model: Expected a non-empty string/);
    }
  });
});
