// Bedrock's Converse API, for every family but Anthropic's (Llama, Nova, Mistral, gpt-oss, ...),
// behind the gateway's OpenAI shape.
//
// Request (OpenAI → Converse): system and developer messages become `system` text blocks; user
// text and images (base64 data URLs: Converse takes image bytes, never a URL) become content
// blocks; assistant tool_calls become `toolUse` blocks and tool messages `toolResult` blocks of a
// user turn (consecutive turns of one role are merged, as Converse needs them alternating);
// max_tokens, temperature, top_p and stop become `inferenceConfig`; function tools become
// `toolConfig.tools[].toolSpec` and tool_choice auto / required / a function becomes
// `toolChoice` auto / any / tool. What Converse cannot carry (an image URL, audio, `n` above 1,
// tool_choice none with tools, a response_format other than text, enable_search) is refused with
// BedrockTranslationError, a 400.
//
// Answer (Converse → OpenAI): text blocks joined into `content`, toolUse blocks into
// `tool_calls`, reasoning text into `reasoning_content`; stopReason into finish_reason; usage
// inputTokens / outputTokens / cacheReadInputTokens / cacheWriteInputTokens as
// anthropic.translate.ts's toOpenAiUsage treats Anthropic's counts (cache reads and writes are
// prompt tokens, reported in prompt_tokens_details). ConverseStream's events (messageStart,
// contentBlockStart, contentBlockDelta, contentBlockStop, messageStop, metadata) become chunks,
// the last one carrying the usage of `metadata`.
import { randomBytes } from 'node:crypto';
import type { AssistantToolCall, ChatTool, ImageUrlDto, TextContent, ToolChoice, ToolMessageDto, UserContent } from '@igw/contracts';
import { toOpenAiUsage } from '../anthropic/anthropic.translate';
import type { UpstreamChatChunk, UpstreamChatCompletion, UpstreamChatRequest, UpstreamUsage } from '../provider.types';
import type { EmitChunk } from '../transport/chunk-stream';
import type { SseEvent } from '../transport/sse';
import { isFunctionTool } from '../translation/chat-tools';
import { base64DataUrl } from '../translation/file-part';
import { RequestTranslationError, UpstreamProtocolError } from '../upstream.errors';
import { toolArgumentsObject } from '../translation/tool-arguments';

/** The OpenAI-shaped request cannot be expressed for Bedrock's Converse API: the gateway answers 400. */
export class BedrockTranslationError extends RequestTranslationError {
  constructor(message: string, param?: string) {
    super(message, param);
    this.name = 'BedrockTranslationError';
  }
}

export type ConverseContentBlock =
  | { text: string }
  | { image: { format: 'png' | 'jpeg' | 'gif' | 'webp'; source: { bytes: string } } }
  | { toolUse: { toolUseId: string; name: string; input: unknown } }
  | { toolResult: { toolUseId: string; content: Array<{ text: string }>; status?: 'success' | 'error' } }
  | { reasoningContent: { reasoningText: { text: string; signature?: string } } };

export interface ConverseMessage {
  role: 'user' | 'assistant';
  content: ConverseContentBlock[];
}

export interface ConverseRequest {
  messages: ConverseMessage[];
  system?: Array<{ text: string }>;
  inferenceConfig?: { maxTokens?: number; temperature?: number; topP?: number; stopSequences?: string[] };
  toolConfig?: {
    tools: Array<{ toolSpec: { name: string; description?: string; inputSchema: { json: Record<string, unknown> } } }>;
    toolChoice?: { auto: Record<string, never> } | { any: Record<string, never> } | { tool: { name: string } };
  };
}

export interface ConverseUsage {
  inputTokens?: number;
  outputTokens?: number;
  totalTokens?: number;
  cacheReadInputTokens?: number;
  cacheWriteInputTokens?: number;
}

export interface ConverseResponse {
  output: { message: ConverseMessage };
  stopReason: string;
  usage: ConverseUsage;
}

const IMAGE_FORMATS: Readonly<Record<string, 'png' | 'jpeg' | 'gif' | 'webp'>> = { 'image/png': 'png', 'image/jpeg': 'jpeg', 'image/jpg': 'jpeg', 'image/gif': 'gif', 'image/webp': 'webp' };

export function toConverseRequest(request: UpstreamChatRequest): ConverseRequest {
  if (request.n !== undefined && request.n !== null && request.n > 1) throw new BedrockTranslationError('Bedrock Converse answers one choice: n must be 1', 'n');
  // What changes the answer the model must give has no Converse field: refused, never dropped.
  const format = request.response_format?.type;
  if (format !== undefined && format !== 'text') throw new BedrockTranslationError(`response_format ${JSON.stringify(format)} cannot be sent to Bedrock Converse: this model's Bedrock source answers in text only`, 'response_format');
  if (request.enable_search === true) throw new BedrockTranslationError('enable_search cannot be sent to Bedrock Converse: it has no web search', 'enable_search');
  const system: Array<{ text: string }> = [];
  const messages: ConverseMessage[] = [];
  const append = (role: ConverseMessage['role'], blocks: ConverseContentBlock[]): void => {
    if (blocks.length === 0) return;
    const last = messages[messages.length - 1];
    if (last !== undefined && last.role === role) last.content.push(...blocks);
    else messages.push({ role, content: blocks });
  };
  request.messages.forEach((message, i) => {
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
  if (messages.length === 0) throw new BedrockTranslationError('at least one user or assistant message is required', 'messages');
  if (messages[0].role !== 'user') throw new BedrockTranslationError('Bedrock Converse needs the conversation to begin with a user message', 'messages');
  const converse: ConverseRequest = { messages };
  if (system.length > 0) converse.system = system;
  const inference: NonNullable<ConverseRequest['inferenceConfig']> = {};
  const maxTokens = request.max_completion_tokens ?? request.max_tokens;
  if (maxTokens !== undefined && maxTokens !== null) inference.maxTokens = maxTokens;
  if (request.temperature !== undefined && request.temperature !== null) inference.temperature = request.temperature;
  if (request.top_p !== undefined && request.top_p !== null) inference.topP = request.top_p;
  const stop = (typeof request.stop === 'string' ? [request.stop] : (request.stop ?? [])).filter((item) => item !== '');
  if (stop.length > 0) inference.stopSequences = stop;
  if (Object.keys(inference).length > 0) converse.inferenceConfig = inference;
  const toolConfig = translateTools(request.tools, request.tool_choice);
  if (toolConfig !== undefined) converse.toolConfig = toolConfig;
  return converse;
}

/** Text-only content (system, assistant, tool results): a string or text parts. */
function textBlocks(content: TextContent | null | undefined, path: string): Array<{ text: string }> {
  return contentBlocks(content, path).filter((block): block is { text: string } => 'text' in block);
}

function contentBlocks(content: UserContent | null | undefined, path: string): ConverseContentBlock[] {
  if (content === undefined || content === null) return [];
  if (typeof content === 'string') return content.trim() === '' ? [] : [{ text: content }];
  const blocks: ConverseContentBlock[] = [];
  content.forEach((part, j) => {
    const partPath = `${path}[${j}]`;
    if (part.type === 'text') {
      if (part.text.trim() !== '') blocks.push({ text: part.text });
    } else if (part.type === 'image_url') {
      blocks.push(imageBlock(part.image_url, `${partPath}.image_url`));
    } else {
      throw new BedrockTranslationError(`${partPath}: content part type ${JSON.stringify(part.type)} is not supported by Bedrock Converse`, partPath);
    }
  });
  return blocks;
}

function imageBlock(image: ImageUrlDto, path: string): ConverseContentBlock {
  const data = base64DataUrl(image.url);
  if (data === undefined) throw new BedrockTranslationError(`${path}.url: Bedrock Converse takes images as base64 data URLs only (data:image/png;base64,...), not links`, `${path}.url`);
  const format = IMAGE_FORMATS[data.mediaType.toLowerCase()];
  if (format === undefined) throw new BedrockTranslationError(`${path}.url: Bedrock Converse takes PNG, JPEG, GIF or WebP images, not ${data.mediaType}`, `${path}.url`);
  return { image: { format, source: { bytes: data.data } } };
}

function toolUses(calls: readonly AssistantToolCall[] | null | undefined, path: string): ConverseContentBlock[] {
  return (calls ?? []).map((call, k): ConverseContentBlock => {
    const callPath = `${path}[${k}]`;
    if (call.type !== 'function') throw new BedrockTranslationError(`${callPath}: only function tool calls can be sent to Bedrock`, callPath);
    const { name, arguments: args } = call.function;
    if (call.id === '' || name === '') throw new BedrockTranslationError(`${callPath} needs an id and a function name`, callPath);
    return { toolUse: { toolUseId: call.id, name, input: toolArgumentsObject(args, `${callPath}.function.arguments`, 'Bedrock', BedrockTranslationError) } };
  });
}

function toolResult(message: ToolMessageDto, path: string): ConverseContentBlock {
  if (message.tool_call_id === '') throw new BedrockTranslationError(`${path}.tool_call_id is required`, `${path}.tool_call_id`);
  const texts = textBlocks(message.content, `${path}.content`);
  return { toolResult: { toolUseId: message.tool_call_id, content: texts.length > 0 ? texts : [{ text: '' }] } };
}

function translateTools(value: readonly ChatTool[] | null | undefined, choice: ToolChoice | null | undefined): ConverseRequest['toolConfig'] {
  if (value === undefined || value === null || value.length === 0) return undefined;
  if (choice === 'none') throw new BedrockTranslationError('Bedrock Converse has no tool_choice none: leave the tools out instead', 'tool_choice');
  const tools: NonNullable<ConverseRequest['toolConfig']>['tools'] = value.map((tool, t) => {
    if (!isFunctionTool(tool)) throw new BedrockTranslationError(`tools[${t}]: only function tools can be sent to Bedrock`, `tools[${t}]`);
    const { name, description, parameters } = tool.function;
    const spec: NonNullable<ConverseRequest['toolConfig']>['tools'][number]['toolSpec'] = { name, inputSchema: { json: parameters ?? { type: 'object', properties: {} } } };
    if (description) spec.description = description;
    return { toolSpec: spec };
  });
  const config: NonNullable<ConverseRequest['toolConfig']> = { tools };
  if (choice === 'required') config.toolChoice = { any: {} };
  else if (choice === 'auto') config.toolChoice = { auto: {} };
  else if (typeof choice === 'object' && choice !== null && choice.type === 'function') config.toolChoice = { tool: { name: choice.function.name } };
  else if (choice !== undefined && choice !== null) throw new BedrockTranslationError('tool_choice: only auto, required or a function can be sent to Bedrock Converse', 'tool_choice');
  return config;
}

/** OpenAI finish_reason for a Converse stopReason. */
export function converseFinishReason(stopReason: string | undefined): string {
  switch (stopReason) {
    case 'max_tokens':
    case 'model_context_window_exceeded':
      return 'length';
    case 'tool_use':
      return 'tool_calls';
    case 'guardrail_intervened':
    case 'content_filtered':
      return 'content_filter';
    default:
      return 'stop';
  }
}

/** Converse usage in the gateway's terms, cache reads and writes counted as Anthropic's are. */
export function converseUsage(usage: ConverseUsage): UpstreamUsage {
  return toOpenAiUsage({ input_tokens: usage.inputTokens ?? 0, output_tokens: usage.outputTokens ?? 0, cache_read_input_tokens: usage.cacheReadInputTokens ?? 0, cache_creation_input_tokens: usage.cacheWriteInputTokens ?? 0 });
}

export function isConverseResponse(value: unknown): value is ConverseResponse {
  return isRecord(value) && isRecord(value.output) && isRecord(value.output.message) && Array.isArray(value.output.message.content) && isRecord(value.usage);
}

export function fromConverseResponse(response: ConverseResponse, model: string): UpstreamChatCompletion {
  const texts: string[] = [];
  const reasoning: string[] = [];
  const toolCalls: Array<{ id: string; type: 'function'; function: { name: string; arguments: string } }> = [];
  for (const block of response.output.message.content) {
    if ('text' in block && typeof block.text === 'string') texts.push(block.text);
    else if ('toolUse' in block) toolCalls.push({ id: block.toolUse.toolUseId, type: 'function', function: { name: block.toolUse.name, arguments: JSON.stringify(block.toolUse.input ?? {}) } });
    else if ('reasoningContent' in block && typeof block.reasoningContent?.reasoningText?.text === 'string') reasoning.push(block.reasoningContent.reasoningText.text);
  }
  const message: UpstreamChatCompletion['choices'][number]['message'] = { role: 'assistant', content: texts.length > 0 ? texts.join('') : toolCalls.length > 0 ? null : '' };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  if (reasoning.length > 0) message.reasoning_content = reasoning.join('');
  return {
    id: completionId(),
    object: 'chat.completion',
    created: nowSeconds(),
    model,
    choices: [{ index: 0, message, finish_reason: converseFinishReason(response.stopReason) }],
    usage: converseUsage(response.usage),
  };
}

/**
 * ConverseStream's events, translated one by one. The finish reason (messageStop) and the usage
 * (metadata) arrive apart: the finish chunk waits for the usage, so the last chunk carries both.
 * A stream that ends before its metadata is a stream cut short.
 */
export class ConverseStreamTranslator {
  private readonly id = completionId();
  private readonly created = nowSeconds();
  private started = false;
  private finishReason: string | undefined;
  private done = false;
  /** Content-block index → OpenAI tool-call index. */
  private readonly toolCalls = new Map<number, number>();

  constructor(
    private readonly provider: string,
    private readonly model: string,
  ) {}

  read(event: SseEvent, emit: EmitChunk): boolean {
    let data: Record<string, unknown>;
    try {
      const parsed: unknown = JSON.parse(event.data);
      if (!isRecord(parsed)) throw new Error('not an object');
      data = parsed;
    } catch {
      throw new UpstreamProtocolError(this.provider, `a ConverseStream event is not a JSON object (${event.event ?? 'unnamed'})`);
    }
    switch (event.event) {
      case 'messageStart':
        if (!this.started) {
          this.started = true;
          emit(this.chunk({ role: 'assistant', content: '' }));
        }
        return false;
      case 'contentBlockStart': {
        const start = isRecord(data.start) ? data.start.toolUse : undefined;
        if (isRecord(start) && typeof start.name === 'string') {
          const index = this.toolCalls.size;
          this.toolCalls.set(Number(data.contentBlockIndex), index);
          emit(this.chunk({ tool_calls: [{ index, id: String(start.toolUseId), type: 'function', function: { name: start.name, arguments: '' } }] }));
        }
        return false;
      }
      case 'contentBlockDelta': {
        const delta = isRecord(data.delta) ? data.delta : {};
        if (typeof delta.text === 'string') {
          if (delta.text !== '') emit(this.chunk({ content: delta.text }));
        } else if (isRecord(delta.toolUse) && typeof delta.toolUse.input === 'string') {
          const index = this.toolCalls.get(Number(data.contentBlockIndex));
          if (index === undefined) throw new UpstreamProtocolError(this.provider, 'a toolUse delta came for a block that is no tool call');
          if (delta.toolUse.input !== '') emit(this.chunk({ tool_calls: [{ index, function: { arguments: delta.toolUse.input } }] }));
        } else if (isRecord(delta.reasoningContent) && typeof delta.reasoningContent.text === 'string' && delta.reasoningContent.text !== '') {
          emit(this.chunk({ reasoning_content: delta.reasoningContent.text }));
        }
        return false;
      }
      case 'contentBlockStop':
        return false;
      case 'messageStop':
        this.finishReason = converseFinishReason(typeof data.stopReason === 'string' ? data.stopReason : undefined);
        return false;
      case 'metadata': {
        if (!isRecord(data.usage)) throw new UpstreamProtocolError(this.provider, 'the ConverseStream metadata event carries no usage');
        const chunk = this.chunk({}, this.finishReason ?? 'stop');
        chunk.usage = converseUsage(data.usage as ConverseUsage);
        emit(chunk);
        this.done = true;
        return true;
      }
      default:
        return false;
    }
  }

  end(): void {
    if (!this.done) throw new UpstreamProtocolError(this.provider, 'the ConverseStream ended before its metadata (usage)');
  }

  private chunk(delta: UpstreamChatChunk['choices'][number]['delta'], finishReason: string | null = null): UpstreamChatChunk {
    return { id: this.id, object: 'chat.completion.chunk', created: this.created, model: this.model, choices: [{ index: 0, delta, finish_reason: finishReason }] };
  }
}

function completionId(): string {
  return `chatcmpl-${randomBytes(12).toString('hex')}`;
}

function nowSeconds(): number {
  return Math.floor(Date.now() / 1000);
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
