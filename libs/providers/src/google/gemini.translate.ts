// Pure translation between the gateway's OpenAI-shaped chat format and Gemini's
// generateContent format: requests out, responses and stream events back. No I/O here;
// ids and timestamps come from a TranslationContext so golden tests are deterministic.
import { randomBytes } from 'node:crypto';
import type { AssistantMessageDto, TextContent, ToolMessageDto, UserContent } from '@igw/contracts';
import { allowedToolNames, isFunctionTool } from '../translation/chat-tools';
import { base64DataUrl, inlineDocumentOf } from '../translation/file-part';
import { RequestTranslationError } from '../upstream.errors';
import type { UpstreamChatChunk, UpstreamChatCompletion, UpstreamChatRequest, UpstreamUsage } from '../provider.types';
import type {
  GeminiCandidate,
  GeminiContent,
  GeminiFunctionDeclaration,
  GeminiGenerateContentRequest,
  GeminiGenerateContentResponse,
  GeminiGenerationConfig,
  GeminiGroundingMetadata,
  GeminiGroundingSupport,
  GeminiLogprobCandidate,
  GeminiLogprobsResult,
  GeminiPart,
  GeminiRole,
  GeminiThinkingConfig,
  GeminiTool,
  GeminiToolConfig,
  GeminiUsageMetadata,
} from './gemini.types';

/** The request cannot be expressed in Gemini's format (the caller answers 400). */
export class GeminiTranslationError extends RequestTranslationError {
  constructor(message: string, param?: string) {
    super(message, param);
    this.name = 'GeminiTranslationError';
  }
}

/** Thinking budgets (tokens) for OpenAI-style reasoning efforts. */
export const GEMINI_THINKING_BUDGETS: Readonly<Record<string, number>> = { none: 0, low: 1024, medium: 4096, high: 16384 };

/** Gemini finish reasons that mean the output was withheld or cut by a filter. */
const CONTENT_FILTER_REASONS = new Set([
  'SAFETY',
  'RECITATION',
  'BLOCKLIST',
  'PROHIBITED_CONTENT',
  'SPII',
  'IMAGE_SAFETY',
  'IMAGE_PROHIBITED_CONTENT',
  'IMAGE_RECITATION',
]);

type JsonObject = Record<string, unknown>;

function isRecord(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// Request: OpenAI chat completion request → GenerateContentRequest
// ---------------------------------------------------------------------------------------------

/**
 * Translates an OpenAI-shaped chat request. System and developer messages become
 * `systemInstruction`; user/tool turns become `user` contents, assistant turns `model`
 * contents, consecutive same-role contents are merged. Fields Gemini has no equivalent
 * for are dropped. Throws GeminiTranslationError when the conversation cannot be expressed
 * (a tool call whose arguments are not a JSON object, a tool result whose call is unknown).
 */
export function toGeminiRequest(request: UpstreamChatRequest): GeminiGenerateContentRequest {
  const systemParts: GeminiPart[] = [];
  const contents: GeminiContent[] = [];
  /** tool_call_id → function name, from the assistant turns seen so far. */
  const toolNames = new Map<string, string>();

  request.messages.forEach((message, i) => {
    switch (message.role) {
      case 'system':
      case 'developer':
        systemParts.push(...textParts(message.content));
        break;
      case 'user':
        appendContent(contents, 'user', userParts(message.content, i));
        break;
      case 'assistant':
        appendContent(contents, 'model', assistantParts(message, i, toolNames));
        break;
      case 'tool':
        appendContent(contents, 'user', [toolResultPart(message, i, toolNames)]);
        break;
    }
  });

  const body: GeminiGenerateContentRequest = { contents };
  if (contents.length === 0) {
    // Gemini needs at least one content; a system-only conversation is sent as the user turn.
    if (systemParts.length === 0) throw new GeminiTranslationError('the conversation has no message with content');
    contents.push({ role: 'user', parts: systemParts });
  } else if (systemParts.length > 0) {
    body.systemInstruction = { parts: systemParts };
  }

  const { tools, toolConfig } = translateTools(request);
  if (tools.length > 0) body.tools = tools;
  if (toolConfig) body.toolConfig = toolConfig;
  const generationConfig = translateGenerationConfig(request);
  if (Object.keys(generationConfig).length > 0) body.generationConfig = generationConfig;
  return body;
}

function appendContent(contents: GeminiContent[], role: GeminiRole, parts: GeminiPart[]): void {
  if (parts.length === 0) return;
  const last = contents[contents.length - 1];
  if (last !== undefined && last.role === role) last.parts.push(...parts);
  else contents.push({ role, parts });
}

/** Non-empty text parts of an OpenAI content (a string or an array of parts). */
function textParts(content: UserContent | null | undefined): GeminiPart[] {
  if (typeof content === 'string') return content === '' ? [] : [{ text: content }];
  const parts: GeminiPart[] = [];
  for (const part of content ?? []) {
    if (part.type === 'text' && part.text !== '') parts.push({ text: part.text });
  }
  return parts;
}

/** A content's text: the string, or its text parts concatenated. */
function plainText(content: TextContent): string {
  return textParts(content)
    .map((part) => part.text)
    .join('');
}

/**
 * User content: text parts, images given as base64 data URLs (other images are dropped), and
 * files as inline data (a PDF or plain text given as a base64 data URL; anything else throws
 * GeminiTranslationError, translation/file-part.ts says what is taken).
 */
function userParts(content: UserContent, i: number): GeminiPart[] {
  if (typeof content === 'string') return textParts(content);
  const parts: GeminiPart[] = [];
  content.forEach((part, j) => {
    if (part.type === 'text' && part.text !== '') parts.push({ text: part.text });
    if (part.type === 'image_url') {
      const data = base64DataUrl(part.image_url.url);
      if (data) parts.push({ inlineData: { mimeType: data.mediaType, data: data.data } });
    }
    if (part.type === 'file') {
      const document = inlineDocumentOf(part.file, `messages[${i}].content[${j}]`, 'Gemini');
      if ('refusal' in document) throw new GeminiTranslationError(document.refusal, document.param);
      parts.push({ inlineData: { mimeType: document.mediaType, data: document.data } });
    }
  });
  return parts;
}

function assistantParts(message: AssistantMessageDto, i: number, toolNames: Map<string, string>): GeminiPart[] {
  const parts = textParts(message.content);
  (message.tool_calls ?? []).forEach((call, j) => {
    if (call.type !== 'function') return;
    const name = call.function.name;
    if (name === '') throw new GeminiTranslationError(`messages[${i}].tool_calls[${j}]: the function has no name`);
    const part: GeminiPart = { functionCall: { name, args: parseArguments(call.function.arguments, `messages[${i}].tool_calls[${j}]`) } };
    const signature = thoughtSignatureOf(call.extra_content);
    if (signature !== undefined) part.thoughtSignature = signature;
    parts.push(part);
    toolNames.set(call.id, name);
  });
  // Legacy single `function_call`.
  if (message.function_call) {
    const args = parseArguments(message.function_call.arguments, `messages[${i}].function_call`);
    parts.push({ functionCall: { name: message.function_call.name, args } });
  }
  return parts;
}

/** `extra_content.google.thought_signature`, the opaque value Gemini wants echoed back. */
function thoughtSignatureOf(extra: Record<string, unknown> | null | undefined): string | undefined {
  // Provider metadata the client echoes back as it got it: arbitrary JSON, checked here.
  if (!isRecord(extra) || !isRecord(extra.google)) return undefined;
  const signature = extra.google.thought_signature;
  return typeof signature === 'string' && signature !== '' ? signature : undefined;
}

function parseArguments(raw: string, where: string): Record<string, unknown> {
  if (raw.trim() === '') return {};
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch {
    throw new GeminiTranslationError(`${where}: function arguments are not valid JSON`);
  }
  if (!isRecord(parsed)) throw new GeminiTranslationError(`${where}: function arguments must be a JSON object`);
  return parsed;
}

function toolResultPart(message: ToolMessageDto, i: number, toolNames: Map<string, string>): GeminiPart {
  const id = message.tool_call_id;
  const name = toolNames.get(id) ?? (message.name || undefined);
  if (name === undefined) {
    throw new GeminiTranslationError(`messages[${i}]: tool_call_id ${JSON.stringify(id)} matches no earlier assistant tool call`);
  }
  return { functionResponse: { name, response: { content: plainText(message.content) } } };
}

function translateTools(request: UpstreamChatRequest): { tools: GeminiTool[]; toolConfig?: GeminiToolConfig } {
  let declarations: GeminiFunctionDeclaration[] = [];
  for (const tool of (request.tools ?? []).filter(isFunctionTool)) {
    const declaration: GeminiFunctionDeclaration = { name: tool.function.name };
    if (tool.function.description !== undefined && tool.function.description !== null) declaration.description = tool.function.description;
    if (tool.function.parameters) declaration.parameters = tool.function.parameters;
    declarations.push(declaration);
  }

  let toolConfig: GeminiToolConfig | undefined;
  const choice = request.tool_choice;
  if (declarations.length > 0 && choice !== undefined && choice !== null) {
    if (choice === 'auto') toolConfig = { functionCallingConfig: { mode: 'AUTO' } };
    else if (choice === 'required') toolConfig = { functionCallingConfig: { mode: 'ANY' } };
    else if (choice === 'none') toolConfig = { functionCallingConfig: { mode: 'NONE' } };
    else if (choice.type === 'function') toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: [choice.function.name] } };
    else if (choice.type === 'allowed_tools') {
      const allowed = [...(allowedToolNames(choice) ?? [])];
      if (choice.allowed_tools.mode === 'required') {
        toolConfig = { functionCallingConfig: { mode: 'ANY', allowedFunctionNames: allowed } };
      } else {
        // Gemini limits names only in ANY mode; in AUTO mode the others are simply not declared.
        declarations = declarations.filter((declaration) => allowed.includes(declaration.name));
        toolConfig = { functionCallingConfig: { mode: 'AUTO' } };
      }
    }
  }

  const tools: GeminiTool[] = [];
  if (declarations.length > 0) tools.push({ functionDeclarations: declarations });
  if (request.enable_search === true) tools.push({ googleSearch: {} });
  return { tools, toolConfig };
}

function translateGenerationConfig(request: UpstreamChatRequest): GeminiGenerationConfig {
  const config: GeminiGenerationConfig = {};
  const set = <K extends keyof GeminiGenerationConfig>(key: K, value: GeminiGenerationConfig[K] | null | undefined): void => {
    if (value !== undefined && value !== null) config[key] = value;
  };
  set('temperature', request.temperature);
  set('topP', request.top_p);
  set('maxOutputTokens', request.max_completion_tokens ?? request.max_tokens);
  const stop = (typeof request.stop === 'string' ? [request.stop] : (request.stop ?? [])).filter((sequence) => sequence !== '');
  if (stop.length > 0) config.stopSequences = stop;
  set('candidateCount', request.n);
  set('seed', request.seed);
  set('presencePenalty', request.presence_penalty);
  set('frequencyPenalty', request.frequency_penalty);
  if (request.logprobs === true) {
    config.responseLogprobs = true;
    set('logprobs', request.top_logprobs);
  }
  const format = request.response_format;
  if (format?.type === 'json_object') config.responseMimeType = 'application/json';
  if (format?.type === 'json_schema') {
    config.responseMimeType = 'application/json';
    // `json_schema` is forwarded as the client wrote it: its `schema` is arbitrary JSON.
    if (isRecord(format.json_schema?.schema)) config.responseJsonSchema = format.json_schema.schema;
  }
  const thinking = thinkingConfig(request);
  if (thinking !== undefined) config.thinkingConfig = thinking;
  return config;
}

/** `reasoning.max_tokens`, else `reasoning.effort`, else `reasoning_effort`; `reasoning.exclude` hides thoughts. */
function thinkingConfig(request: UpstreamChatRequest): GeminiThinkingConfig | undefined {
  const reasoning = request.reasoning;
  const effort = reasoning?.effort ?? request.reasoning_effort;
  const budget = reasoning?.max_tokens ?? (effort ? GEMINI_THINKING_BUDGETS[effort] : undefined);
  const config: GeminiThinkingConfig = {};
  if (budget !== undefined && budget !== null) config.thinkingBudget = budget;
  if (reasoning?.exclude === true) config.includeThoughts = false;
  return Object.keys(config).length > 0 ? config : undefined;
}

// ---------------------------------------------------------------------------------------------
// Response: GenerateContentResponse → OpenAI chat completion
// ---------------------------------------------------------------------------------------------

/** What a response translation needs besides the response: fallbacks and id generation. */
export interface TranslationContext {
  /** The model asked for; used when the response has no `modelVersion`. */
  model: string;
  /** Unix seconds for `created`. */
  created: number;
  /** A fresh random suffix for generated ids (`chatcmpl-gemini-<x>`, `call_<x>`). */
  newId(): string;
}

export function translationContext(model: string): TranslationContext {
  return { model, created: Math.floor(Date.now() / 1000), newId: () => randomBytes(12).toString('hex') };
}

/** OpenAI finish reason for a Gemini one; a stop that called a function is `tool_calls`. */
export function mapFinishReason(reason: string | undefined, hasToolCalls: boolean): string {
  if (reason === 'MAX_TOKENS') return 'length';
  if (reason !== undefined && CONTENT_FILTER_REASONS.has(reason)) return 'content_filter';
  return hasToolCalls ? 'tool_calls' : 'stop';
}

/**
 * Usage in OpenAI's names; thoughts count as (reasoning) completion tokens, and the prompt
 * tokens of tool use (the search results grounding read) as prompt tokens, as Google bills them.
 */
export function toOpenAiUsage(usage: GeminiUsageMetadata): UpstreamUsage {
  const prompt = (usage.promptTokenCount ?? 0) + (usage.toolUsePromptTokenCount ?? 0);
  const thoughts = usage.thoughtsTokenCount ?? 0;
  const completion = (usage.candidatesTokenCount ?? 0) + thoughts;
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: usage.cachedContentTokenCount ?? 0 },
    completion_tokens_details: { reasoning_tokens: thoughts },
  };
}

export interface OpenAiToolCall {
  id: string;
  type: 'function';
  function: { name: string; arguments: string };
  /** Gemini's thought signature, to be echoed back unchanged on the next turn. */
  extra_content?: { google: { thought_signature: string } };
}

export interface UrlCitation {
  type: 'url_citation';
  url_citation: { start_index: number; end_index: number; title: string; url: string };
}

export interface OpenAiLogprobs {
  content: Array<{ token: string; logprob: number; bytes: number[]; top_logprobs: Array<{ token: string; logprob: number; bytes: number[] }> }>;
  refusal: null;
}

type Choice = UpstreamChatCompletion['choices'][number];

/** Translates a complete (non-streamed) GenerateContentResponse. */
export function fromGeminiResponse(response: GeminiGenerateContentResponse, context: TranslationContext): UpstreamChatCompletion {
  const choices: Choice[] = (response.candidates ?? []).map((candidate, position) => toChoice(candidate, candidate.index ?? position, context));
  if (choices.length === 0 && response.promptFeedback?.blockReason !== undefined) {
    // The prompt itself was blocked: no candidates at all.
    choices.push({ index: 0, message: { role: 'assistant', content: null }, finish_reason: 'content_filter', logprobs: null });
  }
  choices.sort((a, b) => a.index - b.index);
  const completion: UpstreamChatCompletion = {
    id: response.responseId ?? `chatcmpl-gemini-${context.newId()}`,
    object: 'chat.completion',
    created: context.created,
    model: response.modelVersion ?? context.model,
    choices,
  };
  if (response.usageMetadata !== undefined) {
    completion.usage = withWebSearchCalls(toOpenAiUsage(response.usageMetadata), (response.candidates ?? []).map((candidate) => searchQueriesOf(candidate)));
  }
  return completion;
}

/**
 * Gemini reports no search count in its usage: each query in a candidate's
 * `groundingMetadata.webSearchQueries` is counted as one web search call (Google bills
 * grounding per search query).
 */
function searchQueriesOf(candidate: GeminiCandidate): number {
  const queries = candidate.groundingMetadata?.webSearchQueries;
  return Array.isArray(queries) ? queries.length : 0;
}

function withWebSearchCalls(usage: UpstreamUsage, perCandidate: Iterable<number>): UpstreamUsage {
  let calls = 0;
  for (const count of perCandidate) calls += count;
  return calls > 0 ? { ...usage, web_search_calls: calls } : usage;
}

function toChoice(candidate: GeminiCandidate, index: number, context: TranslationContext): Choice {
  const parts = candidate.content?.parts ?? [];
  let content: string | null = null;
  const toolCalls: OpenAiToolCall[] = [];
  /** Where each visible text part starts in `content` (UTF-16 offsets). */
  const partStarts = new Map<number, number>();
  for (let partIndex = 0; partIndex < parts.length; partIndex++) {
    const part = parts[partIndex];
    if (part.thought === true) continue;
    if (typeof part.text === 'string') {
      partStarts.set(partIndex, content?.length ?? 0);
      content = (content ?? '') + part.text;
    }
    if (part.functionCall !== undefined) toolCalls.push(toToolCall(part, context));
  }

  const message: Choice['message'] = { role: 'assistant', content };
  if (toolCalls.length > 0) message.tool_calls = toolCalls;
  const text = content ?? '';
  const annotations = citations(candidate.groundingMetadata, text, (segment) => {
    const partIndex = segment.partIndex ?? 0;
    const start = partStarts.get(partIndex);
    const partText = parts[partIndex]?.text;
    if (start === undefined || partText === undefined) return undefined;
    return [start + charOffset(partText, segment.startIndex ?? 0), start + charOffset(partText, segment.endIndex ?? Buffer.byteLength(partText))];
  });
  if (annotations.length > 0) message.annotations = annotations;
  return { index, message, finish_reason: mapFinishReason(candidate.finishReason, toolCalls.length > 0), logprobs: toLogprobs(candidate.logprobsResult) };
}

function toToolCall(part: GeminiPart, context: TranslationContext): OpenAiToolCall {
  const call = part.functionCall ?? { name: '' };
  const toolCall: OpenAiToolCall = {
    id: call.id ?? `call_${context.newId()}`,
    type: 'function',
    function: { name: call.name, arguments: JSON.stringify(call.args ?? {}) },
  };
  if (part.thoughtSignature !== undefined) toolCall.extra_content = { google: { thought_signature: part.thoughtSignature } };
  return toolCall;
}

/** UTF-16 offset in `text` of a UTF-8 byte offset (Gemini segments count bytes). */
function charOffset(text: string, byteOffset: number): number {
  return Buffer.from(text, 'utf8').subarray(0, Math.max(0, byteOffset)).toString('utf8').length;
}

type Segment = NonNullable<GeminiGroundingSupport['segment']>;

/**
 * `url_citation` annotations from grounding metadata: one per (support, web chunk) pair,
 * with `start_index` the first and `end_index` the last character (UTF-16 offsets in the
 * message content). `locate` turns a segment into [start, end) offsets in `text`; when those
 * offsets do not cover the segment's own `text`, its first occurrence in `text` is used instead.
 */
function citations(metadata: GeminiGroundingMetadata | undefined, text: string, locate: (segment: Segment) => [number, number] | undefined): UrlCitation[] {
  const chunks = metadata?.groundingChunks ?? [];
  const annotations: UrlCitation[] = [];
  for (const support of metadata?.groundingSupports ?? []) {
    const segment = support.segment ?? {};
    let range = locate(segment);
    if (segment.text !== undefined && segment.text !== '' && (range === undefined || text.slice(range[0], range[1]) !== segment.text)) {
      const found = text.indexOf(segment.text);
      if (found >= 0) range = [found, found + segment.text.length];
    }
    if (range === undefined || range[1] <= range[0]) continue;
    for (const chunkIndex of support.groundingChunkIndices ?? []) {
      const web = chunks[chunkIndex]?.web;
      if (web?.uri === undefined) continue;
      // The spec's end_index is the last character (inclusive); Gemini's end is exclusive.
      annotations.push({ type: 'url_citation', url_citation: { start_index: range[0], end_index: range[1] - 1, title: web.title ?? web.uri, url: web.uri } });
    }
  }
  return annotations;
}

function toLogprobs(result: GeminiLogprobsResult | undefined): OpenAiLogprobs | null {
  const chosen = result?.chosenCandidates;
  if (chosen === undefined || chosen.length === 0) return null;
  const entry = (candidate: GeminiLogprobCandidate): { token: string; logprob: number; bytes: number[] } => {
    const token = candidate.token ?? '';
    return { token, logprob: candidate.logProbability ?? 0, bytes: [...Buffer.from(token, 'utf8')] };
  };
  return {
    content: chosen.map((candidate, i) => ({ ...entry(candidate), top_logprobs: (result?.topCandidates?.[i]?.candidates ?? []).map(entry) })),
    refusal: null,
  };
}

// ---------------------------------------------------------------------------------------------
// Stream: partial GenerateContentResponses → chat.completion.chunk
// ---------------------------------------------------------------------------------------------

type ChunkChoice = UpstreamChatChunk['choices'][number];
type Delta = ChunkChoice['delta'];

interface CandidateState {
  /** Tool calls emitted so far (their delta index). */
  toolCalls: number;
  /** Visible text streamed so far (grounding segments index into it). */
  text: string;
  finished: boolean;
}

/**
 * Turns the events of `streamGenerateContent?alt=sse` into OpenAI chunks, one choice per
 * chunk: the first chunk of a candidate carries `role: 'assistant'`; text parts become
 * `delta.content`, each function call a complete `delta.tool_calls` entry, grounding a
 * `delta.annotations` chunk, a finish reason its own chunk with an empty delta. `finish()`
 * returns the closing usage chunk (`choices: []`) from the last `usageMetadata` seen.
 */
export class GeminiStreamTranslator {
  private id: string | undefined;
  private model: string | undefined;
  private usage: GeminiUsageMetadata | undefined;
  private readonly candidates = new Map<number, CandidateState>();
  /** Per candidate, the most search queries its grounding metadata listed (events may repeat them). */
  private readonly searchQueries = new Map<number, number>();

  constructor(private readonly context: TranslationContext) {}

  push(event: GeminiGenerateContentResponse): UpstreamChatChunk[] {
    this.id ??= event.responseId ?? `chatcmpl-gemini-${this.context.newId()}`;
    this.model ??= event.modelVersion ?? this.context.model;
    if (event.usageMetadata !== undefined) this.usage = event.usageMetadata;
    const chunks: UpstreamChatChunk[] = [];
    const candidates = event.candidates ?? [];
    candidates.forEach((candidate, position) => chunks.push(...this.candidateChunks(candidate, candidate.index ?? position)));
    if (candidates.length === 0 && event.promptFeedback?.blockReason !== undefined) {
      const { state, first } = this.state(0);
      if (first) chunks.push(this.chunk(0, { role: 'assistant' }, null));
      if (!state.finished) {
        state.finished = true;
        chunks.push(this.chunk(0, {}, 'content_filter'));
      }
    }
    return chunks;
  }

  /** True once every candidate seen has finished (and at least one was seen). */
  get complete(): boolean {
    if (this.candidates.size === 0) return false;
    for (const state of this.candidates.values()) if (!state.finished) return false;
    return true;
  }

  /** The closing chunks: the usage chunk, when the upstream reported usage. */
  finish(): UpstreamChatChunk[] {
    if (this.usage === undefined) return [];
    return [{ ...this.base(), choices: [], usage: withWebSearchCalls(toOpenAiUsage(this.usage), this.searchQueries.values()) }];
  }

  private candidateChunks(candidate: GeminiCandidate, index: number): UpstreamChatChunk[] {
    const queries = searchQueriesOf(candidate);
    if (queries > (this.searchQueries.get(index) ?? 0)) this.searchQueries.set(index, queries);
    const { state, first } = this.state(index);
    const delta: Delta = first ? { role: 'assistant' } : {};
    let text = '';
    const toolCalls: Array<OpenAiToolCall & { index: number }> = [];
    for (const part of candidate.content?.parts ?? []) {
      if (part.thought === true) continue;
      if (typeof part.text === 'string') text += part.text;
      if (part.functionCall !== undefined) toolCalls.push({ index: state.toolCalls++, ...toToolCall(part, this.context) });
    }
    if (text !== '') {
      delta.content = text;
      state.text += text;
    }
    if (toolCalls.length > 0) delta.tool_calls = toolCalls;

    const chunks: UpstreamChatChunk[] = [];
    const logprobs = toLogprobs(candidate.logprobsResult);
    if (Object.keys(delta).length > 0) chunks.push(this.chunk(index, delta, null, logprobs));
    // Streamed segments index the whole text so far.
    const annotations = citations(candidate.groundingMetadata, state.text, (segment) => {
      const start = charOffset(state.text, segment.startIndex ?? 0);
      const end = segment.endIndex === undefined ? state.text.length : charOffset(state.text, segment.endIndex);
      return [start, end];
    });
    if (annotations.length > 0) chunks.push(this.chunk(index, { annotations }, null));
    if (candidate.finishReason !== undefined && !state.finished) {
      state.finished = true;
      chunks.push(this.chunk(index, {}, mapFinishReason(candidate.finishReason, state.toolCalls > 0)));
    }
    return chunks;
  }

  private state(index: number): { state: CandidateState; first: boolean } {
    const existing = this.candidates.get(index);
    if (existing !== undefined) return { state: existing, first: false };
    const state: CandidateState = { toolCalls: 0, text: '', finished: false };
    this.candidates.set(index, state);
    return { state, first: true };
  }

  private base(): Pick<UpstreamChatChunk, 'id' | 'object' | 'created' | 'model'> {
    return {
      id: this.id ?? `chatcmpl-gemini-${this.context.newId()}`,
      object: 'chat.completion.chunk',
      created: this.context.created,
      model: this.model ?? this.context.model,
    };
  }

  private chunk(index: number, delta: Delta, finishReason: string | null, logprobs?: OpenAiLogprobs | null): UpstreamChatChunk {
    const choice: ChunkChoice = { index, delta, finish_reason: finishReason };
    if (logprobs) choice.logprobs = logprobs;
    return { ...this.base(), choices: [choice] };
  }
}

/** Keys of a JSON Schema that Vertex AI's function declarations refuse (`Unknown name "additionalProperties"`). */
const VERTEX_REFUSED_SCHEMA_KEYS = new Set(['additionalProperties', '$schema']);
/** Keys whose value is one schema, a list of schemas or a map of them, cleaned in turn. */
const SUBSCHEMA_KEYS = new Set(['items', 'not']);
const SUBSCHEMA_LIST_KEYS = new Set(['anyOf', 'oneOf', 'allOf', 'prefixItems']);
const SUBSCHEMA_MAP_KEYS = new Set(['properties', '$defs', 'definitions']);

function isNullSchema(schema: unknown): boolean {
  return isRecord(schema) && schema.type === 'null' && Object.keys(schema).every((key) => key === 'type' || key === 'description');
}

/**
 * A tool's JSON Schema in the form Vertex AI's Gemini takes (its OpenAPI subset): no
 * `additionalProperties` or `$schema` at any depth, and a value that may be null said with
 * `nullable: true` (`anyOf [X, {type: null}]` becomes X, `type: [T, 'null']` becomes T).
 * The schema given is left as it was.
 */
export function vertexToolSchema(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(vertexToolSchema);
  if (!isRecord(schema)) return schema;
  let cleaned: JsonObject = {};
  for (const [key, value] of Object.entries(schema)) {
    if (VERTEX_REFUSED_SCHEMA_KEYS.has(key)) continue;
    if (SUBSCHEMA_KEYS.has(key)) cleaned[key] = vertexToolSchema(value);
    else if (SUBSCHEMA_LIST_KEYS.has(key) && Array.isArray(value)) cleaned[key] = value.map(vertexToolSchema);
    else if (SUBSCHEMA_MAP_KEYS.has(key) && isRecord(value)) cleaned[key] = Object.fromEntries(Object.entries(value).map(([name, sub]) => [name, vertexToolSchema(sub)]));
    else cleaned[key] = value;
  }
  if (Array.isArray(cleaned.type) && cleaned.type.includes('null')) {
    const types = cleaned.type.filter((type) => type !== 'null');
    cleaned = { ...cleaned, type: types.length === 1 ? types[0] : types, nullable: true };
  }
  const anyOf = cleaned.anyOf;
  if (Array.isArray(anyOf) && anyOf.some(isNullSchema)) {
    const others = anyOf.filter((member) => !isNullSchema(member));
    const { anyOf: _anyOf, ...rest } = cleaned;
    // One schema besides null: that schema, nullable; its own keywords first, the outer ones (a description) kept.
    cleaned = others.length === 1 && isRecord(others[0]) ? { ...others[0], ...rest, nullable: true } : { ...rest, anyOf: others, nullable: true };
  }
  return cleaned;
}
