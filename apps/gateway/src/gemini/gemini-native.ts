import { HttpStatus } from '@nestjs/common';
import { ErrorMessages, type CatalogueModel, type ChatCompletionDto, type ChatCompletionRequestDto, type GeminiGenerateContentRequestDto } from '@igw/contracts';
import { GatewayException } from '@igw/http';
import { geminiNativeGenerate, geminiNativeStream, sourceSpeaks, speaksGemini, type GeminiNativeBody, type NativeEvent } from '@igw/providers';
import type { ServerResponse } from 'node:http';
import type { ChatFront } from '../chat/chat-responder';
import { setDroppedTools, type NativeEventWriter, type NativeUpstream } from '../chat/native-upstream';
import { askedOf, chatRequestForNative, chatRequestOf, nullsAsAbsent, refuseUnservable } from './gemini-request';
import { generateContentResponseOf } from './gemini-response';
import { GeminiFrames, geminiStreamEvents, type GeminiStreamFraming } from './gemini-stream';

// The Gemini API's native path: Google sources get the client's GenerateContentRequest as it
// came (contents with their parts and thought signatures, systemInstruction, function
// declarations, toolConfig, generationConfig with topK and thinkingConfig, safetySettings), and
// answer in their own words. What the gateway still decides:
// - `maxOutputTokens` above the model's output limit is lowered to it, as on the translated path.
// - Tools go by an allow-list of what the gateway knows and prices: function declarations and
//   Google Search (held as the chat request's web search); code execution, URL context, Maps,
//   file search and any tool Google adds later (which Google would run and bill unheld) are left
//   out and named in `x-gateway-dropped-tools`.
// - A `fileData` naming a file of the upstream account (Google's Files API) is refused, as is
//   `cachedContent`: the operator's files and caches are shared by every client of the gateway.

/** The GenerateContentRequest fields sent natively beside contents (generationConfig as validated: fields the gateway does not know are gone). */
const NATIVE_FIELDS = ['systemInstruction', 'toolConfig', 'generationConfig', 'safetySettings'] as const;
/** Tool kinds sent to a Google source. */
const NATIVE_TOOLS = new Set(['functionDeclarations', 'googleSearch']);
/** Google's Files API: a file there belongs to the account of the gateway's key. */
const UPSTREAM_FILE = /^https:\/\/generativelanguage\.googleapis\.com\/[^?#]*\/files\//i;

function refuse(path: string, why: string): never {
  throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${path}: ${why}`);
}

/** Whether some source of the model speaks the Gemini API (Google's, or Vertex AI's Gemini). */
export function hasGoogleSource(model: Pick<CatalogueModel, 'routing'>): boolean {
  return model.routing.sources.some((source) => sourceSpeaks(source, 'gemini'));
}

export interface GeminiFrontOptions {
  body: GeminiGenerateContentRequestDto;
  /** The name the path gave (what the chat request's `model` says). */
  modelName: string;
  model: CatalogueModel;
  /** null for generateContent, else the stream's framing. */
  stream: GeminiStreamFraming | null;
  response: Pick<ServerResponse, 'setHeader' | 'removeHeader'>;
}

/**
 * The chat request and the front for a generateContent request: the native path for a model
 * with Google sources, the translation alone otherwise. Sets `x-gateway-dropped-tools`.
 */
export function geminiFrontOf({ body, modelName, model, stream, response }: GeminiFrontOptions): { chatRequest: ChatCompletionRequestDto; front: ChatFront } {
  nullsAsAbsent(body);
  refuseUnservable(body);
  const asked = askedOf(body);
  setDroppedTools(response, asked.droppedTools);
  const front: ChatFront = {
    endpoint: 'generateContent',
    answer: (completion: ChatCompletionDto) => generateContentResponseOf(completion, asked.includeThoughts),
    streamEvents: geminiStreamEvents(stream ?? 'sse', asked.includeThoughts),
  };
  if (stream === 'json-array') front.streamContentType = 'application/json; charset=utf-8';
  if (!hasGoogleSource(model)) return { chatRequest: chatRequestOf(body, modelName, model, stream !== null), front };
  const { request: chatRequest, untranslatable } = chatRequestForNative(body, modelName, model, stream !== null);
  return { chatRequest, front: { ...front, native: geminiNative(body, chatRequest, untranslatable, stream ?? 'sse') } };
}

/** The native GenerateContentRequest (the chat translation gave the max_tokens it may ask). */
export function geminiNativeBody(body: GeminiGenerateContentRequestDto, chatRequest: Pick<ChatCompletionRequestDto, 'max_tokens'>): GeminiNativeBody {
  const native: GeminiNativeBody = { contents: plain(body.contents) };
  for (const field of NATIVE_FIELDS) if (body[field] !== undefined) Object.assign(native, { [field]: plain(body[field]) });
  const tools = (body.tools ?? []).map((tool) => Object.fromEntries(Object.entries(tool).filter(([kind]) => NATIVE_TOOLS.has(kind)))).filter((tool) => Object.keys(tool).length > 0);
  if (tools.length > 0) native.tools = tools;
  if (chatRequest.max_tokens !== undefined) native.generationConfig = { ...native.generationConfig, maxOutputTokens: chatRequest.max_tokens };
  body.contents.forEach((content, index) =>
    content.parts.forEach((part, position) => {
      const uri = part.fileData?.fileUri;
      if (uri !== undefined && UPSTREAM_FILE.test(uri)) {
        refuse(`contents[${index}].parts[${position}].fileData.fileUri`, 'a file of the upstream account cannot be sent through this gateway: send the content itself (inlineData)');
      }
    }),
  );
  return native;
}

/** The validated DTOs as plain JSON (class instances of nested configs serialize as their fields), of the same shape. */
function plain<T>(value: T): T {
  return JSON.parse(JSON.stringify(value)) as T;
}

function geminiNative(body: GeminiGenerateContentRequestDto, chatRequest: ChatCompletionRequestDto, untranslatable: string | undefined, framing: GeminiStreamFraming): NativeUpstream {
  const nativeBody = geminiNativeBody(body, chatRequest);
  return {
    takes: speaksGemini,
    complete: (target, options) => geminiNativeGenerate(target, nativeBody, options),
    stream: (target, options) => geminiNativeStream(target, nativeBody, options),
    answer: (answer, meta, modelId) => ({ ...answer, modelVersion: modelId, meta: { usage: meta } }),
    writer: (modelId) => new GeminiNativeWriter(modelId, new GeminiFrames(framing)),
    beforeAttempt: (native) => {
      if (!native && untranslatable !== undefined) throw new GatewayException(HttpStatus.BAD_REQUEST, untranslatable);
    },
  };
}

/**
 * Google's events as they came, with the catalogue's model id as modelVersion; the event that
 * reports the whole usage gets the gateway's `meta.usage`; a failure half-way as Google's error.
 */
export class GeminiNativeWriter implements NativeEventWriter {
  constructor(
    private readonly modelId: string,
    private readonly frames: GeminiFrames,
  ) {}

  event(event: NativeEvent, meta: () => { credits_used: number; usd_spent: number } | undefined): string {
    const usage = meta();
    return this.frames.element(JSON.stringify({ ...event.parsed, modelVersion: this.modelId, ...(usage !== undefined ? { meta: { usage } } : {}) }));
  }

  failure(message: string): string {
    return this.frames.failure(message);
  }

  end(): string {
    return this.frames.close();
  }
}
