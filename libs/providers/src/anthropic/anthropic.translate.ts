// Pure translation between the gateway's OpenAI-shaped chat and Anthropic's Messages API.
//
// Request (OpenAI → Anthropic), decisions beyond the obvious field renames:
// - `system` and `developer` messages, wherever they appear, become the top-level `system`
//   text blocks, in order. Text parts keep `cache_control`.
// - Consecutive turns of one role are merged (Anthropic wants user/assistant alternation);
//   `tool` messages are user turns holding `tool_result` blocks, and in a merged user turn
//   the tool results come first (Anthropic requires them before any text).
// - A user `file` part given as a base64 data URL is a `document` block (a PDF as base64, plain
//   text decoded to its text, the filename as its `title`); a file id or any other media type
//   throws AnthropicTranslationError (translation/file-part.ts says what is taken).
// - Whitespace-only text parts are dropped (Anthropic rejects them), and so is a message
//   left with no blocks (e.g. an assistant turn with `content: null` and no tool calls).
// - Assistant tool-call `arguments` must be a JSON object (`''` counts as `{}`); anything else
//   throws AnthropicTranslationError, which the gateway answers as a 400: forwarding a guess
//   would make the model see a call it never made.
// - `max_tokens` = `max_completion_tokens ?? max_tokens ?? ANTHROPIC_DEFAULT_MAX_TOKENS`.
// - Thinking: budget from `reasoning.max_tokens` (raised to Anthropic's 1024 minimum), else
//   `reasoning.effort` / `reasoning_effort` (low 1024, medium 4096, high 16384; `none` = off).
//   With an explicit max, the client's cap is kept (the spec counts reasoning inside it) and
//   the budget shrinks to `max - 1`; below 1024 thinking is left off. Without one, `max_tokens`
//   = budget + ANTHROPIC_DEFAULT_MAX_TOKENS, so the visible answer keeps the usual room.
//   Thinking is left off when `tool_choice` forces a tool (Anthropic allows only auto/none with
//   thinking), and while it is on `temperature` is not sent and `top_p` only within 0.95–1.
// - `enable_search: true` adds Anthropic's server-side web search tool
//   `{type: 'web_search_20250305', name: 'web_search'}` after the function tools, with
//   `max_uses` from `search_options.search_strategy` (turbo 1, max 5, agent 10; none: 10, as
//   'agent', since Anthropic sets no limit of its own and the credit hold needs one). `forced_search` and `enable_source` have no Anthropic equivalent: the model decides
//   when to search, and sources always come back as annotations.
// - `temperature` is clamped to Anthropic's 0–1. Custom (non-function) tools are skipped;
//   `tool_choice` is dropped when no tools are left. Fields Anthropic has no equivalent for
//   and that leave what the model must produce as it is (n, logprobs, top_logprobs,
//   logit_bias, seed, penalties, ...) are dropped.
// - Structured outputs (`response_format`; see structuredOutputPlan): a `json_schema` goes as
//   Anthropic's own `output_config.format` {type: 'json_schema', schema} where the source
//   declares `native: [structured_outputs]` in the catalogue (the models that take it). Else,
//   and for `json_object` always (Anthropic's format takes a schema only), the answer is asked
//   as a call of one tool whose input_schema is the schema (an open object for json_object; a
//   schema whose value is not an object is wrapped as the tool input's `value`): forced with
//   `tool_choice: {type: 'tool'}`, or, when the client's own tools may be called
//   (tool_choice auto), offered beside them with `tool_choice: {type: 'any'}`. That call is
//   answered as the message's content (its JSON text), never as a tool call, with finish
//   reason `stop`; streamed, its input_json_deltas are content deltas. A request that also
//   forces a tool of its own, or asks for web search, cannot be answered that way: a 400
//   naming `response_format`.
//
// Response (Anthropic → OpenAI): text blocks joined into `content`, `tool_use` blocks into
// `tool_calls`, thinking into the non-standard `message.reasoning_content` (streams:
// `delta.reasoning_content`) unless `reasoning.exclude`. Server tool blocks (`server_tool_use`,
// `web_search_tool_result`) are read past; the `web_search_result_location` citations of a text
// block become `url_citation` annotations spanning that block in `content` (`start_index` its
// first, `end_index` its last character, UTF-16 offsets; title falling back to the URL). Streams
// collect citations from `citations_delta` events and send them all in one chunk
// `delta: {annotations: [...]}` just before the finish chunk, as OpenAI sends its search
// annotations in a late chunk of their own. Usage counts cache reads and writes
// as prompt tokens and reports them in `prompt_tokens_details` (`cache_write_tokens` and, when
// some were written for an hour, `cache_write_1h_tokens` are extra fields the gateway prices).
import type { AssistantToolCall, CacheControlDto, ChatMessage, ChatTool, FileDataDto, ImageUrlDto, TextContent, ToolChoice, ToolMessageDto, UserContent } from '@igw/contracts';
import type { UpstreamChatChunk, UpstreamChatCompletion, UpstreamChatRequest, UpstreamUsage } from '../provider.types';
import type { SseEvent } from '../transport/sse';
import { base64DataUrl, documentText, inlineDocumentOf } from '../translation/file-part';
import { RequestTranslationError, UpstreamHttpError, UpstreamProtocolError } from '../upstream.errors';
import type {
  AnthropicCacheControl,
  AnthropicCitation,
  AnthropicDocumentBlock,
  AnthropicImageBlock,
  AnthropicMessage,
  AnthropicMessageResponse,
  AnthropicMessagesRequest,
  AnthropicRequestBlock,
  AnthropicStreamEvent,
  AnthropicTextBlock,
  AnthropicTool,
  AnthropicToolChoice,
  AnthropicToolResultBlock,
  AnthropicToolUseBlock,
  AnthropicUsage,
  AnthropicWebSearchTool,
} from './anthropic.types';
import { allowedToolNames, isFunctionTool } from '../translation/chat-tools';
import { toolArgumentsObject } from '../translation/tool-arguments';

/** `max_tokens` sent when the client gave no limit (Anthropic requires one). */
export const ANTHROPIC_DEFAULT_MAX_TOKENS = 4096;
/** Anthropic's smallest accepted `thinking.budget_tokens`. */
export const ANTHROPIC_MIN_THINKING_BUDGET = 1024;
/** `max_uses` of the web search tool for `search_options.search_strategy`. */
export const ANTHROPIC_SEARCH_MAX_USES: Readonly<Record<'turbo' | 'max' | 'agent', number>> = { turbo: 1, max: 5, agent: 10 };
/** `max_uses` without a strategy: Anthropic has no limit of its own, and the credit hold must cover every search. */
export const ANTHROPIC_DEFAULT_SEARCH_MAX_USES = ANTHROPIC_SEARCH_MAX_USES.agent;
/** Thinking budgets for `reasoning.effort` / `reasoning_effort`. */
export const ANTHROPIC_THINKING_BUDGETS: Readonly<Record<'low' | 'medium' | 'high', number>> = { low: 1024, medium: 4096, high: 16384 };

/** The OpenAI-shaped request cannot be expressed for Anthropic: the gateway answers 400. */
export class AnthropicTranslationError extends RequestTranslationError {
  constructor(
    message: string,
    /** Path of the offending request field, e.g. `messages[2].tool_calls[0].function.arguments`. */
    param?: string,
  ) {
    super(message, param);
    this.name = 'AnthropicTranslationError';
  }
}

/** OpenAI usage plus the cache-write counts Anthropic bills separately (one-hour writes only when there were any). */
export interface AnthropicOpenAiUsage extends UpstreamUsage {
  prompt_tokens_details: { cached_tokens: number; cache_write_tokens: number; cache_write_1h_tokens?: number };
  completion_tokens_details: { reasoning_tokens: null };
}

export type OpenAiFinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface ResponseOptions {
  /** `reasoning.exclude`: leave thinking out of the answer. */
  excludeReasoning: boolean;
  /** The tool asked for a structured answer, whose call is the answer's content (structuredOutputPlan). */
  answerTool?: StructuredAnswerTool;
  /** Unix seconds for `created`; default now. */
  created?: number;
}

// ---- request ----------------------------------------------------------------------------

export interface AnthropicRequestOptions {
  stream: boolean;
  /** The source takes Anthropic's structured outputs (`output_config.format`): catalogue `native: [structured_outputs]`. */
  structuredOutputs?: boolean;
}

/** Name of the tool a structured answer is asked through, unless the schema's own name can be used. */
export const ANTHROPIC_ANSWER_TOOL_NAME = 'json_answer';
const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The tool whose call carries a structured answer. */
export interface StructuredAnswerTool {
  name: string;
  /** The schema's value is the tool input's `value` (Anthropic tool inputs are objects). */
  wrapped: boolean;
}

/** How a `response_format` reaches Anthropic: natively, or as a tool call whose input is the answer. */
export type StructuredOutputPlan =
  | { kind: 'native'; schema: Record<string, unknown> }
  | { kind: 'tool'; tool: AnthropicTool; answer: StructuredAnswerTool };

/**
 * The way a chat request's `response_format` is sent to an Anthropic source (none for text).
 * Throws AnthropicTranslationError for a format that cannot be.
 */
export function structuredOutputPlan(request: UpstreamChatRequest, structuredOutputs: boolean): StructuredOutputPlan | undefined {
  const format = request.response_format;
  if (format === undefined || format === null || format.type === 'text') return undefined;
  const spec = format.type === 'json_schema' ? (format.json_schema ?? {}) : {};
  const schema = isRecord(spec.schema) ? spec.schema : undefined;
  if (schema !== undefined && structuredOutputs) return { kind: 'native', schema };

  if (request.enable_search === true) {
    throw new AnthropicTranslationError("response_format cannot be combined with enable_search on this model's Anthropic source: it has no structured outputs of its own, and the forced answer tool would leave the search out", 'response_format');
  }
  const clientTools = translateTools(request.tools, request.tool_choice) ?? [];
  const choice = request.tool_choice;
  const forcesOwnTool =
    clientTools.length > 0 &&
    (choice === 'required' || (typeof choice === 'object' && choice !== null && (choice.type === 'function' || (choice.type === 'allowed_tools' && choice.allowed_tools.mode === 'required'))));
  if (forcesOwnTool) {
    throw new AnthropicTranslationError("response_format cannot be combined with a tool_choice that forces a tool on this model's Anthropic source: it has no structured outputs of its own, and the answer is asked as a forced tool call", 'response_format');
  }
  const taken = new Set(clientTools.map((tool) => tool.name));
  // `json_schema` is forwarded as the client wrote it: its name and description are arbitrary JSON.
  const name = typeof spec.name === 'string' && TOOL_NAME.test(spec.name) && !taken.has(spec.name) ? spec.name : ANTHROPIC_ANSWER_TOOL_NAME;
  if (taken.has(name)) throw new AnthropicTranslationError(`response_format: a tool of the request is named ${JSON.stringify(name)}, the name the structured answer is asked through`, 'response_format');
  const open = { type: 'object', additionalProperties: true };
  const wrapped = schema !== undefined && !isObjectSchema(schema);
  const inputSchema = schema === undefined ? open : wrapped ? wrappedSchema(schema) : schema;
  const description =
    typeof spec.description === 'string' && spec.description !== ''
      ? spec.description
      : 'Give your final answer by calling this tool: its input is the answer, as JSON satisfying this schema.';
  return { kind: 'tool', tool: { name, description, input_schema: inputSchema }, answer: { name, wrapped } };
}

/** Whether a schema's values are objects (so it can be a tool's input_schema as it is). */
function isObjectSchema(schema: Record<string, unknown>): boolean {
  if (schema.type === 'object') return true;
  return schema.type === undefined && schema.anyOf === undefined && schema.oneOf === undefined && schema.$ref === undefined && (isRecord(schema.properties) || Array.isArray(schema.required));
}

/** A tool input_schema holding the schema's value as `value`; its definitions stay at the root, where its `$ref`s point. */
function wrappedSchema(schema: Record<string, unknown>): Record<string, unknown> {
  const { $defs, definitions, $schema: _dialect, ...value } = schema;
  const wrapper: Record<string, unknown> = { type: 'object', properties: { value }, required: ['value'], additionalProperties: false };
  if ($defs !== undefined) wrapper.$defs = $defs;
  if (definitions !== undefined) wrapper.definitions = definitions;
  return wrapper;
}

/** The answer tool of a request sent to a source (what the answer is read through), if any. */
export function structuredAnswerTool(request: UpstreamChatRequest, structuredOutputs: boolean): StructuredAnswerTool | undefined {
  const plan = structuredOutputPlan(request, structuredOutputs);
  return plan?.kind === 'tool' ? plan.answer : undefined;
}

/** The Anthropic request for an OpenAI-shaped chat request. Throws AnthropicTranslationError. */
export function toAnthropicRequest(request: UpstreamChatRequest, options: AnthropicRequestOptions): AnthropicMessagesRequest {
  const { system, messages } = translateMessages(request.messages);
  if (messages.length === 0) throw new AnthropicTranslationError('at least one user or assistant message is required', 'messages');

  const structured = structuredOutputPlan(request, options.structuredOutputs === true);
  let tools = translateTools(request.tools, request.tool_choice);
  let toolChoice = tools === undefined ? undefined : translateToolChoice(request.tool_choice, request.parallel_tool_calls);
  if (structured?.kind === 'tool') {
    // The client's tools stay callable (tool_choice any: some tool must be called, the answer's
    // among them) unless the client said none: then the answer's tool is the only one.
    const offered = toolChoice?.type === 'none' ? [] : (tools ?? []);
    tools = [...offered, structured.tool];
    const oneCall = toolChoice !== undefined && 'disable_parallel_tool_use' in toolChoice && toolChoice.disable_parallel_tool_use === true;
    toolChoice = offered.length > 0 ? { type: 'any', ...(oneCall ? { disable_parallel_tool_use: true } : {}) } : { type: 'tool', name: structured.tool.name };
  }
  const forcesTool = toolChoice?.type === 'any' || toolChoice?.type === 'tool';

  const limit = request.max_completion_tokens ?? request.max_tokens ?? undefined;
  let maxTokens = limit ?? ANTHROPIC_DEFAULT_MAX_TOKENS;
  let budget = forcesTool ? undefined : thinkingBudget(request);
  if (budget !== undefined) {
    if (limit === undefined) maxTokens = budget + ANTHROPIC_DEFAULT_MAX_TOKENS;
    else budget = Math.min(budget, limit - 1);
    if (budget < ANTHROPIC_MIN_THINKING_BUDGET) budget = undefined;
  }

  const body: AnthropicMessagesRequest = { model: request.model, max_tokens: maxTokens, messages };
  if (system.length > 0) body.system = system;
  if (budget !== undefined) body.thinking = { type: 'enabled', budget_tokens: budget };

  const temperature = request.temperature ?? undefined;
  if (temperature !== undefined && budget === undefined) body.temperature = Math.min(1, temperature);
  const topP = request.top_p ?? undefined;
  if (topP !== undefined && (budget === undefined || topP >= 0.95)) body.top_p = topP;

  const stop = stopSequences(request.stop);
  if (stop.length > 0) body.stop_sequences = stop;
  const webSearch = webSearchTool(request);
  if (tools !== undefined || webSearch !== undefined) body.tools = [...(tools ?? []), ...(webSearch !== undefined ? [webSearch] : [])];
  if (toolChoice !== undefined) body.tool_choice = toolChoice;
  if (structured?.kind === 'native') body.output_config = { format: { type: 'json_schema', schema: structured.schema } };
  if (request.user) body.metadata = { user_id: request.user };
  if (options.stream) body.stream = true;
  return body;
}

/** Whether the client asked to leave reasoning out of the answer (`reasoning.exclude`). */
export function isReasoningExcluded(request: UpstreamChatRequest): boolean {
  return request.reasoning?.exclude === true;
}

function translateMessages(input: readonly ChatMessage[]): { system: AnthropicTextBlock[]; messages: AnthropicMessage[] } {
  const system: AnthropicTextBlock[] = [];
  const messages: AnthropicMessage[] = [];
  const append = (role: AnthropicMessage['role'], blocks: AnthropicRequestBlock[]): void => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    if (last !== undefined && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };

  input.forEach((message, i) => {
    const path = `messages[${i}]`;
    switch (message.role) {
      case 'system':
      case 'developer':
        system.push(...textBlocks(message.content, `${path}.content`));
        return;
      case 'user':
        append('user', contentBlocks(message.content, `${path}.content`));
        return;
      case 'assistant':
        append('assistant', [...textBlocks(message.content, `${path}.content`), ...toolUses(message.tool_calls, `${path}.tool_calls`)]);
        return;
      case 'tool':
        append('user', [toolResult(message, path)]);
        return;
    }
  });

  for (const message of messages) {
    if (message.role === 'user' && message.content.some((block) => block.type === 'tool_result')) {
      message.content = [...message.content.filter((block) => block.type === 'tool_result'), ...message.content.filter((block) => block.type !== 'tool_result')];
    }
  }
  return { system, messages };
}

/** Text-only content (system, assistant, tool results): a string or text parts. */
function textBlocks(content: TextContent | null | undefined, path: string): AnthropicTextBlock[] {
  return contentBlocks(content, path).filter((block): block is AnthropicTextBlock => block.type === 'text');
}

function contentBlocks(content: UserContent | null | undefined, path: string): Array<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock> {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return isBlank(content) ? [] : [{ type: 'text', text: content }];
  const blocks: Array<AnthropicTextBlock | AnthropicImageBlock | AnthropicDocumentBlock> = [];
  content.forEach((part, j) => {
    const partPath = `${path}[${j}]`;
    switch (part.type) {
      case 'text':
        if (!isBlank(part.text)) blocks.push(withCache<AnthropicTextBlock>({ type: 'text', text: part.text }, part.cache_control));
        return;
      case 'image_url':
        blocks.push(withCache(imageBlock(part.image_url), part.cache_control));
        return;
      case 'file':
        blocks.push(withCache(documentBlock(part.file, partPath), part.cache_control));
        return;
      default:
        throw new AnthropicTranslationError(`${partPath}: content part type ${JSON.stringify(part.type)} is not supported for Anthropic`, partPath);
    }
  });
  return blocks;
}

function imageBlock(image: ImageUrlDto): AnthropicImageBlock {
  const data = base64DataUrl(image.url);
  if (data !== undefined) return { type: 'image', source: { type: 'base64', media_type: data.mediaType, data: data.data } };
  return { type: 'image', source: { type: 'url', url: image.url } };
}

/** A chat `file` part as a document block: a PDF as its base64 data, plain text decoded (Anthropic reads text documents as text). */
function documentBlock(file: FileDataDto, path: string): AnthropicDocumentBlock {
  const document = inlineDocumentOf(file, path, 'Anthropic');
  if ('refusal' in document) throw new AnthropicTranslationError(document.refusal, document.param);
  let block: AnthropicDocumentBlock;
  if (document.mediaType === 'application/pdf') block = { type: 'document', source: { type: 'base64', media_type: 'application/pdf', data: document.data } };
  else {
    const text = documentText(document.data);
    if (text === undefined) throw new AnthropicTranslationError('a text/plain file must be UTF-8 text', `${path}.file.file_data`);
    block = { type: 'document', source: { type: 'text', media_type: 'text/plain', data: text } };
  }
  if (document.filename !== undefined) block.title = document.filename;
  return block;
}

function toolUses(calls: readonly AssistantToolCall[] | null | undefined, path: string): AnthropicToolUseBlock[] {
  return (calls ?? []).map((call, k): AnthropicToolUseBlock => {
    const callPath = `${path}[${k}]`;
    if (call.type !== 'function') throw new AnthropicTranslationError(`${callPath}: only function tool calls can be sent to Anthropic`, callPath);
    const { name, arguments: args } = call.function;
    if (call.id === '' || name === '') throw new AnthropicTranslationError(`${callPath} needs an id and a function name`, callPath);
    return { type: 'tool_use', id: call.id, name, input: toolArgumentsObject(args, `${callPath}.function.arguments`, 'Anthropic', AnthropicTranslationError) };
  });
}

function toolResult(message: ToolMessageDto, path: string): AnthropicToolResultBlock {
  if (message.tool_call_id === '') throw new AnthropicTranslationError(`${path}.tool_call_id is required`, `${path}.tool_call_id`);
  const content = typeof message.content === 'string' ? message.content : textBlocks(message.content, `${path}.content`);
  return { type: 'tool_result', tool_use_id: message.tool_call_id, content };
}

function translateTools(value: readonly ChatTool[] | null | undefined, choice: ToolChoice | null | undefined): AnthropicTool[] | undefined {
  if (value === undefined || value === null) return undefined;
  const allowed = allowedToolNames(choice);
  const tools: AnthropicTool[] = [];
  for (const tool of value.filter(isFunctionTool)) {
    const { name, description, parameters } = tool.function;
    if (allowed !== undefined && !allowed.has(name)) continue;
    const translated: AnthropicTool = { name, input_schema: parameters ?? { type: 'object', properties: {} } };
    if (description) translated.description = description;
    tools.push(withCache(translated, tool.cache_control));
  }
  return tools.length > 0 ? tools : undefined;
}

/** Anthropic's server-side web search for `enable_search: true`. */
function webSearchTool(request: UpstreamChatRequest): AnthropicWebSearchTool | undefined {
  if (request.enable_search !== true) return undefined;
  const strategy = request.search_options?.search_strategy;
  const maxUses = strategy ? ANTHROPIC_SEARCH_MAX_USES[strategy] : ANTHROPIC_DEFAULT_SEARCH_MAX_USES;
  return { type: 'web_search_20250305', name: 'web_search', max_uses: maxUses };
}

function translateToolChoice(choice: ToolChoice | null | undefined, parallel: boolean | null | undefined): AnthropicToolChoice | undefined {
  let translated: AnthropicToolChoice;
  if (choice === undefined || choice === null || choice === 'auto') translated = { type: 'auto' };
  else if (choice === 'required') translated = { type: 'any' };
  else if (choice === 'none') return { type: 'none' };
  else if (choice.type === 'function') translated = { type: 'tool', name: choice.function.name };
  else if (choice.type === 'allowed_tools') translated = choice.allowed_tools.mode === 'required' ? { type: 'any' } : { type: 'auto' };
  else throw new AnthropicTranslationError('tool_choice: only auto, none, required, a function or allowed_tools can be sent to Anthropic', 'tool_choice');
  if (parallel === false) return { ...translated, disable_parallel_tool_use: true };
  // `auto` is Anthropic's default: send it only when the client asked for it.
  return choice === undefined || choice === null ? undefined : translated;
}

function thinkingBudget(request: UpstreamChatRequest): number | undefined {
  const explicit = request.reasoning?.max_tokens;
  if (explicit !== undefined && explicit !== null) return Math.max(ANTHROPIC_MIN_THINKING_BUDGET, explicit);
  const effort = request.reasoning?.effort ?? request.reasoning_effort;
  return effort === 'low' || effort === 'medium' || effort === 'high' ? ANTHROPIC_THINKING_BUDGETS[effort] : undefined;
}

function stopSequences(stop: string | string[] | null | undefined): string[] {
  const list = typeof stop === 'string' ? [stop] : (stop ?? []);
  return list.filter((item) => item !== '');
}

function withCache<T extends { cache_control?: AnthropicCacheControl }>(target: T, cacheControl: CacheControlDto | null | undefined): T {
  if (cacheControl === undefined || cacheControl === null) return target;
  target.cache_control = cacheControl.ttl ? { type: 'ephemeral', ttl: cacheControl.ttl } : { type: 'ephemeral' };
  return target;
}

// ---- response ---------------------------------------------------------------------------

/** OpenAI `finish_reason` for an Anthropic `stop_reason`. */
export function toFinishReason(stopReason: string | null | undefined): OpenAiFinishReason {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'refusal':
      return 'content_filter';
    default:
      // end_turn, stop_sequence, pause_turn (the turn is complete as far as the client can act), unknown
      return 'stop';
  }
}

/** Anthropic bills each server-side web search (`usage.server_tool_use.web_search_requests`). */
function webSearchCalls(requests: number | undefined): { web_search_calls?: number } {
  return typeof requests === 'number' && Number.isSafeInteger(requests) && requests > 0 ? { web_search_calls: requests } : {};
}

/**
 * OpenAI usage for Anthropic's; prompt tokens include cache reads and writes, the writes of
 * one-hour lifetime (billed dearer) told apart from `cache_creation`; web searches as `web_search_calls`.
 */
export function toOpenAiUsage(usage: Partial<AnthropicUsage>): AnthropicOpenAiUsage {
  const cached = usage.cache_read_input_tokens ?? 0;
  const written = usage.cache_creation_input_tokens ?? 0;
  const writtenForAnHour = usage.cache_creation?.ephemeral_1h_input_tokens ?? 0;
  const prompt = (usage.input_tokens ?? 0) + cached + written;
  const completion = usage.output_tokens ?? 0;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached, cache_write_tokens: written, ...(writtenForAnHour > 0 && { cache_write_1h_tokens: writtenForAnHour }) },
    completion_tokens_details: { reasoning_tokens: null },
    ...webSearchCalls(usage.server_tool_use?.web_search_requests),
  };
}

/** The OpenAI `chat.completion` for an Anthropic message. */
export function fromAnthropicResponse(response: AnthropicMessageResponse, options: ResponseOptions): UpstreamChatCompletion {
  const texts: string[] = [];
  const thinking: string[] = [];
  const toolCalls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> = [];
  const annotations: UrlCitation[] = [];
  let length = 0;
  for (const block of response.content) {
    if (block.type === 'text') {
      texts.push(block.text);
      annotations.push(...urlCitations(block.citations, length, length + block.text.length));
      length += block.text.length;
    } else if (block.type === 'thinking') thinking.push(block.thinking);
    else if (block.type === 'tool_use' && block.name === options.answerTool?.name) {
      const answer = answerText(block.input, options.answerTool);
      texts.push(answer);
      length += answer.length;
    } else if (block.type === 'tool_use') toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input ?? {}) } });
  }
  const message: UpstreamChatCompletion['choices'][number]['message'] = {
    role: 'assistant',
    content: texts.length > 0 ? texts.join('') : null,
    refusal: null,
  };
  if (thinking.length > 0 && !options.excludeReasoning) message.reasoning_content = thinking.join('');
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (annotations.length > 0) message.annotations = annotations;
  return {
    id: response.id,
    object: 'chat.completion',
    created: options.created ?? nowSeconds(),
    model: response.model,
    choices: [{ index: 0, message, finish_reason: answeredFinishReason(response.stop_reason, toolCalls.length > 0) }],
    usage: toOpenAiUsage(response.usage),
  };
}

/** The finish reason, a stop to call the answer's tool being the answer's end (`stop`) when no other tool was called. */
function answeredFinishReason(stopReason: string | null | undefined, calledTools: boolean): OpenAiFinishReason {
  const reason = toFinishReason(stopReason);
  return reason === 'tool_calls' && !calledTools ? 'stop' : reason;
}

/** The JSON text of a structured answer given as the answer tool's input. */
function answerText(input: unknown, tool: StructuredAnswerTool): string {
  const value = tool.wrapped && isRecord(input) ? input.value : input;
  return JSON.stringify(value ?? null);
}

/** An OpenAI `url_citation` annotation. */
export interface UrlCitation {
  type: 'url_citation';
  url_citation: { start_index: number; end_index: number; title: string; url: string };
}

/**
 * The `url_citation` annotations of a text block's web search citations: each spans the whole
 * block, [start, end) in the joined content (the spec's end_index is the last character).
 */
function urlCitations(citations: readonly AnthropicCitation[] | null | undefined, start: number, end: number): UrlCitation[] {
  if (!citations || end <= start) return [];
  const annotations: UrlCitation[] = [];
  for (const citation of citations) {
    if (citation.type !== 'web_search_result_location' || typeof citation.url !== 'string' || citation.url === '') continue;
    const title = typeof citation.title === 'string' && citation.title !== '' ? citation.title : citation.url;
    annotations.push({ type: 'url_citation', url_citation: { start_index: start, end_index: end - 1, title, url: citation.url } });
  }
  return annotations;
}

/** Whether a parsed answer has the shape of an Anthropic message. */
export function isAnthropicMessage(value: unknown): value is AnthropicMessageResponse {
  return isRecord(value) && value.type === 'message' && typeof value.id === 'string' && Array.isArray(value.content) && isRecord(value.usage);
}

// ---- stream -----------------------------------------------------------------------------

/** Parses one SSE event of an Anthropic stream. */
export function parseStreamEvent(provider: string, event: SseEvent): AnthropicStreamEvent {
  let data: unknown;
  try {
    data = JSON.parse(event.data);
  } catch {
    throw new UpstreamProtocolError(provider, 'a stream event is not JSON');
  }
  if (!isRecord(data) || typeof data.type !== 'string') throw new UpstreamProtocolError(provider, 'a stream event has no type');
  return data as unknown as AnthropicStreamEvent;
}

type ChunkDelta = UpstreamChatChunk['choices'][number]['delta'];

/**
 * Turns Anthropic stream events into OpenAI chunks, one event at a time:
 * message_start → a role chunk; text / thinking / tool-input deltas → content /
 * reasoning_content / tool_calls chunks; message_delta's stop_reason → a finish chunk,
 * preceded by one `delta.annotations` chunk when text blocks were cited (citations_delta);
 * message_stop → a final chunk with `choices: []` and the usage. Empty deltas, pings,
 * signatures, server tool blocks (server_tool_use and its input, web_search_tool_result) and
 * unknown events produce nothing; an `error` event throws UpstreamHttpError.
 */
export class AnthropicStreamTranslator {
  private id = '';
  private model = '';
  private readonly created: number;
  private started = false;
  private finishSent = false;
  private stopped = false;
  private usage: Partial<AnthropicUsage> = {};
  /** Anthropic content-block index → OpenAI tool-call index. */
  private readonly toolCalls = new Map<number, number>();
  /** Content-block indexes of calls of the answer tool, and (wrapped answers) their input so far. */
  private readonly answerBlocks = new Map<number, string>();
  /** Length of the content streamed so far (UTF-16), where the next text block starts. */
  private contentLength = 0;
  /** Open text blocks by content-block index: where each starts and the citations it got. */
  private readonly textBlocks = new Map<number, { start: number; citations: AnthropicCitation[] }>();
  /** Annotations of closed text blocks, sent before the finish chunk. */
  private annotations: UrlCitation[] = [];

  constructor(
    private readonly provider: string,
    private readonly options: ResponseOptions,
  ) {
    this.created = options.created ?? nowSeconds();
  }

  /** True once message_stop has been translated. */
  get finished(): boolean {
    return this.stopped;
  }

  push(event: AnthropicStreamEvent): UpstreamChatChunk[] {
    if (event.type === 'error') {
      const error: Record<string, unknown> = isRecord(event.error) ? event.error : {};
      const message = typeof error.message === 'string' ? error.message : 'error event in the stream';
      throw new UpstreamHttpError(this.provider, error.type === 'overloaded_error' ? 503 : 502, message);
    }
    if (this.stopped || event.type === 'ping') return [];
    if (event.type === 'message_start') {
      if (this.started) return [];
      this.started = true;
      this.id = event.message.id;
      this.model = event.message.model;
      this.usage = { ...event.message.usage };
      return [this.chunk({ role: 'assistant', content: '' })];
    }
    if (!this.started) throw new UpstreamProtocolError(this.provider, `the stream did not begin with message_start (got ${event.type})`);

    switch (event.type) {
      case 'content_block_start': {
        const block = event.content_block;
        if (block.type === 'tool_use' && block.name === this.options.answerTool?.name) {
          this.answerBlocks.set(event.index, '');
          return [];
        }
        if (block.type === 'tool_use') {
          const index = this.toolCalls.size;
          this.toolCalls.set(event.index, index);
          return [this.chunk({ tool_calls: [{ index, id: block.id, type: 'function', function: { name: block.name, arguments: '' } }] })];
        }
        if (block.type === 'text') {
          this.textBlocks.set(event.index, { start: this.contentLength, citations: [...(block.citations ?? [])] });
          return this.text(block.text);
        }
        if (block.type === 'thinking') return this.thinking(block.thinking);
        return [];
      }
      case 'content_block_stop': {
        this.closeTextBlock(event.index);
        const answer = this.answerBlocks.get(event.index);
        if (answer === undefined || !this.options.answerTool?.wrapped) return [];
        // A wrapped answer is whole only at its block's end: its JSON is the input's `value`.
        this.answerBlocks.delete(event.index);
        let input: unknown;
        try {
          input = JSON.parse(answer === '' ? '{}' : answer);
        } catch {
          throw new UpstreamProtocolError(this.provider, "the answer tool's input is not JSON");
        }
        return this.text(answerText(input, this.options.answerTool));
      }
      case 'content_block_delta': {
        const delta = event.delta;
        if (delta.type === 'text_delta') return this.text(delta.text);
        if (delta.type === 'thinking_delta') return this.thinking(delta.thinking);
        if (delta.type === 'citations_delta') {
          const citation = delta.citation;
          if (isRecord(citation) && typeof citation.type === 'string') this.textBlocks.get(event.index)?.citations.push(citation as AnthropicCitation);
          return [];
        }
        if (delta.type === 'input_json_delta' && this.answerBlocks.has(event.index)) {
          if (!delta.partial_json) return [];
          if (this.options.answerTool?.wrapped) {
            this.answerBlocks.set(event.index, this.answerBlocks.get(event.index)! + delta.partial_json);
            return [];
          }
          return this.text(delta.partial_json);
        }
        if (delta.type === 'input_json_delta') {
          const index = this.toolCalls.get(event.index);
          if (index === undefined || !delta.partial_json) return [];
          return [this.chunk({ tool_calls: [{ index, function: { arguments: delta.partial_json } }] })];
        }
        return [];
      }
      case 'message_delta': {
        for (const [key, value] of Object.entries(event.usage ?? {})) {
          if (value !== null && value !== undefined) Object.assign(this.usage, { [key]: value });
        }
        if (event.delta?.stop_reason === null || event.delta?.stop_reason === undefined || this.finishSent) return [];
        this.finishSent = true;
        return [...this.annotationChunks(), this.chunk({}, answeredFinishReason(event.delta.stop_reason, this.toolCalls.size > 0))];
      }
      case 'message_stop': {
        this.stopped = true;
        const chunks: UpstreamChatChunk[] = [];
        if (!this.finishSent) chunks.push(...this.annotationChunks(), this.chunk({}, 'stop'));
        this.finishSent = true;
        chunks.push({ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], usage: toOpenAiUsage(this.usage) });
        return chunks;
      }
      default:
        return [];
    }
  }

  /** Call when the event stream ended: a stream cut before message_stop is an error. */
  end(): void {
    if (!this.stopped) throw new UpstreamProtocolError(this.provider, 'the stream ended before message_stop');
  }

  private text(text: string | undefined): UpstreamChatChunk[] {
    if (!text) return [];
    this.contentLength += text.length;
    return [this.chunk({ content: text })];
  }

  private closeTextBlock(index: number): void {
    const block = this.textBlocks.get(index);
    if (block === undefined) return;
    this.textBlocks.delete(index);
    this.annotations.push(...urlCitations(block.citations, block.start, this.contentLength));
  }

  /** The one `delta.annotations` chunk (blocks still open count as closed here), or none. */
  private annotationChunks(): UpstreamChatChunk[] {
    for (const index of [...this.textBlocks.keys()]) this.closeTextBlock(index);
    if (this.annotations.length === 0) return [];
    const annotations = this.annotations;
    this.annotations = [];
    return [this.chunk({ annotations })];
  }

  private thinking(text: string | undefined): UpstreamChatChunk[] {
    if (!text) return [];
    if (!this.options.excludeReasoning) return [this.chunk({ reasoning_content: text })];
    return [{ id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [], hiddenText: text }];
  }

  private chunk(delta: ChunkDelta, finishReason: string | null = null): UpstreamChatChunk {
    return {
      id: this.id,
      object: 'chat.completion.chunk',
      created: this.created,
      model: this.model,
      choices: [{ index: 0, delta, finish_reason: finishReason }],
    };
  }
}

// ---- helpers ----------------------------------------------------------------------------

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function isBlank(text: string): boolean {
  return text.trim() === '';
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}
