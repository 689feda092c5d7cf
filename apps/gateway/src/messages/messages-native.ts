import { HttpStatus } from '@nestjs/common';
import { ErrorMessages, type CatalogueModel, type ChatCompletionRequestDto, type MessagesRequestDto, type MessagesTextBlock, type MessagesTool } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import { ANTHROPIC_DEFAULT_SEARCH_MAX_USES, anthropicNativeMessage, anthropicNativeStream, sourceSpeaks, speaksMessages, forwardedAnthropicBetas, takesStructuredOutputs, type AnthropicNativeBody, type NativeEvent } from '@igw/providers';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { ChatFront } from '../chat/chat-responder';
import type { UpstreamTarget } from '../paid-requests/upstream-route';
import { setDroppedTools, sseOf, type NativeEventWriter, type NativeUpstream } from '../chat/native-upstream';
import { anthropicErrorType } from './messages-errors';
import { chatRequestForNative, chatRequestOf, isClientTool } from './messages-request';
import { messageOf } from './messages-response';
import { messagesStreamEvents } from './messages-stream';

/** The Messages API as a front of the chat pipeline: its ledger name, answer and stream. */
export const MESSAGES_FRONT: ChatFront = { endpoint: 'messages', answer: messageOf, streamEvents: messagesStreamEvents };

/**
 * The chat request and the front for a Messages request: the native path for a model with
 * Anthropic sources, the translation alone otherwise. Sets `x-gateway-dropped-tools` on
 * `response` for the source each attempt goes to.
 */
export function messagesFrontOf(
  body: MessagesRequestDto,
  model: CatalogueModel,
  headers: IncomingHttpHeaders,
  response: Pick<ServerResponse, 'setHeader' | 'removeHeader'>,
): { chatRequest: ChatCompletionRequestDto; front: ChatFront } {
  const translatedDropped = (body.tools ?? []).filter((tool) => !isClientTool(tool)).map((tool) => tool.name ?? tool.type ?? '');
  const dropped = (names: string[]) => setDroppedTools(response, names);
  if (!hasAnthropicSource(model)) {
    dropped(translatedDropped);
    return { chatRequest: chatRequestOf(body, model), front: MESSAGES_FRONT };
  }
  const { request: chatRequest, untranslatable } = chatRequestForNative(body, model);
  const native = messagesNative({ body, chatRequest, betaHeader: headers['anthropic-beta'], untranslatable, translatedDropped, dropped, sources: model.routing.sources });
  return { chatRequest, front: { ...MESSAGES_FRONT, native } };
}

// The Messages API's native path: Anthropic sources get the client's Messages request as it
// came, blocks and all (signed thinking and redacted_thinking blocks sent back, documents,
// cache_control, top_k, stop_sequences, thinking incl. adaptive, output_config,
// context_management, metadata), and answer in their own words (stop_sequence, signatures,
// cache usage). What the gateway still decides:
// - `max_tokens` above the model's output limit is lowered to it, as on the translated path.
// - `role: "system"` messages (Claude Code sends one) join the top-level `system`, in order:
//   Anthropic takes system text there only.
// - Tools go by an allow-list of what the gateway knows and prices: the client's own (custom,
//   and Anthropic-defined ones the client runs: bash, text editor, computer, memory) go as they
//   are; web search goes where the source declares `native: [web_search]` in the catalogue, its
//   `max_uses` capped to what the hold covers. Every other type (web fetch, code execution, and
//   any server tool Anthropic adds later, which it would run and bill unheld) is left out and
//   named in `x-gateway-dropped-tools`. A tool_choice naming a tool left out is a 400.
// - Blocks that point into the upstream account (a `source` of type `file`, or a `file_id`)
//   are refused wherever they are (user turns, tool results, a document's `content` source,
//   search results): the operator's files are shared by every client of the gateway.
// - `anthropic-beta`: only betas that change how the model answers (forwardedAnthropicBetas).
// - `output_config.format` (structured outputs) goes natively only to a source that takes it
//   (catalogue `native: [structured_outputs]`); another Anthropic source is sent the chat
//   translation, whose `response_format` its adapter asks as a forced tool call, answered as
//   a text block of the JSON.

/** Anthropic-defined tools the client runs: the model only asks for them, so they cost tokens alone. */
const RUN_BY_CLIENT = /^(bash|text_editor|computer|memory)_\d{8}$/;
/** The one tool Anthropic runs that the gateway holds and prices (web_search_calls). */
const WEB_SEARCH = /^web_search_\d{8}$/;

/** The Messages fields sent natively as they came (the rest of the body was validated, and is the gateway's). */
const NATIVE_FIELDS = ['stop_sequences', 'temperature', 'top_p', 'top_k', 'thinking', 'metadata', 'output_config', 'context_management'] as const;

function refuse(path: string, why: string): never {
  throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${path}: ${why}`);
}

/** The source-independent part of the native body, and the tools each kind of source gets. */
export interface MessagesNativePlan {
  body: AnthropicNativeBody;
  /** Tools for a source with Anthropic's web search, and their dropped ones. */
  withSearch: { tools: MessagesTool[]; dropped: string[] };
  withoutSearch: { tools: MessagesTool[]; dropped: string[] };
  /** The most web searches the request may run. */
  searches: number;
}

/** The native Messages body for a request (the chat translation gave the max_tokens it may ask). */
export function messagesNativePlan(body: MessagesRequestDto, chatRequest: Pick<ChatCompletionRequestDto, 'max_tokens'>): MessagesNativePlan {
  const { system, messages } = systemJoined(body);
  const native: AnthropicNativeBody = { messages, ...(system !== undefined && { system }), max_tokens: chatRequest.max_tokens ?? body.max_tokens };
  for (const field of NATIVE_FIELDS) if (body[field] !== undefined) Object.assign(native, { [field]: body[field] });
  refuseFileSources(messages, 'messages');
  refuseFileSources(system, 'system');
  const withSearch = toolsFor(body.tools ?? [], true);
  const withoutSearch = toolsFor(body.tools ?? [], false);
  const searchTool = withSearch.tools.find((tool) => WEB_SEARCH.test(tool.type ?? ''));
  const searches = searchTool ? Number(searchTool.max_uses) : 0;
  return { body: native, withSearch, withoutSearch, searches };
}

function systemJoined(body: MessagesRequestDto): { system: string | MessagesTextBlock[] | undefined; messages: MessagesRequestDto['messages'] } {
  const inMessages = body.messages.filter((message) => message.role === 'system');
  if (inMessages.length === 0) return { system: body.system, messages: body.messages };
  const blocks = (content: string | MessagesTextBlock[] | undefined): MessagesTextBlock[] =>
    content === undefined || content === '' ? [] : typeof content === 'string' ? [{ type: 'text', text: content }] : content;
  const system = [...blocks(body.system), ...inMessages.flatMap((message) => blocks(message.content))];
  return { system, messages: body.messages.filter((message) => message.role !== 'system') };
}

const UPSTREAM_FILE = "a file of the upstream account cannot be sent through this gateway: send the content itself (source type 'base64', 'url' or 'text')";

/**
 * Walks the blocks as Anthropic nests them (a block's `content`, a source's `content`), not
 * every value: a tool_use's `input` is the model's arguments, which may say anything.
 */
function refuseFileSources(value: unknown, path: string): void {
  if (Array.isArray(value)) {
    value.forEach((item, index) => refuseFileSources(item, `${path}[${index}]`));
    return;
  }
  if (typeof value !== 'object' || value === null) return;
  const record = value as Record<string, unknown>;
  // A container_upload block, and any block Anthropic adds that names a file of the account.
  if (record.file_id !== undefined) refuse(`${path}.file_id`, UPSTREAM_FILE);
  const source = record.source;
  if (typeof source === 'object' && source !== null) {
    const { type, file_id: fileId, content } = source as Record<string, unknown>;
    if (type === 'file' || fileId !== undefined) refuse(`${path}.source`, UPSTREAM_FILE);
    if (content !== undefined) refuseFileSources(content, `${path}.source.content`);
  }
  if (record.content !== undefined) refuseFileSources(record.content, `${path}.content`);
}

function toolsFor(tools: MessagesTool[], webSearch: boolean): { tools: MessagesTool[]; dropped: string[] } {
  const kept: MessagesTool[] = [];
  const dropped: string[] = [];
  for (const tool of tools) {
    const type = tool.type;
    if (type === undefined || type === 'custom' || RUN_BY_CLIENT.test(type)) kept.push(tool);
    else if (webSearch && WEB_SEARCH.test(type)) {
      const asked = tool.max_uses;
      const maxUses = typeof asked === 'number' && Number.isInteger(asked) && asked >= 1 ? Math.min(asked, ANTHROPIC_DEFAULT_SEARCH_MAX_USES) : ANTHROPIC_DEFAULT_SEARCH_MAX_USES;
      kept.push({ ...tool, max_uses: maxUses });
    } else dropped.push(tool.name ?? type);
  }
  return { tools: kept, dropped };
}

/** Whether some source of the model speaks the Messages API (Anthropic's, or Claude on Bedrock or Vertex AI). */
export function hasAnthropicSource(model: Pick<CatalogueModel, 'routing'>): boolean {
  return model.routing.sources.some((source) => sourceSpeaks(source, 'anthropic-messages'));
}

/** Whether a source may run Anthropic's web search for a native call. */
function searchesAt(target: UpstreamTarget): boolean {
  return target.native?.includes('web_search') === true;
}

export interface MessagesNativeOptions {
  body: MessagesRequestDto;
  chatRequest: ChatCompletionRequestDto;
  /** The client's `anthropic-beta` header. */
  betaHeader: string | string[] | undefined;
  /** Why the chat request cannot carry the request (a translated source then gets a 400), when it cannot. */
  untranslatable?: string;
  /** The tools the translated request leaves out. */
  translatedDropped: string[];
  /** Names the tools left out of the attempt's call (the response header). */
  dropped(names: string[]): void;
  /** The model's sources, to refuse at once a tool_choice none of them can run. */
  sources: CatalogueModel['routing']['sources'];
}

/** The Messages front's native path: every Anthropic source of the model. */
export function messagesNative(options: MessagesNativeOptions): NativeUpstream {
  const plan = messagesNativePlan(options.body, options.chatRequest);
  const beta = forwardedAnthropicBetas(options.betaHeader);
  const choice = options.body.tool_choice;
  if (choice?.type === 'tool') {
    const searchAnywhere = options.sources.some((source) => sourceSpeaks(source, 'anthropic-messages') && source.native?.includes('web_search'));
    const { dropped } = searchAnywhere ? plan.withSearch : plan.withoutSearch;
    if (dropped.includes(choice.name ?? '')) refuse('tool_choice.name', `forces ${JSON.stringify(choice.name)}, a tool this model's sources do not run through this gateway`);
  }
  const requestFor = (target: UpstreamTarget) => {
    const { tools, dropped } = searchesAt(target) ? plan.withSearch : plan.withoutSearch;
    if (choice?.type === 'tool' && dropped.includes(choice.name ?? '')) {
      refuse('tool_choice.name', `forces ${JSON.stringify(choice.name)}, a tool this model's source does not run through this gateway`);
    }
    const body: AnthropicNativeBody = { ...plan.body };
    if (tools.length > 0) {
      body.tools = tools;
      if (choice !== undefined) body.tool_choice = choice;
    } else if (choice?.type === 'none') body.tool_choice = choice;
    options.dropped(dropped);
    return { body, beta };
  };
  const structured = options.body.output_config?.format !== undefined;
  return {
    takes: (target) => speaksMessages(target) && (!structured || takesStructuredOutputs(target)),
    complete: (target, callOptions) => anthropicNativeMessage(target, requestFor(target), callOptions),
    stream: (target, callOptions) => anthropicNativeStream(target, requestFor(target), callOptions),
    answer: (body, meta, modelId) => ({ ...body, model: modelId, meta: { usage: meta } }),
    writer: (modelId) => new MessagesNativeWriter(modelId),
    beforeAttempt: (native) => {
      if (native) return;
      if (options.untranslatable !== undefined) throw new GatewayException(HttpStatus.BAD_REQUEST, options.untranslatable);
      options.dropped(options.translatedDropped);
    },
    ...(plan.searches > 0 ? { extraCeiling: { web_search_calls: plan.searches } } : {}),
  };
}

/**
 * Anthropic's events as they came: message_start with the catalogue's model id, message_delta
 * (where the usage is whole) with the gateway's `meta.usage`; a failure half-way as
 * Anthropic's `error` event.
 */
export class MessagesNativeWriter implements NativeEventWriter {
  constructor(private readonly modelId: string) {}

  event(event: NativeEvent, meta: () => { credits_used: number; usd_spent: number } | undefined): string {
    const parsed = event.parsed;
    if (parsed.type === 'message_start' && typeof parsed.message === 'object' && parsed.message !== null) {
      return sseOf(event.name, JSON.stringify({ ...parsed, message: { ...(parsed.message as Record<string, unknown>), model: this.modelId } }));
    }
    if (parsed.type === 'message_delta') {
      const usage = meta();
      if (usage !== undefined) return sseOf(event.name, JSON.stringify({ ...parsed, meta: { usage } }));
    }
    return sseOf(event.name, event.data);
  }

  failure(message: string): string {
    return sseOf('error', JSON.stringify({ type: 'error', error: { type: anthropicErrorType(500), message } }));
  }
}
