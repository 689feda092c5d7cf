import { HttpStatus } from '@nestjs/common';
import { ErrorMessages, type CatalogueModel, type ResponsesRequestDto, type ResponsesTool } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import { ANTHROPIC_DEFAULT_SEARCH_MAX_USES, sourceDefinition, openAiNativeResponse, openAiNativeResponseStream, type NativeEvent, type ResponsesNativeBody } from '@igw/providers';
import type { ServerResponse } from 'node:http';
import type { ChatFront } from '../chat/chat-responder';
import { setDroppedTools, sseOf, type NativeEventWriter, type NativeUpstream } from '../chat/native-upstream';
import type { UpstreamTarget } from '../paid-requests/upstream-route';
import { chatRequestForNative, chatRequestOf, withoutNulls, type ResponsesTranslation } from './responses-request';
import { responseOf, responsesContextOf, responseShell, type ResponsesContext } from './responses-response';
import { responsesStreamEvents } from './responses-stream';

// The Responses API's native path: OpenAI and Azure OpenAI sources (and OpenAI-compatible
// servers that have the API, such as vLLM) that the catalogue marks `native: [responses]` get the client's Responses request as it came (input items, reasoning
// items with their encrypted content, namespace and custom tools, text.format, include, ...)
// and answer in their own words. What the gateway still decides:
// - Anything naming the provider account's own state is refused or dropped: a `file_id`
//   anywhere in the input is a 400, `previous_response_id` never goes up.
// - `store: false` upstream: the gateway keeps no state at the provider (a fallback source
//   must be able to continue the conversation, and stored responses are the gateway's own).
// - Built-in tools: `web_search` / `web_search_preview` go where the source also declares
//   `native: [web_search]`; other built-ins that the provider would run on the operator's
//   account (file_search, code_interpreter, mcp, image_generation, ...) are left out and named
//   in `x-gateway-dropped-tools`. A tool_choice forcing a tool no source runs is a 400.
// - The answer carries the catalogue's model id, the gateway's `meta.usage`, and what the gateway
//   decides of its conversation state: its own response id, `store` and `previous_response_id` as
//   the client asked (stored-responses.ts keeps it, unstreamed or before its stream's
//   response.completed event, exactly as the translated path does).
// - A source that answers the native call with 404 or 405 (a server without /v1/responses) gets
//   the translation for that request and, for a while, for the next ones (chat.service.ts).

const PROVIDER_KINDS_WITH_RESPONSES = new Set(['openai', 'azure-openai']);
/** Tools the client runs (or that are plain functions): always passed on. */
const CLIENT_TOOLS = new Set(['function', 'namespace', 'custom', 'local_shell', 'apply_patch']);
const WEB_SEARCH_TOOLS = new Set(['web_search', 'web_search_preview', 'web_search_2025_08_26', 'web_search_preview_2025_03_11']);
/** The searches one answer is held for: OpenAI sets no limit of its own (as for Gemini, the Anthropic default is assumed). */
const SEARCHES_HELD = ANTHROPIC_DEFAULT_SEARCH_MAX_USES;

/** Whether a source gets the native Responses call. */
export function takesResponses(source: { provider: string; native?: readonly string[] }): boolean {
  const kind = sourceDefinition(source.provider)?.kind;
  return kind !== undefined && PROVIDER_KINDS_WITH_RESPONSES.has(kind) && source.native?.includes('responses') === true;
}

function searchesAt(source: { native?: readonly string[] }): boolean {
  return source.native?.includes('web_search') === true;
}

function toolName(tool: ResponsesTool): string {
  return tool.type === 'custom' && typeof tool.name === 'string' ? tool.name : tool.type;
}

/** The tools a native call sends, and those it leaves out. */
export function nativeResponsesTools(tools: readonly ResponsesTool[], webSearch: boolean): { tools: ResponsesTool[]; dropped: string[] } {
  const kept: ResponsesTool[] = [];
  const dropped: string[] = [];
  for (const tool of tools) {
    if (CLIENT_TOOLS.has(tool.type) || (webSearch && WEB_SEARCH_TOOLS.has(tool.type))) kept.push(tool);
    else dropped.push(toolName(tool));
  }
  return { tools: kept, dropped };
}

/** Refuses a `file_id` anywhere in the input: files of the upstream account are shared by every client of the gateway. */
export function refuseFileIds(value: unknown, path: string): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => refuseFileIds(item, `${path}[${index}]`));
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  for (const [key, inner] of Object.entries(value)) {
    if (key === 'file_id' && inner !== null && inner !== undefined) refuse(`${path}.file_id`, 'a file of the upstream account cannot be sent through this gateway: send the content itself');
    refuseFileIds(inner, `${path}.${key}`);
  }
}

function refuse(path: string, why: string): never {
  throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${path}: ${why}`);
}

/** The tool a tool_choice forces by type (a built-in), when it does. */
function forcedBuiltIn(choice: ResponsesRequestDto['tool_choice']): string | undefined {
  if (choice === undefined || choice === null || typeof choice === 'string') return undefined;
  return choice.type === 'function' || choice.type === 'allowed_tools' ? undefined : choice.type;
}

/**
 * The chat request and the front for a Responses request: the native path for a model with
 * sources marked `native: [responses]`, the translation alone otherwise. Sets
 * `x-gateway-dropped-tools` on `response` for the source each attempt goes to.
 */
export function responsesFrontOf(
  sent: ResponsesRequestDto,
  model: CatalogueModel,
  response: Pick<ServerResponse, 'setHeader' | 'removeHeader'>,
  keeping: FrontKeeping = { asked: sent },
): { chatRequest: ResponsesTranslation['request']; front: ChatFront } {
  const dropped = (names: string[]) => setDroppedTools(response, names);
  const nativeSources = model.routing.sources.filter(takesResponses);
  if (nativeSources.length === 0) {
    const translation = chatRequestOf(sent, model);
    dropped(translation.droppedTools);
    return { chatRequest: translation.request, front: translatedFront(keeping, translation).front };
  }
  const tools = sent.tools ?? [];
  const searchAnywhere = nativeSources.some(searchesAt);
  const nativeBuiltIns = new Set(searchAnywhere ? nativeResponsesTools(tools, true).tools.map((tool) => tool.type).filter((type) => WEB_SEARCH_TOOLS.has(type)) : []);
  const translation = chatRequestForNative(sent, model, nativeBuiltIns);
  const forced = forcedBuiltIn(sent.tool_choice);
  if (forced !== undefined && !nativeBuiltIns.has(forced)) refuse('tool_choice', `forces the built-in tool ${JSON.stringify(forced)}, which no source of this model runs through this gateway`);

  // The provider's stored state is the operator's account, shared by every client: never named. Model and stream are the call's.
  const { model: _model, stream: _stream, store: _store, previous_response_id: _previous, ...given } = sent;
  const body: ResponsesNativeBody = { ...withoutNulls(given), store: false };
  refuseFileIds(body.input, 'input');
  const withSearch = nativeResponsesTools(tools, true);
  const withoutSearch = nativeResponsesTools(tools, false);
  const requestFor = (target: UpstreamTarget): ResponsesNativeBody => {
    const { tools: kept, dropped: left } = searchesAt(target) ? withSearch : withoutSearch;
    if (forced !== undefined && !kept.some((tool) => tool.type === forced)) refuse('tool_choice', `forces the built-in tool ${JSON.stringify(forced)}, which this source does not run through this gateway`);
    dropped(left);
    const request = { ...body };
    if (kept.length > 0) request.tools = kept;
    else {
      delete request.tools;
      if (request.tool_choice !== 'none') delete request.tool_choice;
    }
    return request;
  };
  const { front, context } = translatedFront(keeping, translation);
  const echoed = conversationEcho(context);
  const native: NativeUpstream = {
    takes: (target) => PROVIDER_KINDS_WITH_RESPONSES.has(target.definition.kind) && target.native?.includes('responses') === true,
    complete: (target, options) => openAiNativeResponse(target, requestFor(target), options),
    stream: (target, options) => openAiNativeResponseStream(target, requestFor(target), options),
    answer: (answer, meta, modelId) => ({ ...answer, ...echoed, model: modelId, meta: { usage: meta } }),
    writer: (modelId) => new ResponsesNativeWriter(modelId, echoed, keeping.keep),
    beforeAttempt: (isNative) => {
      if (isNative) return;
      if (translation.untranslatable !== undefined) throw new GatewayException(HttpStatus.BAD_REQUEST, translation.untranslatable);
      dropped(translation.droppedTools);
    },
    ...(searchAnywhere && withSearch.tools.some((tool) => WEB_SEARCH_TOOLS.has(tool.type)) ? { extraCeiling: { web_search_calls: SEARCHES_HELD } } : {}),
    // Most OpenAI-compatible servers (older vLLM, llama.cpp) have chat completions only.
    apiMayBeMissing: 'Responses API',
  };
  return { chatRequest: translation.request, front: { ...front, native } };
}

/**
 * What a native answer says of the gateway's conversation state in place of the upstream's
 * (asked with store: false and no previous_response_id): the id the translated path would give
 * (one the gateway can look up), `store` and `previous_response_id` as the client asked.
 */
type ConversationEcho = Pick<ResponsesContext, 'id'> & { store: boolean; previous_response_id: string | null };

function conversationEcho(context: ResponsesContext): ConversationEcho {
  const { id, store, previous_response_id } = responseShell(context, '');
  return { id: id as string, store: store as boolean, previous_response_id: previous_response_id as string | null };
}

/** The request as the client sent it (before a stored conversation was put ahead of its input), and how its answer is kept (store: true). */
export interface FrontKeeping {
  asked: ResponsesRequestDto;
  keep?: ResponsesContext['keep'];
}

/** The front of the translated path, and its response's context (its id, what it echoes), which a native answer shares. */
function translatedFront({ asked, keep }: FrontKeeping, translation: ResponsesTranslation): { front: ChatFront; context: ResponsesContext } {
  const context = responsesContextOf(asked, translation.namespaced);
  if (keep) context.keep = keep;
  // Unstreamed answers, translated or native, are kept here before they leave.
  const front: ChatFront = { endpoint: 'responses', answer: (completion) => responseOf(completion, context), streamEvents: responsesStreamEvents(context) };
  if (keep) front.beforeAnswer = (answer) => keep(answer as Record<string, unknown>);
  return { front, context };
}

/** Events that carry the whole response (its model renamed; the last ones with `meta.usage`). */
const RESPONSE_EVENTS = new Set(['response.created', 'response.in_progress', 'response.completed', 'response.incomplete', 'response.queued']);
/** The events a stream ends with when it answered: the translated path keeps its response before the same two. */
const FINISHED_EVENTS = new Set(['response.completed', 'response.incomplete']);

/**
 * The Responses events as they came: those carrying the response with the catalogue's model id
 * and the gateway's conversation state (ConversationEcho), response.completed (where the usage
 * is) with the gateway's `meta.usage` in its response and, with `keep`, sent once the response
 * it carries is kept (a stream that fails or is left before it keeps nothing); a failure
 * half-way as an `error` event.
 */
export class ResponsesNativeWriter implements NativeEventWriter {
  private lastSequence = -1;

  constructor(
    private readonly modelId: string,
    private readonly echoed: ConversationEcho,
    private readonly keep?: ResponsesContext['keep'],
  ) {}

  event(event: NativeEvent, meta: () => { credits_used: number; usd_spent: number } | undefined): string | Promise<string> {
    const parsed = event.parsed;
    if (typeof parsed.sequence_number === 'number') this.lastSequence = parsed.sequence_number;
    if (typeof parsed.type !== 'string' || !RESPONSE_EVENTS.has(parsed.type) || typeof parsed.response !== 'object' || parsed.response === null) return sseOf(event.name, event.data);
    const response: Record<string, unknown> = { ...(parsed.response as Record<string, unknown>), ...this.echoed, model: this.modelId };
    const usage = meta();
    if (usage !== undefined) response.meta = { usage };
    const text = (sent: Record<string, unknown>) => sseOf(event.name, JSON.stringify({ ...parsed, response: sent }));
    if (this.keep === undefined || !FINISHED_EVENTS.has(parsed.type)) return text(response);
    return this.keep(response).then(text);
  }

  failure(message: string): string {
    return sseOf('error', JSON.stringify({ type: 'error', sequence_number: this.lastSequence + 1, code: 'upstream_error', message, param: null }));
  }
}
