import type { SEARCH_STRATEGIES } from '@igw/contracts';
import type { CallOptions, ChatAdapter, ProviderTarget, UpstreamChatChunk, UpstreamChatCompletion, UpstreamChatRequest } from '../provider.types';
import { openChunkStream, type ChunkStream, type ChunkTranslator, type EmitChunk } from '../transport/chunk-stream';
import { postJson, type JsonRequest } from '../transport/http-client';
import type { SseEvent } from '../transport/sse';
import { UpstreamHttpError, UpstreamProtocolError } from '../upstream.errors';

/** How an OpenAI-format endpoint is addressed: the URL of chat completions and the auth headers. */
export interface OpenAiEndpoint {
  url(target: ProviderTarget): string;
  headers(target: ProviderTarget): Record<string, string>;
}

const OPENAI_ENDPOINT: OpenAiEndpoint = {
  url: (target) => `${target.baseUrl}/chat/completions`,
  headers: (target): Record<string, string> => (target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
};

/** Providers whose API searches the web through `web_search_options` and refuses fields it does not know. */
const WEB_SEARCH_OPTIONS_PROVIDERS = new Set(['openai', 'azure', 'openrouter']);
const SEARCH_CONTEXT_SIZE = { turbo: 'low', max: 'high', agent: 'high' } as const satisfies Record<(typeof SEARCH_STRATEGIES)[number], string>;

/**
 * The spec's `enable_search` / `search_options` in the dialect of the provider: OpenAI, Azure
 * and OpenRouter take `web_search_options` (a search strategy becomes a search context size;
 * sources always come back as `url_citation` annotations), and would refuse the spec's own
 * fields. Other OpenAI-compatible servers (Qwen's among them, where these fields come from)
 * get them as sent.
 */
export function withSearchDialect(provider: string, request: UpstreamChatRequest): UpstreamChatRequest {
  if (!WEB_SEARCH_OPTIONS_PROVIDERS.has(provider) || (request.enable_search === undefined && request.search_options === undefined)) return request;
  const { enable_search: enabled, search_options: options, ...rest } = request;
  if (enabled !== true || rest.web_search_options !== undefined) return rest;
  const strategy = options?.search_strategy;
  return { ...rest, web_search_options: strategy ? { search_context_size: SEARCH_CONTEXT_SIZE[strategy] } : {} };
}

/**
 * OpenAI and every server that speaks its wire format (Groq, Together, Mistral, DeepSeek,
 * xAI, OpenRouter, vLLM, Ollama, llama.cpp, Azure OpenAI): the request goes out as is, and so
 * does the client's own text of its messages when the gateway kept it.
 */
export class OpenAiChatAdapter implements ChatAdapter {
  constructor(private readonly endpoint: OpenAiEndpoint = OPENAI_ENDPOINT) {}

  async chat(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<UpstreamChatCompletion> {
    const completion = await postJson<UpstreamChatCompletion>(this.call(target, request, options, false));
    if (!completion || !Array.isArray(completion.choices)) {
      throw new UpstreamProtocolError(target.provider, 'no choices in the chat completion');
    }
    if (searches(target.provider, request) && completion.usage) completion.usage = { ...completion.usage, web_search_calls: 1 };
    return completion;
  }

  async stream(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<ChunkStream> {
    return openChunkStream(this.call(target, request, options, true), new OpenAiChunks(target.provider, searches(target.provider, request)));
  }

  private call(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions, stream: boolean): JsonRequest {
    const { messagesJson, ...fields } = withSearchDialect(target.provider, request);
    // `fields` is a copy already: the stream fields go onto it rather than into yet another copy.
    // Usage is always requested, so a stream is billed exactly like a non-streamed answer.
    const body = Object.assign(fields, stream ? { stream, stream_options: { include_usage: true } } : { stream });
    return {
      provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits,
      url: this.endpoint.url(target),
      headers: this.endpoint.headers(target),
      authorize: target.authorize,
      body,
      bodySources: messagesJson && { messages: messagesJson },
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: target.limits,
    };
  }
}

/**
 * OpenAI's chat completions report no search count: their search models run one web search per
 * request that has `web_search_options` (what OpenAI bills per call), so such an answer counts
 * one. Other OpenAI-compatible servers get the spec's fields as sent and are not counted.
 */
function searches(provider: string, request: UpstreamChatRequest): boolean {
  return withSearchDialect(provider, request).web_search_options !== undefined && WEB_SEARCH_OPTIONS_PROVIDERS.has(provider);
}

/**
 * An OpenAI stream's chunks, each passed on with its upstream text; `[DONE]` closes the stream.
 * A malformed event or an error event throws.
 */
class OpenAiChunks implements ChunkTranslator {
  private readonly reader: OpenAiChunkReader;

  constructor(
    provider: string,
    private readonly searched: boolean,
  ) {
    this.reader = new OpenAiChunkReader(provider, searched);
  }

  read(event: SseEvent, emit: EmitChunk): boolean {
    if (event.data === '[DONE]') return true;
    const chunk = this.reader.read(event.data);
    // A search's usage chunk was given its count: its text no longer says what the chunk does.
    emit(chunk, this.searched && chunk.usage ? undefined : event.data);
    return false;
  }

  end(): void {}
}

/** New content shapes tried per stream while none of them fits a later chunk (see OpenAiChunkReader). */
const UNUSED_SHAPES_PER_STREAM = 4;

/**
 * Reads the chunks of one stream. Its chunks mostly differ only in the text of their content
 * (the same id, model, index and nulls around it): once a chunk with content was parsed, the
 * next ones that have its very text before and after the content's string are read by taking
 * that string alone (ContentShape), a fraction of JSON.parse's cost, into the chunk JSON.parse
 * would give. Chunks of another shape are parsed in full; a stream whose chunks never share a
 * shape (an upstream padding each chunk differently) stops trying after a few. Exported for its tests.
 */
export class OpenAiChunkReader {
  private shape: ContentShape | undefined;
  private unusedShapesLeft = UNUSED_SHAPES_PER_STREAM;

  constructor(
    private readonly provider: string,
    private readonly searched: boolean,
  ) {}

  read(data: string): UpstreamChatChunk {
    const shape = this.shape;
    const fitted = shape?.read(data);
    if (fitted !== undefined) return fitted;
    const chunk = openAiChunk(this.provider, data, this.searched);
    if (this.unusedShapesLeft > 0) {
      const next = ContentShape.of(data, chunk);
      if (next !== undefined) {
        if (shape === undefined || !shape.used) this.unusedShapesLeft--;
        this.shape = next;
      }
    }
    return chunk;
  }
}

/**
 * The text of a chunk around its content's string, and the chunk parsed from it: a chunk whose
 * text is `before`, a JSON string, then `after` is that chunk with the string as its content
 * (replacing one string token by another leaves the rest of the JSON as it was).
 */
class ContentShape {
  /** A chunk was read with this shape. */
  used = false;

  private constructor(
    private readonly before: string,
    private readonly after: string,
    /** The chunk the shape was taken from, copied: every object a chunk read with it has is a new one. */
    private readonly sample: UpstreamChatChunk,
  ) {}

  /**
   * The shape of a chunk with one choice whose delta has a string `content`, when its text names
   * `content` once and its objects hold only strings, numbers, booleans and nulls (the nested
   * ones are copied for each chunk; no other value could be shared between chunks).
   */
  static of(data: string, chunk: UpstreamChatChunk): ContentShape | undefined {
    if (chunk.choices.length !== 1 || (chunk.usage !== null && chunk.usage !== undefined)) return undefined;
    const [choice] = chunk.choices;
    const delta = choice.delta as Record<string, unknown> | undefined;
    // The chunk opening the answer (with its role) has a shape of its own, which no other has.
    if (typeof delta?.content !== 'string' || delta.role !== undefined) return undefined;
    if (!onlyScalars(chunk, 'choices') || !onlyScalars(choice, 'delta') || !onlyScalars(delta)) return undefined;
    const key = data.indexOf('"content":');
    if (key < 0 || data.indexOf('"content":', key + 1) >= 0) return undefined;
    const start = key + '"content":'.length;
    const end = stringTokenEnd(data, start);
    if (end < 0 || stringValue(data, start, end) !== delta.content) return undefined;
    const before = data.slice(0, start);
    const after = data.slice(end);
    // Keys written with escapes could hide another `content`: such a text is not a shape.
    if (before.includes('\\') || after.includes('\\')) return undefined;
    return new ContentShape(before, after, { ...chunk, choices: [{ ...choice, delta: { ...choice.delta } }] });
  }

  /** The chunk of `data` when it has this shape, else undefined. */
  read(data: string): UpstreamChatChunk | undefined {
    const { before, after } = this;
    const end = data.length - after.length;
    // Compared as strings of their own: V8's startsWith and endsWith compare a long text
    // several times slower than an equality of two strings.
    if (end - before.length < 2 || data.slice(0, before.length) !== before || data.slice(end) !== after) return undefined;
    const content = stringValue(data, before.length, end);
    if (content === undefined) return undefined;
    this.used = true;
    const sample = this.sample;
    const choice = sample.choices[0];
    return { ...sample, choices: [{ ...choice, delta: { ...choice.delta, content } }] };
  }
}

function onlyScalars(object: object, except?: string): boolean {
  for (const key in object) {
    const value = (object as Record<string, unknown>)[key];
    if (key !== except && typeof value === 'object' && value !== null) return false;
  }
  return true;
}

/** Where the JSON string token starting at `start` ends (just past its closing quote); -1 if none does. */
function stringTokenEnd(text: string, start: number): number {
  if (text.charCodeAt(start) !== 34 /* " */) return -1;
  for (let at = start + 1; at < text.length; at++) {
    const code = text.charCodeAt(at);
    if (code === 92 /* \ */) at++;
    else if (code === 34) return at + 1;
  }
  return -1;
}

/** The value of `text.slice(start, end)` when that is exactly one JSON string token, else undefined. */
function stringValue(text: string, start: number, end: number): string | undefined {
  const last = end - 1;
  if (last <= start || text.charCodeAt(start) !== 34 || text.charCodeAt(last) !== 34) return undefined;
  let escapes = false;
  let at = start + 1;
  for (; at < last; at++) {
    const code = text.charCodeAt(at);
    if (code === 92) {
      escapes = true;
      at++;
    } else if (code === 34 || code < 32) return undefined;
  }
  // Past the last quote: it was escaped, so the token does not end there.
  if (at !== last) return undefined;
  if (!escapes) return text.slice(start + 1, last);
  try {
    return JSON.parse(text.slice(start, end)) as string;
  } catch {
    return undefined;
  }
}

function openAiChunk(provider: string, data: string, searched: boolean): UpstreamChatChunk {
  let chunk: UpstreamChatChunk & { error?: { message?: string; code?: unknown } };
  try {
    chunk = JSON.parse(data) as typeof chunk;
  } catch {
    throw new UpstreamProtocolError(provider, 'a stream event is not JSON');
  }
  if (chunk.error) throw new UpstreamHttpError(provider, 502, chunk.error.message ?? 'error event in the stream');
  if (!Array.isArray(chunk.choices)) throw new UpstreamProtocolError(provider, 'a stream chunk has no choices');
  if (searched && chunk.usage) chunk.usage = { ...chunk.usage, web_search_calls: 1 };
  return chunk;
}
