// POST /v1/responses (OpenAI's Responses API; Azure OpenAI's v1 API at /openai/v1/responses):
// deterministic replies, JSON or typed SSE events.
//
// Output items, by the first rule that applies:
//   1. the last input item is a `function_call_output` → a message "Tool said: <its output>";
//   2. `tools` has a function (a namespace's functions and custom tools count), `tool_choice`
//      is not "none", and it forces one ({type: "function", name[, namespace]} → that one,
//      "required" → the first) or the last user text contains the word "weather" → one
//      `function_call` item {id: "fc_<24>", call_id: "call_<24>", name[, namespace],
//      arguments: <JSON satisfying the function's parameters, as in ./chat.ts>, status: "completed"};
//   3. otherwise a message "Hello from the emulator. You said: <last user text>".
// With `text.format` `json_schema` (or `json_object`) the message of rules 1 and 3 is compact
// JSON satisfying `text.format.schema` (any JSON object), as ./chat.ts answers `response_format`.
// A text reply with a `web_search` / `web_search_preview` tool (tool_choice not "none") is
// "searched": a `web_search_call` item {id: "ws_<24>", status: "completed", action: {type:
// "search", query: <last user text>}} comes first, and the text's part gets one `url_citation`
// annotation over the whole text (SEARCH_RESULT of the Anthropic emulator).
// `reasoning` with an effort other than "none" puts a `reasoning` item first: its summary
// [{type: "summary_text", text: "Considering the request."}] when `reasoning.summary` is set
// (else []), and `encrypted_content: "emulated"` when `include` has
// "reasoning.encrypted_content".
// `max_output_tokens` truncates the text to that many words minus the reasoning words
// (status "incomplete", incomplete_details {reason: "max_output_tokens"}).
//
// Usage (a token is a whitespace-separated word):
//   input_tokens  = 2 + words(instructions) + Σ over input items (words of the item's text + 4),
//                   an item's text being its text parts, a function call's arguments or a
//                   function call output's output;
//   input_tokens_details.cached_tokens = floor(input_tokens / 2) when `prompt_cache_key` is
//                   set (the cache key names a prompt seen before), else 0;
//   output_tokens = reasoning words + reply words (a function call: 1 + words of its arguments);
//   output_tokens_details.reasoning_tokens = the reasoning words.
//
// Streams send OpenAI's typed events, each `event: <type>` with a `sequence_number` from 0:
// response.created, response.in_progress, then per item response.output_item.added, its
// parts and deltas (reasoning_summary_part.added / reasoning_summary_text.delta / .done /
// reasoning_summary_part.done; web_search_call.in_progress / .searching / .completed;
// content_part.added / output_text.delta per word / output_text.done / content_part.done;
// function_call_arguments.delta in two halves / .done), response.output_item.done, and
// last response.completed (or response.incomplete) with the whole response and its usage.
// A turn a test scripted for the model (../scripts.ts) takes the place of rules 1–3: a
// `toolCall` is one `function_call` item of the declared function it names (a namespace's
// function by its own name or as `<namespace>__<name>`, the name the gateway's chat
// translation gives it; the item then carries `namespace`), with the scripted arguments; a
// `text` is one message (still cut by `max_output_tokens`). Reasoning items come first as above.
// 400s: no model, an input that is neither a string nor a non-empty list, tools not a list,
// a function tool without a name, an `input_file` part whose file_data is not a base64 data URL
// (a PDF's bytes not a PDF), `previous_response_id` (the emulator stores nothing), a
// scripted call of a function the request does not declare.
import type { RequestContext } from '../context';
import { SEARCH_RESULT, THINKING_TEXT, TOOL_REPLY_PREFIX } from '../anthropic/messages';
import { answerSeed, toolArguments } from '../schema-values';
import { fileDataIssue, jsonAnswerText, REPLY_PREFIX, type JsonAnswerFormat } from './chat';
import type { ScriptedTurn } from '../scripts';
import { countWords, isRecord, randomId, words } from '../util';

type Item = Record<string, unknown>;

interface ResponsesRequest {
  body: Record<string, unknown>;
  model: string;
  items: Item[];
  instructions: string;
  functions: Array<{ name: string; namespace?: string; parameters?: unknown }>;
  /** `text.format` json_schema / json_object. */
  format: JsonAnswerFormat | undefined;
  webSearch: boolean;
  toolChoice: unknown;
  maxOutputTokens: number | undefined;
  reasoning: { summary: boolean; encrypted: boolean } | undefined;
  cacheKey: boolean;
  stream: boolean;
}

export async function createResponse(ctx: RequestContext): Promise<void> {
  const request = parseRequest(ctx.body);
  if (typeof request === 'string') {
    ctx.error(400, request);
    return;
  }
  const scripted = ctx.nextScriptedTurn(request.model);
  let turn: Turn | undefined;
  if (scripted !== undefined) {
    const found = scriptedTurn(request, scripted);
    if (typeof found === 'string') {
      ctx.error(400, found, { param: 'tools' });
      return;
    }
    turn = found;
  }
  const response = buildResponse(request, turn);
  if (!request.stream) {
    ctx.json(200, response);
    return;
  }
  await streamResponse(ctx, response);
}

function parseRequest(body: unknown): ResponsesRequest | string {
  if (!isRecord(body)) return 'The request body must be a JSON object.';
  if (typeof body.model !== 'string' || body.model === '') return "Missing required parameter: 'model'.";
  if (body.previous_response_id !== undefined && body.previous_response_id !== null) return `Previous response with id '${String(body.previous_response_id)}' not found.`;
  let items: Item[];
  if (typeof body.input === 'string') items = [{ type: 'message', role: 'user', content: body.input }];
  else if (Array.isArray(body.input) && body.input.length > 0 && body.input.every(isRecord)) items = body.input as Item[];
  else return "Invalid value for 'input': expected a string or a non-empty array of input items.";
  for (const [index, item] of items.entries()) {
    for (const [partIndex, part] of (Array.isArray(item.content) ? (item.content as unknown[]) : []).entries()) {
      const issue = isRecord(part) && part.type === 'input_file' ? fileDataIssue(part, `input[${index}].content[${partIndex}]`) : undefined;
      if (issue !== undefined) return issue.message;
    }
  }
  if (body.tools !== undefined && !Array.isArray(body.tools)) return "Invalid type for 'tools': expected an array.";
  const functions: ResponsesRequest['functions'] = [];
  let webSearch = false;
  for (const [index, tool] of ((body.tools as unknown[] | undefined) ?? []).entries()) {
    if (!isRecord(tool)) return `Invalid type for 'tools[${index}]': expected an object.`;
    if (tool.type === 'function' || tool.type === 'custom') {
      if (typeof tool.name !== 'string' || tool.name === '') return `Missing required parameter: 'tools[${index}].name'.`;
      functions.push(tool.type === 'function' ? { name: tool.name, parameters: tool.parameters } : { name: tool.name });
    } else if (tool.type === 'namespace' && Array.isArray(tool.tools)) {
      for (const inner of tool.tools as unknown[]) if (isRecord(inner) && typeof inner.name === 'string') functions.push({ name: inner.name, namespace: String(tool.name), parameters: inner.parameters });
    } else if (typeof tool.type === 'string' && tool.type.startsWith('web_search')) webSearch = true;
  }
  const reasoningAsked = isRecord(body.reasoning) && body.reasoning.effort !== 'none' && (body.reasoning.effort !== undefined || body.reasoning.summary !== undefined);
  const include = Array.isArray(body.include) ? body.include : [];
  const max = body.max_output_tokens;
  const textFormat = isRecord(body.text) && isRecord(body.text.format) ? body.text.format : undefined;
  if (textFormat?.type === 'json_schema' && (typeof textFormat.name !== 'string' || textFormat.name === '')) return "Missing required parameter: 'text.format.name'.";
  const format: JsonAnswerFormat | undefined =
    textFormat?.type === 'json_schema' ? { kind: 'schema', schema: isRecord(textFormat.schema) ? textFormat.schema : {} } : textFormat?.type === 'json_object' ? { kind: 'object' } : undefined;
  return {
    format,
    body,
    model: body.model,
    items,
    instructions: typeof body.instructions === 'string' ? body.instructions : '',
    functions,
    webSearch,
    toolChoice: body.tool_choice,
    maxOutputTokens: typeof max === 'number' && Number.isInteger(max) && max > 0 ? max : undefined,
    reasoning: reasoningAsked ? { summary: isRecord(body.reasoning) && typeof body.reasoning.summary === 'string', encrypted: include.includes('reasoning.encrypted_content') } : undefined,
    cacheKey: typeof body.prompt_cache_key === 'string' && body.prompt_cache_key !== '',
    stream: body.stream === true,
  };
}

function itemText(item: Item): string {
  if (item.type === 'function_call') return typeof item.arguments === 'string' ? item.arguments : '';
  if (item.type === 'function_call_output') return typeof item.output === 'string' ? item.output : partsText(item.output);
  return typeof item.content === 'string' ? item.content : partsText(item.content);
}

function partsText(parts: unknown): string {
  if (!Array.isArray(parts)) return '';
  return parts
    .filter(isRecord)
    .map((part) => (typeof part.text === 'string' ? part.text : ''))
    .filter((text) => text !== '')
    .join(' ');
}

function lastUserText(items: Item[]): string {
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index];
    if ((item.type ?? 'message') === 'message' && item.role === 'user') return itemText(item);
  }
  return '';
}

function functionToCall(request: ResponsesRequest): ResponsesRequest['functions'][number] | undefined {
  const choice = request.toolChoice;
  if (request.functions.length === 0 || choice === 'none') return undefined;
  if (isRecord(choice) && choice.type === 'function') {
    return request.functions.find((fn) => fn.name === choice.name && (choice.namespace === undefined || fn.namespace === choice.namespace)) ?? { name: String(choice.name) };
  }
  if (choice === 'required' || /\bweather\b/i.test(lastUserText(request.items))) return request.functions[0];
  return undefined;
}

/** What a scripted turn answers: a call of one declared function with these arguments, or a text. */
type Turn = { call: { name: string; namespace?: string }; arguments: string } | { text: string };

/** A turn a test scripted (../scripts.ts); a call of a function the request does not declare is the message of a 400. */
function scriptedTurn(request: ResponsesRequest, turn: ScriptedTurn): Turn | string {
  if ('text' in turn) return { text: turn.text };
  const { name, arguments: args } = turn.toolCall;
  const call =
    request.functions.find((fn) => fn.namespace === undefined && fn.name === name) ??
    request.functions.find((fn) => fn.namespace !== undefined && `${fn.namespace}__${fn.name}` === name) ??
    request.functions.find((fn) => fn.name === name);
  if (call === undefined) return `The scripted call of '${name}' names no function tool of this request.`;
  return { call, arguments: JSON.stringify(args) };
}

function buildResponse(request: ResponsesRequest, scripted?: Turn): Record<string, unknown> {
  const output: Item[] = [];
  let reasoningWords = 0;
  if (request.reasoning) {
    const item: Item = { id: `rs_${randomId(24)}`, type: 'reasoning', summary: request.reasoning.summary ? [{ type: 'summary_text', text: THINKING_TEXT }] : [] };
    if (request.reasoning.encrypted) item.encrypted_content = 'emulated';
    output.push(item);
    reasoningWords = countWords(THINKING_TEXT);
  }
  let outputWords = reasoningWords;
  let incomplete = false;
  const last = request.items[request.items.length - 1];
  const call = scripted !== undefined ? ('call' in scripted ? scripted.call : undefined) : last.type === 'function_call_output' ? undefined : functionToCall(request);
  if (call !== undefined) {
    const parameters = 'parameters' in call ? call.parameters : undefined;
    const args = scripted !== undefined && 'arguments' in scripted ? scripted.arguments : JSON.stringify(toolArguments(parameters, answerSeed(call.name, parameters, lastUserText(request.items))));
    const item: Item = { id: `fc_${randomId(24)}`, type: 'function_call', status: 'completed', arguments: args, call_id: `call_${randomId(24)}`, name: call.name };
    if (call.namespace !== undefined) item.namespace = call.namespace;
    output.push(item);
    outputWords += 1 + countWords(args);
  } else {
    const query = lastUserText(request.items);
    const searched = scripted === undefined && last.type !== 'function_call_output' && request.webSearch && request.toolChoice !== 'none';
    if (searched) output.push({ id: `ws_${randomId(24)}`, type: 'web_search_call', status: 'completed', action: { type: 'search', query } });
    const replyText =
      scripted !== undefined && 'text' in scripted
        ? scripted.text
        : request.format !== undefined
          ? jsonAnswerText(request.format, query)
          : last.type === 'function_call_output'
            ? TOOL_REPLY_PREFIX + itemText(last)
            : REPLY_PREFIX + query;
    let replyWords = words(replyText);
    if (request.maxOutputTokens !== undefined) {
      const room = Math.max(0, request.maxOutputTokens - reasoningWords);
      if (replyWords.length > room) {
        replyWords = replyWords.slice(0, room);
        incomplete = true;
      }
    }
    const text = replyWords.join(' ');
    const annotations = searched && text !== '' ? [{ type: 'url_citation', start_index: 0, end_index: text.length, url: SEARCH_RESULT.url, title: SEARCH_RESULT.title }] : [];
    output.push({ id: `msg_${randomId(24)}`, type: 'message', status: incomplete ? 'incomplete' : 'completed', role: 'assistant', content: [{ type: 'output_text', text, annotations, logprobs: [] }] });
    outputWords += replyWords.length;
  }
  let input = 2 + countWords(request.instructions);
  for (const item of request.items) input += countWords(itemText(item)) + 4;
  const body = request.body;
  return {
    id: `resp_${randomId(24)}`,
    object: 'response',
    created_at: Math.floor(Date.now() / 1000),
    status: incomplete ? 'incomplete' : 'completed',
    error: null,
    incomplete_details: incomplete ? { reason: 'max_output_tokens' } : null,
    instructions: body.instructions ?? null,
    max_output_tokens: body.max_output_tokens ?? null,
    model: request.model,
    output,
    parallel_tool_calls: body.parallel_tool_calls ?? true,
    previous_response_id: null,
    reasoning: { effort: isRecord(body.reasoning) ? (body.reasoning.effort ?? null) : null, summary: isRecord(body.reasoning) ? (body.reasoning.summary ?? null) : null },
    store: body.store ?? true,
    temperature: body.temperature ?? 1,
    text: body.text ?? { format: { type: 'text' } },
    tool_choice: body.tool_choice ?? 'auto',
    tools: body.tools ?? [],
    top_p: body.top_p ?? 1,
    truncation: 'disabled',
    usage: {
      input_tokens: input,
      input_tokens_details: { cached_tokens: request.cacheKey ? Math.floor(input / 2) : 0 },
      output_tokens: outputWords,
      output_tokens_details: { reasoning_tokens: reasoningWords },
      total_tokens: input + outputWords,
    },
    user: body.user ?? null,
    metadata: body.metadata ?? {},
  };
}

async function streamResponse(ctx: RequestContext, response: Record<string, unknown>): Promise<void> {
  if (!ctx.startStream()) return;
  let sequence = 0;
  const send = (type: string, data: Record<string, unknown>): Promise<boolean> => ctx.event(JSON.stringify({ type, sequence_number: sequence++, ...data }), type);
  const shell = { ...response, status: 'in_progress', incomplete_details: null, output: [], usage: null };
  if (!(await send('response.created', { response: shell }))) return;
  if (!(await send('response.in_progress', { response: shell }))) return;
  const output = response.output as Item[];
  for (let index = 0; index < output.length; index++) {
    const item = output[index];
    const at = { item_id: item.id, output_index: index };
    for (const [type, data] of itemEvents(item, index, at)) if (!(await send(type, data))) return;
  }
  if (!(await send(response.status === 'incomplete' ? 'response.incomplete' : 'response.completed', { response }))) return;
  ctx.endStream();
}

function itemEvents(item: Item, index: number, at: { item_id: unknown; output_index: number }): Array<[string, Record<string, unknown>]> {
  const events: Array<[string, Record<string, unknown>]> = [];
  switch (item.type) {
    case 'reasoning': {
      events.push(['response.output_item.added', { output_index: index, item: { ...item, summary: [] } }]);
      for (const [summaryIndex, part] of (item.summary as Array<{ text: string }>).entries()) {
        events.push(['response.reasoning_summary_part.added', { ...at, summary_index: summaryIndex, part: { type: 'summary_text', text: '' } }]);
        for (const piece of pieces(part.text)) events.push(['response.reasoning_summary_text.delta', { ...at, summary_index: summaryIndex, delta: piece }]);
        events.push(['response.reasoning_summary_text.done', { ...at, summary_index: summaryIndex, text: part.text }]);
        events.push(['response.reasoning_summary_part.done', { ...at, summary_index: summaryIndex, part }]);
      }
      break;
    }
    case 'web_search_call':
      events.push(['response.output_item.added', { output_index: index, item: { id: item.id, type: 'web_search_call', status: 'in_progress' } }]);
      events.push(['response.web_search_call.in_progress', at], ['response.web_search_call.searching', at], ['response.web_search_call.completed', at]);
      break;
    case 'function_call': {
      const args = item.arguments as string;
      events.push(['response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', arguments: '' } }]);
      const half = Math.floor(args.length / 2);
      events.push(['response.function_call_arguments.delta', { ...at, delta: args.slice(0, half) }], ['response.function_call_arguments.delta', { ...at, delta: args.slice(half) }]);
      events.push(['response.function_call_arguments.done', { ...at, arguments: args }]);
      break;
    }
    default: {
      const part = (item.content as Item[])[0];
      const text = part.text as string;
      events.push(['response.output_item.added', { output_index: index, item: { ...item, status: 'in_progress', content: [] } }]);
      events.push(['response.content_part.added', { ...at, content_index: 0, part: { type: 'output_text', text: '', annotations: [], logprobs: [] } }]);
      for (const piece of pieces(text)) events.push(['response.output_text.delta', { ...at, content_index: 0, delta: piece, logprobs: [] }]);
      events.push(['response.output_text.done', { ...at, content_index: 0, text, logprobs: [] }]);
      events.push(['response.content_part.done', { ...at, content_index: 0, part }]);
    }
  }
  events.push(['response.output_item.done', { output_index: index, item }]);
  return events;
}

/** A text's words as deltas that join back to it exactly. */
function pieces(text: string): string[] {
  return words(text).map((word, index) => (index === 0 ? word : ` ${word}`));
}
