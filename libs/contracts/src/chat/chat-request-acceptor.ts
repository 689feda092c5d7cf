import { AzureChatCompletionRequestDto } from './azure-chat-completion-request.dto';
import {
  CHAT_REQUEST_RULES,
  ChatCompletionRequestDto,
  MAX_STOP_SEQUENCES,
  REASONING_EFFORTS,
  REASONING_OBJECT_EFFORTS,
  ReasoningDto,
  RESPONSE_FORMAT_TYPES,
  ResponseFormatDto,
  SEARCH_STRATEGIES,
  SearchOptionsDto,
  StreamOptionsDto,
} from './chat-completion-request.dto';
import {
  AudioContentPartDto,
  CACHE_CONTROL_TYPES,
  CACHE_TTLS,
  CacheControlDto,
  FileContentPartDto,
  FileDataDto,
  hasFileDataOrId,
  IMAGE_DETAILS,
  ImageContentPartDto,
  ImageUrlDto,
  InputAudioDto,
  TextContentPartDto,
} from './chat-content.dto';
import { AssistantMessageDto, hasToolCalls, SystemMessageDto, ToolMessageDto, UserMessageDto, type ChatMessage } from './chat-messages.dto';
import {
  ALLOWED_TOOLS_MODES,
  AllowedToolsDto,
  CUSTOM_TOOL_FORMAT_TYPES,
  CustomToolCallDto,
  FUNCTION_NAME_RULE,
  FunctionToolCallDto,
  GRAMMAR_SYNTAXES,
  MAX_TOOLS,
  NamedToolDto,
  TOOL_CHOICE_MODES,
  ToolCallCustomDto,
  ToolCallFunctionDto,
  ToolChoiceAllowedToolsDto,
  ToolChoiceCustomDto,
  ToolChoiceFunctionDto,
} from './chat-tools.dto';
import { numberIssues, stringIssues, type DtoClass, type NumberRule, type StringRule } from '../validation/field-validators';

/**
 * The fast path of chat request validation.
 *
 * The global validation pipe (class-transformer's plainToInstance, then class-validator with
 * `whitelist`) costs a large share of a chat request's CPU. For the bodies clients send every
 * day, this module builds the very value the pipe would return — the same DTO classes, the
 * same undeclared fields dropped, free-form objects (tool schemas, metadata, extra_content)
 * copied as they are — in one walk over the body, and returns it only when it is sure the pipe
 * would accept the body. Anything it is not sure about (every invalid body, and some valid but
 * rare ones) gives `undefined`: the caller then runs the pipe, which alone words errors, so no
 * message is written twice. Rules (ranges, allowed values) are read from the constants the
 * DTO decorators use; chat-request-acceptor.differential.spec.ts checks this module against
 * the pipe on a large corpus.
 *
 * Says "not sure" for, among others:
 * - keys named like Object.prototype members (`constructor`, `toString`, `__proto__` ...) or
 *   `prototype`, anywhere in the body: the pipe strips or skips them in ways not worth copying;
 * - values that JSON.parse cannot produce (undefined, functions, class instances, NaN ...);
 * - free-form values nested deeper than MAX_DEPTH levels.
 */
export function acceptChatCompletionRequest(body: unknown): ChatCompletionRequestDto | undefined {
  return attempt(body, ChatCompletionRequestDto, CHAT_REQUEST);
}

/** The same for the Azure-style path, whose body may leave `model` out (the path names the deployment). */
export function acceptAzureChatCompletionRequest(body: unknown): AzureChatCompletionRequestDto | undefined {
  return attempt(body, AzureChatCompletionRequestDto, AZURE_CHAT_REQUEST);
}

/** One message of `messages`, as the pipe would hold it, when this module is sure the pipe would accept it. */
export function acceptChatMessage(message: unknown): ChatMessage | undefined {
  return unlessNotSure(() => variant('role', MESSAGE_BY_ROLE, message) as ChatMessage);
}

// ---------------------------------------------------------------------------------------------
// Building blocks
// ---------------------------------------------------------------------------------------------

type Source = Record<string, unknown>;
/** Checks one field's value (its object for cross-field rules) and returns what the pipe would hold there. */
type Reader = (value: unknown, object: Source) => unknown;
/** Readers of the declared fields of one DTO class, in a prototype-less object. */
type Fields = Readonly<Record<string, Reader | undefined>>;

interface Shape {
  fields: Fields;
  /** Fields the pipe requires (present and not undefined). */
  required: readonly string[];
  /** A rule across fields, checked once the fields are. */
  check?: (object: Source) => boolean;
}

/** Thrown to leave the fast path; one instance, so leaving costs no stack trace. */
const NOT_SURE = new Error('not sure');

function notSure(): never {
  throw NOT_SURE;
}

function attempt<T extends object>(body: unknown, type: new () => T, shape: Shape): T | undefined {
  return unlessNotSure(() => build(type, shape, body));
}

/** What `read` returns, or undefined where it is not sure. */
function unlessNotSure<T>(read: () => T): T | undefined {
  try {
    return read();
  } catch (error) {
    if (error === NOT_SURE) return undefined;
    throw error;
  }
}

/** Deeper free-form values are left to the pipe (whose class-transformer recurses without a limit). */
const MAX_DEPTH = 64;

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

function fields(readers: Record<string, Reader>): Fields {
  return Object.assign(Object.create(null) as Record<string, Reader>, readers);
}

/**
 * A DTO instance from a plain object: declared fields read, undeclared ones dropped (as
 * `whitelist` does), every required field present. The instance comes from the class's own
 * constructor, so it has the same own keys, in the same order, as class-transformer's.
 */
function build<T extends object>(type: new () => T, shape: Shape, value: unknown): T {
  if (!isPlainObject(value)) notSure();
  const instance = new type() as Source;
  const readers = shape.fields;
  for (const key in value) {
    const read = readers[key];
    if (read === undefined) dropped(key, value[key]);
    else instance[key] = read(value[key], value);
  }
  requireFields(shape, value);
  return instance as T;
}

/** Checks a plain object against a shape without building anything (tools are forwarded as sent). */
function verify(shape: Shape, value: unknown): void {
  if (!isPlainObject(value)) notSure();
  const readers = shape.fields;
  for (const key in value) readers[key]?.(value[key], value);
  requireFields(shape, value);
}

function requireFields(shape: Shape, value: Source): void {
  const { required, check } = shape;
  for (let index = 0; index < required.length; index++) if (value[required[index]] === undefined) notSure();
  if (check && !check(value)) notSure();
}

/** An undeclared field: the pipe copies it (so it must copy cleanly), then drops it. */
function dropped(key: string, value: unknown): void {
  if (isSpecialKey(key)) notSure();
  copyJson(value, 0);
}

/**
 * A free-form JSON value (a tool's schema, metadata, extra_content ...) as class-transformer
 * copies it: new arrays and plain objects, the same keys in the same order, primitives as they are.
 */
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

// ---- readers -----------------------------------------------------------------------------------

/** IsOptional: null and undefined skip every check and stay as they are. */
function optional(read: Reader): Reader {
  return (value, object) => (value === null || value === undefined ? value : read(value, object));
}

function string(rule?: StringRule): Reader {
  if (!rule) return (value) => (typeof value === 'string' ? value : notSure());
  return (value) => (typeof value === 'string' && stringIssues(value, rule).length === 0 ? value : notSure());
}

function number(rule: NumberRule): Reader {
  return (value) => (typeof value === 'number' && numberIssues(value, rule).length === 0 ? value : notSure());
}

const boolean: Reader = (value) => (typeof value === 'boolean' ? value : notSure());

function oneOf(values: readonly string[]): Reader {
  return (value) => (typeof value === 'string' && values.includes(value) ? value : notSure());
}

/** IsObjectField: an object (not an array), forwarded as a copy. */
const freeObject: Reader = (value) => (isPlainObject(value) ? copyJson(value, 0) : notSure());
/** IsObjectField inside a tool, which is copied as a whole afterwards. */
const anObject: Reader = (value) => (isPlainObject(value) ? value : notSure());

function arrayOfStrings(max: number): Reader {
  return (value) => {
    if (!Array.isArray(value) || value.length > max) notSure();
    for (let index = 0; index < value.length; index++) if (typeof value[index] !== 'string') notSure();
    return copyJson(value, 0);
  };
}

function instanceOf(type: DtoClass, shape: Shape): Reader {
  return (value) => build(type, shape, value);
}

/** An array of DTOs by discriminator (messages by role, parts and calls by type). */
function variants(discriminator: string, table: Readonly<Record<string, Reader>>, nonEmpty: boolean): Reader {
  return (value) => {
    if (!Array.isArray(value) || (nonEmpty && value.length === 0)) notSure();
    const items: unknown[] = [];
    for (let index = 0; index < value.length; index++) items.push(variant(discriminator, table, value[index]));
    return items;
  };
}

/** One item of {@link variants}. */
function variant(discriminator: string, table: Readonly<Record<string, Reader>>, item: unknown): unknown {
  if (!isPlainObject(item)) notSure();
  const tag = item[discriminator];
  const read = typeof tag === 'string' && Object.hasOwn(table, tag) ? table[tag] : notSure();
  return read(item, item);
}

// ---------------------------------------------------------------------------------------------
// Content parts and messages
// ---------------------------------------------------------------------------------------------

const CACHE_CONTROL: Shape = {
  fields: fields({ type: oneOf(CACHE_CONTROL_TYPES), ttl: optional(oneOf(CACHE_TTLS)) }),
  required: ['type'],
};
const cacheControl = optional(instanceOf(CacheControlDto, CACHE_CONTROL));

const TEXT_PART = instanceOf(TextContentPartDto, {
  fields: fields({ type: oneOf(['text']), text: string(), cache_control: cacheControl }),
  required: ['type', 'text'],
});

const nonEmptyString = string({ nonEmpty: true });

const IMAGE_URL: Shape = { fields: fields({ url: nonEmptyString, detail: optional(oneOf(IMAGE_DETAILS)) }), required: ['url'] };
const IMAGE_PART = instanceOf(ImageContentPartDto, {
  fields: fields({ type: oneOf(['image_url']), image_url: instanceOf(ImageUrlDto, IMAGE_URL), cache_control: cacheControl }),
  required: ['type', 'image_url'],
});

const INPUT_AUDIO: Shape = { fields: fields({ data: nonEmptyString, format: nonEmptyString }), required: ['data', 'format'] };
const AUDIO_PART = instanceOf(AudioContentPartDto, {
  fields: fields({ type: oneOf(['input_audio']), input_audio: instanceOf(InputAudioDto, INPUT_AUDIO), cache_control: cacheControl }),
  required: ['type', 'input_audio'],
});

const FILE_DATA: Shape = {
  fields: fields({ file_data: optional(nonEmptyString), file_id: optional(nonEmptyString), filename: optional(string()) }),
  required: [],
  check: hasFileDataOrId,
};
const FILE_PART = instanceOf(FileContentPartDto, {
  fields: fields({ type: oneOf(['file']), file: instanceOf(FileDataDto, FILE_DATA), cache_control: cacheControl }),
  required: ['type', 'file'],
});

const textParts = variants('type', { text: TEXT_PART }, false);
const userParts = variants('type', { text: TEXT_PART, image_url: IMAGE_PART, input_audio: AUDIO_PART, file: FILE_PART }, false);

/** MessageContent: a string or an array of parts; missing or null only where the message allows it (its `check`). */
function content(parts: Reader): Reader {
  return (value, object) => {
    if (typeof value === 'string') return value;
    if (value === null || value === undefined) return value;
    return parts(value, object);
  };
}

const messageName = optional(string());

const TOOL_CALL_FUNCTION: Shape = { fields: fields({ name: string(), arguments: string() }), required: ['name', 'arguments'] };
const TOOL_CALL_CUSTOM: Shape = { fields: fields({ name: string(), input: string() }), required: ['name', 'input'] };

const toolCalls = variants(
  'type',
  {
    function: instanceOf(FunctionToolCallDto, {
      fields: fields({
        id: string(),
        type: oneOf(['function']),
        function: instanceOf(ToolCallFunctionDto, TOOL_CALL_FUNCTION),
        extra_content: optional(freeObject),
      }),
      required: ['id', 'type', 'function'],
    }),
    custom: instanceOf(CustomToolCallDto, {
      fields: fields({ id: string(), type: oneOf(['custom']), custom: instanceOf(ToolCallCustomDto, TOOL_CALL_CUSTOM), extra_content: optional(freeObject) }),
      required: ['id', 'type', 'custom'],
    }),
  },
  false,
);

const hasContent = (message: Source): boolean => message.content !== null && message.content !== undefined;

const SYSTEM_MESSAGE = instanceOf(SystemMessageDto, {
  fields: fields({ name: messageName, role: oneOf(['system', 'developer']), content: content(textParts) }),
  required: ['role', 'content'],
  check: hasContent,
});

const MESSAGE_BY_ROLE: Readonly<Record<string, Reader>> = {
  system: SYSTEM_MESSAGE,
  developer: SYSTEM_MESSAGE,
  user: instanceOf(UserMessageDto, {
    fields: fields({ name: messageName, role: oneOf(['user']), content: content(userParts) }),
    required: ['role', 'content'],
    check: hasContent,
  }),
  assistant: instanceOf(AssistantMessageDto, {
    fields: fields({
      name: messageName,
      role: oneOf(['assistant']),
      content: content(textParts),
      refusal: optional(string()),
      tool_calls: optional(toolCalls),
      function_call: optional(instanceOf(ToolCallFunctionDto, TOOL_CALL_FUNCTION)),
    }),
    required: ['role'],
    check: (message) => hasContent(message) || hasToolCalls(message),
  }),
  tool: instanceOf(ToolMessageDto, {
    fields: fields({ name: messageName, role: oneOf(['tool']), content: content(textParts), tool_call_id: string() }),
    required: ['role', 'content', 'tool_call_id'],
    check: hasContent,
  }),
};

const MESSAGES = variants('role', MESSAGE_BY_ROLE, true);

// ---------------------------------------------------------------------------------------------
// Tools and tool_choice
// ---------------------------------------------------------------------------------------------

// Function and custom tools are checked (as ToolList checks them, on a copy that keeps every
// field) and the whole list is forwarded as a copy; any other tool needs only a non-empty type.

function verified(shape: Shape): Reader {
  return (value) => verify(shape, value);
}

const FUNCTION_DEFINITION: Shape = {
  fields: fields({ name: string(FUNCTION_NAME_RULE), description: optional(string()), parameters: optional(anObject), strict: optional(boolean) }),
  required: ['name'],
};
const FUNCTION_TOOL: Shape = {
  fields: fields({ function: verified(FUNCTION_DEFINITION), cache_control: optional(verified(CACHE_CONTROL)) }),
  required: ['function'],
};

const GRAMMAR: Shape = { fields: fields({ definition: string(), syntax: oneOf(GRAMMAR_SYNTAXES) }), required: ['definition', 'syntax'] };
const CUSTOM_TOOL_FORMAT: Shape = {
  fields: fields({ type: oneOf(CUSTOM_TOOL_FORMAT_TYPES) }),
  required: ['type'],
  // ValidateIf(type grammar, or grammar given, null included): then grammar must be a valid object.
  check: (format) => {
    if (format.type === 'grammar' || format.grammar !== undefined) verify(GRAMMAR, format.grammar);
    return true;
  },
};
const CUSTOM_TOOL_DEFINITION: Shape = {
  fields: fields({ name: nonEmptyString, description: optional(string()), format: optional(verified(CUSTOM_TOOL_FORMAT)) }),
  required: ['name'],
};
const CUSTOM_TOOL: Shape = {
  fields: fields({ custom: verified(CUSTOM_TOOL_DEFINITION), cache_control: optional(verified(CACHE_CONTROL)) }),
  required: ['custom'],
};

const toolList: Reader = (value) => {
  if (!Array.isArray(value) || value.length > MAX_TOOLS) notSure();
  for (let index = 0; index < value.length; index++) {
    const tool: unknown = value[index];
    if (!isPlainObject(tool) || typeof tool.type !== 'string' || tool.type === '') notSure();
    if (tool.type === 'function') verify(FUNCTION_TOOL, tool);
    else if (tool.type === 'custom') verify(CUSTOM_TOOL, tool);
  }
  return copyJson(value, 0);
};

const NAMED_TOOL = instanceOf(NamedToolDto, { fields: fields({ name: nonEmptyString }), required: ['name'] });
/** ToolChoiceCustomDto.custom: a tool name, or {name}. */
const customToolReference: Reader = (value, object) => (typeof value === 'string' ? nonEmptyString(value, object) : NAMED_TOOL(value, object));
const ALLOWED_TOOLS: Shape = { fields: fields({ mode: oneOf(ALLOWED_TOOLS_MODES), tools: toolList }), required: ['mode', 'tools'] };

const TOOL_CHOICE_OBJECTS: Readonly<Record<string, Reader>> = {
  function: instanceOf(ToolChoiceFunctionDto, { fields: fields({ type: oneOf(['function']), function: NAMED_TOOL }), required: ['type', 'function'] }),
  custom: instanceOf(ToolChoiceCustomDto, { fields: fields({ type: oneOf(['custom']), custom: customToolReference }), required: ['type', 'custom'] }),
  allowed_tools: instanceOf(ToolChoiceAllowedToolsDto, {
    fields: fields({ type: oneOf(['allowed_tools']), allowed_tools: instanceOf(AllowedToolsDto, ALLOWED_TOOLS) }),
    required: ['type', 'allowed_tools'],
  }),
};

const toolChoice: Reader = (value, object) => {
  if (typeof value === 'string') return (TOOL_CHOICE_MODES as readonly string[]).includes(value) ? value : notSure();
  if (!isPlainObject(value) || typeof value.type !== 'string' || !Object.hasOwn(TOOL_CHOICE_OBJECTS, value.type)) notSure();
  return TOOL_CHOICE_OBJECTS[value.type](value, object);
};

// ---------------------------------------------------------------------------------------------
// The request
// ---------------------------------------------------------------------------------------------

const TOKEN_ID = /^\d+$/;
const logitBias: Reader = (value) => {
  if (!isPlainObject(value)) notSure();
  for (const token in value) {
    const bias = value[token];
    if (!TOKEN_ID.test(token) || typeof bias !== 'number' || numberIssues(bias, CHAT_REQUEST_RULES.logit_bias).length > 0) notSure();
  }
  return copyJson(value, 0);
};

const stopSequences = arrayOfStrings(MAX_STOP_SEQUENCES);
const stop: Reader = (value, object) => (typeof value === 'string' ? value : stopSequences(value, object));
const topLogprobs = number(CHAT_REQUEST_RULES.top_logprobs);
const reasoningBudget = number(CHAT_REQUEST_RULES.reasoning_max_tokens);
const STREAM_OPTIONS: Shape = { fields: fields({ include_usage: boolean }), required: ['include_usage'] };

const REQUEST_READERS: Record<string, Reader> = {
  provider: optional(string(CHAT_REQUEST_RULES.provider)),
  messages: MESSAGES,
  max_completion_tokens: optional(number(CHAT_REQUEST_RULES.max_completion_tokens)),
  max_tokens: optional(number(CHAT_REQUEST_RULES.max_tokens)),
  stream: optional(boolean),
  stream_options: optional((value, object) => (object.stream === true ? build(StreamOptionsDto, STREAM_OPTIONS, value) : notSure())),
  enable_search: optional(boolean),
  search_options: optional(
    instanceOf(SearchOptionsDto, {
      fields: fields({ forced_search: optional(boolean), search_strategy: optional(oneOf(SEARCH_STRATEGIES)), enable_source: optional(boolean) }),
      required: [],
    }),
  ),
  tools: optional(toolList),
  tool_choice: optional(toolChoice),
  normalize_tool_schemas: optional(boolean),
  parallel_tool_calls: optional(boolean),
  temperature: optional(number(CHAT_REQUEST_RULES.temperature)),
  top_p: optional(number(CHAT_REQUEST_RULES.top_p)),
  stop: optional(stop),
  logit_bias: optional(logitBias),
  logprobs: optional(boolean),
  top_logprobs: optional((value, object) => (object.logprobs === true ? topLogprobs(value, object) : notSure())),
  reasoning_effort: optional(oneOf(REASONING_EFFORTS)),
  reasoning: optional(
    instanceOf(ReasoningDto, {
      fields: fields({
        effort: optional(oneOf(REASONING_OBJECT_EFFORTS)),
        max_tokens: optional((value, object) => (object.effort === null || object.effort === undefined ? reasoningBudget(value, object) : notSure())),
        exclude: optional(boolean),
      }),
      required: [],
    }),
  ),
  n: optional(number(CHAT_REQUEST_RULES.n)),
  seed: optional(number(CHAT_REQUEST_RULES.seed)),
  user: optional(string()),
  response_format: optional(
    instanceOf(ResponseFormatDto, {
      fields: fields({ type: oneOf(RESPONSE_FORMAT_TYPES), json_schema: optional(freeObject) }),
      required: ['type'],
      // ValidateIf(type json_schema or json_schema given): with type json_schema it is required.
      check: (format) => format.type !== 'json_schema' || isPlainObject(format.json_schema),
    }),
  ),
  presence_penalty: optional(number(CHAT_REQUEST_RULES.penalty)),
  frequency_penalty: optional(number(CHAT_REQUEST_RULES.penalty)),
  metadata: optional(freeObject),
  store: optional(boolean),
  service_tier: optional(string()),
  modalities: optional(arrayOfStrings(Infinity)),
  audio: optional(freeObject),
  prediction: optional(freeObject),
  web_search_options: optional(freeObject),
  verbosity: optional(string()),
};

const CHAT_REQUEST: Shape = {
  fields: fields({ model: string(CHAT_REQUEST_RULES.model), ...REQUEST_READERS }),
  required: ['model', 'messages'],
};
/** AzureChatCompletionRequestDto: `model` optional, any string (class-validator's IsString). */
const AZURE_CHAT_REQUEST: Shape = { fields: fields({ model: optional(string()), ...REQUEST_READERS }), required: ['messages'] };
