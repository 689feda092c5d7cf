import { HttpStatus } from '@nestjs/common';
import { ErrorMessages, isCheckedItem, isCheckedPart, isCheckedTool, type CatalogueModel, type ChatCompletionRequestDto, type ResponsesCheckedItem, type ResponsesCheckedPart, type ResponsesCheckedTool, type ResponsesPart, type ResponsesRequestDto, type ResponsesTool } from '@igw/contracts';
import { GatewayException } from '@igw/http';

// OpenAI's Responses request → the gateway's internal (chat completions) request, which the chat
// pipeline runs as it runs chat completions; the chat adapters take it from there. Decisions
// beyond field renames:
// - `instructions` is a system message ahead of the input; a string input is one user message.
// - `function_call` items join the assistant message just before them as its `tool_calls`;
//   `function_call_output` items are `tool` messages. Reasoning items (Codex sends its encrypted
//   reasoning back) are dropped: the chat request has no place for them.
// - A namespace's functions are flattened into the tool list as `<namespace>__<name>`, and calls
//   of them come back as function calls with `namespace` and their own name (responses-response.ts).
// - Built-in tools (web_search, file_search, custom, ...) are left out of the upstream call and
//   named in a response header; a `tool_choice` that forces one is refused.
// - `max_output_tokens` is `max_completion_tokens`; `text.format` is `response_format`; a
//   reasoning effort reaches a model that reasons, as the Messages front sends it.
// - An `input_file` part is a chat `file` part when it carries `file_data`; by `file_id` or
//   `file_url` it is refused (filePart says why).
// - `metadata`, `store`, `include`, `prompt_cache_key`, `client_metadata` and `text.verbosity`
//   are accepted and not sent upstream (`metadata` is echoed on the response).

type ChatMessage = Record<string, unknown>;
type ChatPart = Record<string, unknown>;

/** The separator of a namespace and a function name in the flattened tool list. */
export const NAMESPACE_SEPARATOR = '__';

const isRecordValue = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

function refuse(path: string, why: string): never {
  throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${path}: ${why}`);
}

/**
 * While a translation for a model with native sources runs (chatRequestForNative): what the
 * chat request cannot carry (items it has no place for, a tool_choice forcing a built-in tool
 * the native sources run), left out of it rather than refused; and those built-in tools. The
 * translation is synchronous, so no other one runs meanwhile.
 */
let leftOut: { why: string[]; builtIns: ReadonlySet<string> } | undefined;

function cannotCarry(path: string, why: string): undefined {
  if (leftOut === undefined) refuse(path, why);
  leftOut.why.push(`${ErrorMessages.bodyValidationPrefix} ${path}: ${why}`);
  return undefined;
}

/**
 * The chat request for a model some of whose sources take the Responses request natively:
 * items the chat request has no place for are left out of it, as is a tool_choice forcing one
 * of `nativeBuiltIns` (built-in tools a native source runs); `untranslatable` says why a source
 * that needs the translation cannot be sent the request.
 */
export function chatRequestForNative(body: ResponsesRequestDto, model: ResponsesTarget, nativeBuiltIns: ReadonlySet<string>): ResponsesTranslation & { untranslatable?: string } {
  leftOut = { why: [], builtIns: nativeBuiltIns };
  try {
    const translation = chatRequestOf(body, model);
    return leftOut.why.length > 0 ? { ...translation, untranslatable: leftOut.why[0] } : translation;
  } finally {
    leftOut = undefined;
  }
}

/** What the translation reads of the catalogue entry: its type (the source's format) and whether it reasons. */
export type ResponsesTarget = Pick<CatalogueModel, 'type' | 'capabilities'>;

export interface ResponsesTranslation {
  request: ChatCompletionRequestDto;
  /** The built-in tools left out of the upstream call (their types, or names for custom tools). */
  droppedTools: string[];
  /** A flattened namespaced function's chat name → its namespace and own name. */
  namespaced: Map<string, { namespace: string; name: string }>;
}

/** The internal chat request for a Responses request. */
export function chatRequestOf(sent: ResponsesRequestDto, model: ResponsesTarget): ResponsesTranslation {
  const body = withoutNulls(sent);
  // StoredResponses.resolve puts the earlier turns into `input` first: one left here is a gateway fault (500), not the caller's.
  if (body.previous_response_id !== undefined) throw new Error('previous_response_id reached the translation unresolved (StoredResponses.resolve replaces it)');
  const { tools, droppedTools, namespaced, builtIns } = toolsOf(body.tools ?? []);
  const messages = messagesOf(body);
  if (messages.length === 0) refuse('input', 'Expected a string or a non-empty array of input items. Received no message to answer');
  const request: Record<string, unknown> = { model: body.model, messages };
  if (tools.length > 0) {
    request.tools = tools;
    if (body.tool_choice !== undefined) request.tool_choice = toolChoiceOf(body.tool_choice, tools, builtIns);
    if (body.parallel_tool_calls !== undefined) request.parallel_tool_calls = body.parallel_tool_calls;
  } else if (body.tool_choice !== undefined && body.tool_choice !== 'auto' && body.tool_choice !== 'none') {
    // A forced built-in tool or an unknown function is named first.
    toolChoiceOf(body.tool_choice, tools, builtIns);
    const why = 'forces a tool call, and no function tool is left to call (built-in tools are not run by this gateway)';
    if (leftOut !== undefined && [...builtIns].some((type) => leftOut!.builtIns.has(type))) cannotCarry('tool_choice', why);
    else refuse('tool_choice', why);
  }
  if (body.stream === true) request.stream = true;
  if (body.max_output_tokens !== undefined) request.max_completion_tokens = body.max_output_tokens;
  if (body.temperature !== undefined) request.temperature = body.temperature;
  if (body.top_p !== undefined) request.top_p = body.top_p;
  if (body.user !== undefined && body.user !== '') request.user = body.user;
  const format = body.text?.format ?? undefined;
  if (format?.type === 'json_object') request.response_format = { type: 'json_object' };
  else if (format?.type === 'json_schema') {
    const schema: Record<string, unknown> = { name: format.name, schema: format.schema };
    if (format.strict !== undefined && format.strict !== null) schema.strict = format.strict;
    if (typeof format.description === 'string') schema.description = format.description;
    request.response_format = { type: 'json_schema', json_schema: schema };
  }
  Object.assign(request, reasoningOf(body.reasoning?.effort ?? undefined, model));
  return { request: request as unknown as ChatCompletionRequestDto, droppedTools, namespaced };
}

/** The fields given: the SDKs type most fields as nullable, and some clients send null for "not set" (validation takes it as absent). */
export function withoutNulls<T extends object>(fields: T): T {
  return Object.fromEntries(Object.entries(fields).filter(([, value]) => value !== null && value !== undefined)) as T;
}

function messagesOf(body: ResponsesRequestDto): ChatMessage[] {
  const messages: ChatMessage[] = [];
  if (body.instructions !== undefined && body.instructions !== '') messages.push({ role: 'system', content: body.instructions });
  if (typeof body.input === 'string') {
    messages.push({ role: 'user', content: body.input });
    return messages;
  }
  // The assistant message last pushed, while nothing else followed it: its turn's calls join it.
  let assistantTurn: ChatMessage | undefined;
  body.input.forEach((item, index) => {
    const path = `input[${index}]`;
    if (isCheckedItem(item, 'message')) {
      const message = messageOf(item, path);
      messages.push(message);
      assistantTurn = message.role === 'assistant' ? message : undefined;
      return;
    }
    if (isCheckedItem(item, 'function_call')) {
      const call = { id: item.call_id, type: 'function', function: { name: qualifiedName(item.namespace, item.name), arguments: item.arguments } };
      // Appended in place (the turn is this translation's own object): copying the list per call made a long run of calls quadratic.
      if (assistantTurn) ((assistantTurn.tool_calls as unknown[] | undefined) ?? (assistantTurn.tool_calls = [])).push(call);
      else {
        assistantTurn = { role: 'assistant', content: null, tool_calls: [call] };
        messages.push(assistantTurn);
      }
      return;
    }
    if (isCheckedItem(item, 'function_call_output')) {
      assistantTurn = undefined;
      messages.push({ role: 'tool', tool_call_id: item.call_id, content: typeof item.output === 'string' ? item.output : textOf(item.output, `${path}.output`) });
      return;
    }
    const type = item.type;
    switch (type) {
      case 'reasoning':
        return;
      case 'item_reference':
        throw new Error(`${path}: an item_reference reached the translation unresolved (StoredResponses.resolve replaces it)`);
      default:
        return cannotCarry(`${path}.type`, `a ${JSON.stringify(type)} item cannot be sent by this gateway (messages, function_call, function_call_output and reasoning items can)`);
    }
  });
  return messages;
}

function messageOf(item: ResponsesCheckedItem<'message'>, path: string): ChatMessage {
  const { role, content } = item;
  if (typeof content === 'string') return { role, content };
  // Assistant, system and developer turns are text: their parts are joined.
  if (role !== 'user') return { role, content: textOf(content, `${path}.content`) };
  return { role, content: content.map((part, index) => userPart(part, `${path}.content[${index}]`)) };
}

function userPart(part: ResponsesPart, path: string): ChatPart {
  if (isCheckedPart(part, 'input_text') || isCheckedPart(part, 'output_text')) return { type: 'text', text: part.text };
  if (isCheckedPart(part, 'input_image')) {
    if (part.image_url === undefined || part.image_url === null) return refuse(`${path}.image_url`, 'an image by file_id cannot be sent by this gateway: give its URL or a data URL');
    const image: Record<string, unknown> = { url: part.image_url };
    if (typeof part.detail === 'string') image.detail = part.detail;
    return { type: 'image_url', image_url: image };
  }
  if (isCheckedPart(part, 'input_file')) return filePart(part, path);
  return refuse(`${path}.type`, `a ${JSON.stringify(part.type)} part cannot be sent by this gateway (input_text, input_image and input_file can)`);
}

const SEND_FILE_DATA = 'send the file itself as file_data (a base64 data URL, e.g. data:application/pdf;base64,...)';

/**
 * An `input_file` part as the chat `file` part. Only its bytes are sent: a file id names a file
 * of the operator's own provider account (refused as on the native path, responses-native.ts),
 * and a file by URL would be fetched by the provider at a size the credit hold never saw.
 */
function filePart(part: ResponsesCheckedPart<'input_file'>, path: string): ChatPart {
  const given = (field: 'file_id' | 'file_url' | 'file_data') => part[field] !== undefined && part[field] !== null;
  if (given('file_id')) return refuse(`${path}.file_id`, `a file id names a file in the operator's own provider account, which this gateway does not send: ${SEND_FILE_DATA}`);
  if (given('file_url')) return refuse(`${path}.file_url`, `a file by URL cannot be sent by this gateway: ${SEND_FILE_DATA}`);
  const data = part.file_data ?? '';
  if (data === '') return refuse(`${path}.file_data`, `Expected a base64 data URL. Received ${given('file_data') ? 'an empty string' : 'no file_data, file_url or file_id'}`);
  const file: Record<string, unknown> = { file_data: data };
  const filename = part.filename ?? '';
  if (filename !== '') file.filename = filename;
  return { type: 'file', file };
}

function textOf(parts: ResponsesPart[], path: string): string {
  return parts
    .map((part, index) => {
      if (isCheckedPart(part, 'input_text') || isCheckedPart(part, 'output_text')) return part.text;
      if (part.type === 'refusal' && typeof part.refusal === 'string') return part.refusal;
      return refuse(`${path}[${index}].type`, `a ${JSON.stringify(part.type)} part cannot be sent here by this gateway (text parts can)`);
    })
    .join('');
}

function qualifiedName(namespace: unknown, name: string): string {
  return typeof namespace === 'string' && namespace !== '' ? `${namespace}${NAMESPACE_SEPARATOR}${name}` : name;
}

interface TranslatedTools {
  tools: ChatPart[];
  droppedTools: string[];
  namespaced: Map<string, { namespace: string; name: string }>;
  /** Types of the built-in tools asked for, to refuse a tool_choice that forces one. */
  builtIns: Set<string>;
}

function toolsOf(tools: ResponsesTool[]): TranslatedTools {
  const translated: TranslatedTools = { tools: [], droppedTools: [], namespaced: new Map(), builtIns: new Set() };
  for (const tool of tools) {
    if (isCheckedTool(tool, 'function')) translated.tools.push(functionTool(tool, tool.name));
    else if (isCheckedTool(tool, 'namespace')) {
      for (const inner of tool.tools) {
        if (!isCheckedTool(inner, 'function')) {
          translated.droppedTools.push(`${tool.name}${NAMESPACE_SEPARATOR}${inner.name ?? inner.type}`);
          continue;
        }
        const name = qualifiedName(tool.name, inner.name);
        translated.namespaced.set(name, { namespace: tool.name, name: inner.name });
        translated.tools.push(functionTool(inner, name));
      }
    } else {
      translated.builtIns.add(tool.type);
      translated.droppedTools.push(tool.type === 'custom' && typeof tool.name === 'string' ? tool.name : tool.type);
    }
  }
  return translated;
}

function functionTool(tool: ResponsesCheckedTool<'function'>, name: string): ChatPart {
  const definition: Record<string, unknown> = { name, parameters: tool.parameters ?? { type: 'object', properties: {} } };
  if (typeof tool.description === 'string') definition.description = tool.description;
  if (typeof tool.strict === 'boolean') definition.strict = tool.strict;
  return { type: 'function', function: definition };
}

function toolChoiceOf(choice: NonNullable<ResponsesRequestDto['tool_choice']>, tools: ChatPart[], builtIns: Set<string>): unknown {
  if (typeof choice === 'string') return choice;
  const named = (name: unknown, namespace?: unknown) => {
    const qualified = qualifiedName(namespace, name as string);
    if (!tools.some((tool) => (tool.function as { name: string }).name === qualified)) refuse('tool_choice.name', `no function tool named ${JSON.stringify(qualified)} is in tools`);
    return { type: 'function', function: { name: qualified } };
  };
  switch (choice.type) {
    case 'function':
      return named(choice.name, choice.namespace);
    case 'allowed_tools': {
      const allowed = (Array.isArray(choice.tools) ? choice.tools : []).filter((tool): tool is Record<string, unknown> => isRecordValue(tool) && tool.type === 'function');
      return { type: 'allowed_tools', allowed_tools: { mode: choice.mode === 'required' ? 'required' : 'auto', tools: allowed.map((tool) => named(tool.name, tool.namespace)) } };
    }
    default: {
      const why = `forces the built-in tool ${JSON.stringify(choice.type)}, which this gateway leaves out of the upstream call${builtIns.has(choice.type) ? '' : ' (nor is it in tools)'}`;
      if (leftOut?.builtIns.has(choice.type) && builtIns.has(choice.type)) return cannotCarry('tool_choice', why);
      return refuse('tool_choice', why);
    }
  }
}

const CHAT_EFFORTS: Record<string, 'none' | 'low' | 'medium' | 'high'> = { none: 'none', minimal: 'low', low: 'low', medium: 'medium', high: 'high', xhigh: 'high' };

/** The effort for a model that reasons: as `reasoning.effort` where the source reads one (Anthropic, Google), else `reasoning_effort`. */
export function reasoningOf(asked: string | undefined, model: ResponsesTarget): Record<string, unknown> {
  if (asked === undefined) return {};
  const effort = CHAT_EFFORTS[asked];
  if (effort === undefined) return refuse('reasoning.effort', `Expected one of ${Object.keys(CHAT_EFFORTS).join(', ')}. Received ${JSON.stringify(asked)}`);
  const takesBudget = model.type.startsWith('anthropic/') || model.type.startsWith('google/');
  if (takesBudget) return effort === 'none' ? {} : { reasoning: { effort } };
  return (model.capabilities ?? []).includes('reasoning') ? { reasoning_effort: effort } : {};
}
