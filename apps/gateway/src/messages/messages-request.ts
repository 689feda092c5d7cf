import { isCheckedBlock, type CatalogueModel, type ChatCompletionRequestDto, type MessagesBlock, type MessagesCheckedBlock, type MessagesCountTokensRequestDto, type MessagesRequestDto, type MessagesTextBlock, type MessagesTool } from '@igw/contracts';
import { isRecord } from '@igw/validation';
import { cannotCarry, translateForNative } from '../chat/front-translation';

// Anthropic's Messages request → the gateway's internal (OpenAI-shaped) chat request, which the
// chat pipeline runs as it runs chat completions; the chat adapters take it from there.
// Anthropic sources get the client's request natively instead (messages-native.ts): for them the
// translation only decides validation, the hold and the count of a stream cut short. Decisions
// beyond field renames:
// - `system` (top-level, and any `role: "system"` message) becomes system messages in place,
//   text blocks keeping `cache_control`.
// - A user turn's `tool_result` blocks become `tool` messages ahead of the turn's other content
//   (the order Anthropic requires of them); an error result's text is marked as one, and its
//   images follow in a user message (a tool message carries text only).
// - An assistant turn's `tool_use` blocks become `tool_calls`; its thinking blocks are dropped
//   (the chat request has no place for them or their signatures).
// - Server tools (a versioned `type` such as `web_search_20250305`) are left out of the call;
//   `tool_choice` goes with the tools when none is left.
// - Thinking: a budget becomes `reasoning.max_tokens` where the source is Anthropic or Google
//   (the adapters that read a budget), else a reasoning effort for a model that reasons;
//   `adaptive` becomes the effort of `output_config.effort` (medium by default). A model that
//   does not reason gets no thinking request. (The chat request reaches no Anthropic source, so
//   a turn answering tool calls keeps its thinking: no signed block is missed.)
// - `max_tokens` is a most, so one above the model's output limit is lowered to it (Claude Code
//   asks for 32,000 or more whatever the model), where chat completions would refuse it.
// - `metadata.user_id` becomes `user`; `top_k` is not sent (no chat adapter takes it).
// - `output_config.format` (structured outputs, a JSON schema) becomes `response_format`
//   {type: 'json_schema', json_schema: {name: 'answer', schema}}; the answer's JSON text comes
//   back as a text block.

const EFFORTS = new Set(['low', 'medium', 'high']);
/** The `json_schema.name` of the response format an `output_config.format` becomes (OpenAI requires one). */
export const MESSAGES_ANSWER_FORMAT_NAME = 'answer';
/** Budgets up to these many tokens ask for that effort from a source that takes efforts only. */
const EFFORT_BY_BUDGET: ReadonlyArray<[number, 'low' | 'medium']> = [
  [2048, 'low'],
  [8192, 'medium'],
];

type ChatMessage = Record<string, unknown>;
type ChatPart = Record<string, unknown>;

/**
 * The chat request for a model some of whose sources take the Messages request natively:
 * blocks the chat request cannot carry (documents by URL, server tool blocks, ...) are left out
 * of it (a document stays as an empty file part, so the hold counts one), and `untranslatable`
 * says why a source that needs the translation cannot be sent it.
 */
export function chatRequestForNative(body: MessagesRequestDto, model: MessagesTarget): { request: ChatCompletionRequestDto; untranslatable?: string } {
  return translateForNative(() => chatRequestOf(body, model));
}

/** What the translation reads of the catalogue entry: its type (the source's format) and whether it reasons. */
export type MessagesTarget = Pick<CatalogueModel, 'type' | 'capabilities'> & { info?: Pick<CatalogueModel['info'], 'outputMax'> };

/** The internal chat request for a Messages request. */
export function chatRequestOf(body: MessagesRequestDto, model: MessagesTarget): ChatCompletionRequestDto {
  const outputMax = model.info?.outputMax;
  const request: Record<string, unknown> = { ...promptOf(body, model), max_tokens: outputMax && body.max_tokens > outputMax ? outputMax : body.max_tokens };
  if (body.stream === true) request.stream = true;
  if (body.stop_sequences !== undefined && body.stop_sequences.length > 0) request.stop = body.stop_sequences;
  if (body.temperature !== undefined) request.temperature = body.temperature;
  if (body.top_p !== undefined) request.top_p = body.top_p;
  // An optional field may be null: validation takes it as absent.
  const user = body.metadata?.user_id ?? '';
  if (user !== '') request.user = user;
  const format = body.output_config?.format;
  if (format !== undefined) request.response_format = { type: 'json_schema', json_schema: { name: MESSAGES_ANSWER_FORMAT_NAME, schema: format.schema } };
  return request as unknown as ChatCompletionRequestDto;
}

/** The prompt part of the chat request (what `count_tokens` counts): model, messages, tools and thinking. */
export function promptOf(body: MessagesRequestDto | MessagesCountTokensRequestDto, model: MessagesTarget): Record<string, unknown> {
  const messages: ChatMessage[] = [];
  if (body.system !== undefined) pushSystem(messages, body.system);
  body.messages.forEach((message, index) => {
    const path = `messages[${index}]`;
    if (message.role === 'system') pushSystem(messages, message.content);
    else if (message.role === 'user') pushUser(messages, message.content, `${path}.content`);
    else pushAssistant(messages, message.content, `${path}.content`);
  });
  const request: Record<string, unknown> = { model: body.model, messages };
  const tools = (body.tools ?? []).filter(isClientTool).map(functionTool);
  if (tools.length > 0) {
    request.tools = tools;
    const choice = body.tool_choice;
    if (choice !== undefined) {
      if (choice.type === 'auto') request.tool_choice = 'auto';
      else if (choice.type === 'any') request.tool_choice = 'required';
      else if (choice.type === 'none') request.tool_choice = 'none';
      else request.tool_choice = { type: 'function', function: { name: choice.name } };
      if (choice.disable_parallel_tool_use === true) request.parallel_tool_calls = false;
    }
  }
  Object.assign(request, reasoningOf(body, model));
  return request;
}

/** Server tools carry a versioned type and are the upstream's own: they are left out of the call. */
export function isClientTool(tool: MessagesTool): boolean {
  return tool.type === undefined || tool.type === 'custom';
}

function functionTool(tool: MessagesTool): Record<string, unknown> {
  const definition: Record<string, unknown> = { name: tool.name, parameters: tool.input_schema };
  if (typeof tool.description === 'string') definition.description = tool.description;
  const translated: Record<string, unknown> = { type: 'function', function: definition };
  if (tool.cache_control !== undefined) translated.cache_control = tool.cache_control;
  return translated;
}

function reasoningOf(body: MessagesRequestDto | MessagesCountTokensRequestDto, model: MessagesTarget): Record<string, unknown> {
  const thinking = body.thinking;
  if (thinking === undefined || thinking.type === 'disabled') return {};
  const takesBudget = model.type.startsWith('anthropic/') || model.type.startsWith('google/');
  if (!takesBudget && !(model.capabilities ?? []).includes('reasoning')) return {};
  if (thinking.type === 'enabled' && thinking.budget_tokens !== undefined) {
    if (takesBudget) return { reasoning: { max_tokens: thinking.budget_tokens } };
    return { reasoning_effort: EFFORT_BY_BUDGET.find(([most]) => thinking.budget_tokens! <= most)?.[1] ?? 'high' };
  }
  const asked = 'output_config' in body ? body.output_config?.effort : undefined;
  const effort = asked === 'max' ? 'high' : asked !== undefined && EFFORTS.has(asked) ? asked : 'medium';
  return takesBudget ? { reasoning: { effort } } : { reasoning_effort: effort };
}

function pushSystem(messages: ChatMessage[], content: string | MessagesTextBlock[]): void {
  if (typeof content === 'string') {
    if (content !== '') messages.push({ role: 'system', content });
    return;
  }
  const parts = content.map(textPart);
  if (parts.length > 0) messages.push({ role: 'system', content: parts });
}

function textPart(block: Pick<MessagesTextBlock, 'text'> & { cache_control?: unknown }): ChatPart {
  const part: ChatPart = { type: 'text', text: block.text };
  if (block.cache_control !== undefined) part.cache_control = block.cache_control;
  return part;
}

/** Validation checks that a turn's image has a source object, not what is in it; nor the blocks inside a document's content. */
function imagePart(block: Record<string, unknown>, path: string): ChatPart | undefined {
  const source = isRecord(block.source) ? block.source : {};
  let url: string;
  if (source.type === 'base64' && typeof source.media_type === 'string' && typeof source.data === 'string') url = `data:${source.media_type};base64,${source.data}`;
  else if (source.type === 'url' && typeof source.url === 'string') url = source.url;
  else return cannotCarry(`${path}.source`, "Expected a base64 source {type: 'base64', media_type, data} or {type: 'url', url}");
  const part: ChatPart = { type: 'image_url', image_url: { url } };
  if (block.cache_control !== undefined) part.cache_control = block.cache_control;
  return part;
}

function pushUser(messages: ChatMessage[], content: string | MessagesBlock[], path: string): void {
  if (typeof content === 'string') {
    messages.push({ role: 'user', content });
    return;
  }
  const parts: ChatPart[] = [];
  const mediaOfResults: ChatPart[] = [];
  content.forEach((block, index) => {
    const at = `${path}[${index}]`;
    if (isCheckedBlock(block, 'text')) parts.push(textPart(block));
    else if (isCheckedBlock(block, 'image')) {
      const image = imagePart(block, at);
      if (image) parts.push(image);
    } else if (isCheckedBlock(block, 'tool_result')) messages.push(toolMessage(block, at, mediaOfResults));
    else if (block.type === 'document') parts.push(...documentParts(block, at));
    else cannotCarry(`${at}.type`, `a ${JSON.stringify(block.type)} block cannot be sent in a user turn by this gateway`);
  });
  const userParts = [...mediaOfResults, ...parts];
  if (userParts.length > 0) messages.push({ role: 'user', content: userParts });
}

/**
 * A plain-text document is its text; a base64 PDF is a chat `file` part (every chat source takes
 * one, libs/providers translation/file-part.ts); a document of custom content (source type
 * `content`) is its text and image blocks, so an image inside it by URL is held as the image it
 * is. A document by URL or file id cannot be sent: its bytes would reach the provider without
 * the credit hold having counted them. Validation checks nothing of a document.
 */
function documentParts(block: MessagesBlock, path: string): ChatPart[] {
  const source = isRecord(block.source) ? block.source : {};
  if (source.type === 'text' && typeof source.data === 'string') return [{ type: 'text', text: source.data }];
  if (source.type === 'base64' && source.media_type === 'application/pdf' && typeof source.data === 'string') {
    const file: Record<string, unknown> = { file_data: `data:application/pdf;base64,${source.data}` };
    if (typeof block.title === 'string' && block.title !== '') file.filename = block.title;
    return [{ type: 'file', file }];
  }
  if (source.type === 'content') return contentSourceParts(source.content, `${path}.source.content`);
  cannotCarry(`${path}.source`, "only plain-text documents (source type text), custom content (source type content) and PDFs as base64 (source type base64, media_type application/pdf) can be sent by this gateway");
  // Left out for native sources, which are sent the document (a URL Anthropic fetches): the
  // request is still held as one carrying a document, whose pages decide its cost.
  return [DOCUMENT_SENT_NATIVELY];
}

/** The blocks of a `content` document source (unvalidated): text and images, as Anthropic allows there. */
function contentSourceParts(content: unknown, path: string): ChatPart[] {
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  if (!Array.isArray(content)) return cannotCarry(path, 'Expected a string or an array of text and image blocks') ?? [];
  return content.flatMap((inner: unknown, index): ChatPart[] => {
    const at = `${path}[${index}]`;
    const block = isRecord(inner) ? inner : {};
    if (block.type === 'text' && typeof block.text === 'string') return [textPart({ text: block.text, cache_control: block.cache_control })];
    if (block.type === 'image') {
      const image = imagePart(block, at);
      return image ? [image] : [];
    }
    return cannotCarry(`${at}.type`, `a ${JSON.stringify(block.type ?? null)} block cannot be sent in a document's content by this gateway (text and image blocks can)`) ?? [];
  });
}

/** Stands, in the chat request a native request is planned with, for a document only the native request carries. */
const DOCUMENT_SENT_NATIVELY: ChatPart = { type: 'file', file: {} };

function toolMessage(block: MessagesCheckedBlock<'tool_result'>, path: string, media: ChatPart[]): ChatMessage {
  const texts: string[] = [];
  const content = block.content;
  if (typeof content === 'string') texts.push(content);
  else {
    (content ?? []).forEach((inner, index) => {
      const at = `${path}.content[${index}]`;
      if (isCheckedBlock(inner, 'text')) texts.push(inner.text);
      else if (isCheckedBlock(inner, 'image')) {
        const image = imagePart(inner, at);
        if (image) media.push(image);
      } else if (inner.type === 'document') {
        // A chat tool message holds text only: a PDF or an image goes with the results' media, in the user turn after it.
        for (const part of documentParts(inner, at)) {
          if (part.type === 'text') texts.push(part.text as string);
          else media.push(part);
        }
      } else cannotCarry(`${at}.type`, `a ${JSON.stringify(inner.type)} block cannot be sent in a tool result by this gateway`);
    });
  }
  const text = texts.join('\n');
  return { role: 'tool', tool_call_id: block.tool_use_id, content: block.is_error === true ? `Error: ${text}` : text };
}

function pushAssistant(messages: ChatMessage[], content: string | MessagesBlock[], path: string): void {
  if (typeof content === 'string') {
    messages.push({ role: 'assistant', content });
    return;
  }
  const texts: string[] = [];
  const toolCalls: Array<Record<string, unknown>> = [];
  content.forEach((block, index) => {
    if (isCheckedBlock(block, 'text')) texts.push(block.text);
    else if (isCheckedBlock(block, 'tool_use')) toolCalls.push({ id: block.id, type: 'function', function: { name: block.name, arguments: JSON.stringify(block.input) } });
    else if (block.type === 'thinking' || block.type === 'redacted_thinking') return;
    else cannotCarry(`${path}[${index}].type`, `a ${JSON.stringify(block.type)} block cannot be sent in an assistant turn by this gateway`);
  });
  const message: ChatMessage = { role: 'assistant', content: texts.length > 0 ? texts.join('') : null };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (texts.length > 0 || toolCalls.length > 0) messages.push(message);
}
