import type { CloudSettings } from './connections/cloud';
import type { RequestAuthorizer } from './transport/http-client';
import type { ChatCompletionRequestDto } from '@igw/contracts';
import type { JsonSource } from '@igw/json';
import type { CancelSignal } from './transport/cancellation';
import type { ChunkStream } from './transport/chunk-stream';
import type { UpstreamLimits } from './transport/upstream-limits';

/** Where one upstream call goes: a provider with its resolved address and key. */
export interface ProviderTarget {
  /** Provider key as written in the catalogue and accepted by `provider` pinning, e.g. `openai`. */
  provider: string;
  /** The model name at that provider. */
  model: string;
  baseUrl: string;
  apiKey?: string;
  /** How much of its answers the gateway reads (the transport's defaults when absent). */
  limits?: UpstreamLimits;
  /** The connection's extra request headers. */
  headers?: Readonly<Record<string, string>>;
  /** What the source serves in its provider's own API (catalogue `native`, e.g. `structured_outputs`). */
  native?: readonly string[];
  /** Hears what the upstream's `x-ratelimit-*` headers say is left (OpenAI, Azure OpenAI). */
  onRateLimits?: (left: UpstreamRateLimits) => void;
  /** A cloud connection's region or location (Bedrock, Vertex AI). */
  cloud?: CloudSettings;
  /** Authorizes each call of the connection (SigV4, a cloud token); passed to the transport as the call's `authorize`. */
  authorize?: RequestAuthorizer;
}

/** An upstream's own account of its quota, from `x-ratelimit-remaining-*` and `x-ratelimit-reset-*`. */
export interface UpstreamRateLimits {
  requestsLeft?: number;
  tokensLeft?: number;
  /** When the count of requests (tokens) is full again, in milliseconds from now. */
  requestsResetMs?: number;
  tokensResetMs?: number;
}

/** Usage as an upstream reports it, normalised to OpenAI's names. */
export interface UpstreamUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number | null; audio_tokens?: number | null } | null;
  completion_tokens_details?: {
    reasoning_tokens?: number | null;
    audio_tokens?: number | null;
    accepted_prediction_tokens?: number | null;
    rejected_prediction_tokens?: number | null;
  } | null;
  /**
   * The gateway's own field: web searches the upstream ran, billed per call. Anthropic reports
   * them (`server_tool_use.web_search_requests`); Gemini's are the queries of its grounding
   * metadata; an OpenAI-format answer to a request with `web_search_options` counts one.
   */
  web_search_calls?: number;
}

/** A chat completion in OpenAI's response shape, as every adapter returns it. */
export interface UpstreamChatCompletion {
  id: string;
  object: 'chat.completion';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    message: Record<string, unknown> & { role: 'assistant'; content: string | null };
    finish_reason: string;
    logprobs?: unknown;
  }>;
  usage?: UpstreamUsage;
  service_tier?: string | null;
  system_fingerprint?: string | null;
}

/** Fields of a chat request the gateway reads itself and never forwards. */
export type GatewayChatField = 'provider' | 'stream' | 'stream_options' | 'normalize_tool_schemas';

/**
 * The chat request the gateway sends on: the validated body (model already replaced by the
 * source's) without the gateway's own fields, so a translator reads typed fields and checks
 * nothing the validation did. Like every optional field of a body, those here may be null as
 * sent. `messagesJson` is not a field of it: it is the client's own JSON text of `messages`,
 * when the gateway kept it, which an adapter sending `messages` as they are sends in their
 * place while the two still agree (`JsonRequest.bodySources`).
 */
export type UpstreamChatRequest = Omit<ChatCompletionRequestDto, GatewayChatField> & { messagesJson?: JsonSource };

/** A streamed piece of a chat completion, in OpenAI's `chat.completion.chunk` shape. */
export interface UpstreamChatChunk {
  id: string;
  object: 'chat.completion.chunk';
  created: number;
  model: string;
  choices: Array<{
    index: number;
    delta: {
      role?: 'assistant';
      content?: string | null;
      refusal?: string | null;
      tool_calls?: Array<{
        index: number;
        id?: string;
        type?: 'function';
        function?: { name?: string; arguments?: string };
      }>;
      /**
       * Spoken answers (`modalities` with 'audio'), as OpenAI streams them: pieces carrying the
       * audio `id`, `transcript` words, base64 `data` and last `expires_at`, forwarded as they come.
       */
      audio?: { id?: string; transcript?: string; data?: string; expires_at?: number };
      /** `url_citation` annotations, in a chunk of their own late in the stream. */
      annotations?: unknown[];
      [extra: string]: unknown;
    };
    finish_reason: string | null;
    logprobs?: unknown;
  }>;
  /** Set on the last chunk: every adapter asks its upstream for usage, whatever the client asked. */
  usage?: UpstreamUsage | null;
  /**
   * Text the model generated that the client asked not to see (thinking left out with
   * `reasoning.exclude`), in a chunk with no choices: never forwarded, yet counted when the
   * stream is billed by count (its client left before the upstream reported usage).
   */
  hiddenText?: string;
  service_tier?: string | null;
  system_fingerprint?: string | null;
}

export interface CallOptions {
  signal?: CancelSignal;
  timeoutMs: number;
}

/** One provider kind's chat capability; each kind keeps its own wire translation. */
export interface ChatAdapter {
  chat(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<UpstreamChatCompletion>;
  /**
   * Opens a stream. The promise settles once the upstream has answered: it rejects with an
   * Upstream*Error when the upstream refused (so the caller may fall back to another source
   * before anything reached the client), and resolves with the chunks otherwise (OpenAI-shaped,
   * the last one carrying `usage`; see chunk-stream.ts, where an adapter's translator plugs in).
   * Aborting `options.signal` ends the stream and closes the upstream connection.
   */
  stream(target: ProviderTarget, request: UpstreamChatRequest, options: CallOptions): Promise<ChunkStream>;
}

/**
 * The embeddings request the gateway sends on, in OpenAI's shape (model already replaced by
 * the source's). `input` is always a list: texts, or token arrays.
 */
export interface UpstreamEmbeddingRequest {
  model: string;
  input: string[] | number[][];
  /** Shorter vectors, when the model supports it. */
  dimensions?: number;
  user?: string;
}

/** An embeddings answer as every adapter returns it: one vector per input, in input order. */
export interface UpstreamEmbeddingResult {
  model: string;
  /** `embeddings[i]` is the vector of `input[i]`. */
  embeddings: number[][];
  /** Absent when the upstream reports no token count (Gemini): the caller counts. */
  usage?: { prompt_tokens: number; total_tokens?: number };
}

/** One provider kind's embeddings capability; kinds without one (Anthropic) have no adapter. */
export interface EmbeddingsAdapter {
  embed(target: ProviderTarget, request: UpstreamEmbeddingRequest, options: CallOptions): Promise<UpstreamEmbeddingResult>;
}

/**
 * An image generation request in the gateway's own terms (model already replaced by the
 * source's). Each adapter maps what its API knows and ignores the rest: OpenAI takes `size` and
 * `quality`; Stability takes an aspect ratio (derived from `size`), `negativePrompt`, `seed`.
 */
export interface UpstreamImageRequest {
  model: string;
  prompt: string;
  /** How many images (default 1). */
  n?: number;
  /** `WIDTHxHEIGHT`, e.g. `1024x1024`, or `auto` where the provider supports it. */
  size?: string;
  /** Provider quality names (`low`/`medium`/`high`/`auto`, `standard`/`hd`). */
  quality?: string;
  /** Diffusion steps, for providers that take them. */
  steps?: number;
  negativePrompt?: string;
  seed?: number;
  /** `png` (default), `jpeg`, `webp` where the provider offers a choice. */
  outputFormat?: 'png' | 'jpeg' | 'webp';
  /** Provider-specific options passed on as they are (OpenAI `style`, `background`; Stability `style_preset`). */
  options?: Record<string, string | number | boolean>;
  user?: string;
  /**
   * `url`: the client wants a link; an API that can answer one (DALL·E) is asked for it, and the
   * others answer bytes as always. Absent: bytes, whatever the API's own default.
   */
  responseFormat?: 'url' | 'b64_json';
}

/** An image file sent to an edit: its bytes, type and the name a multipart upload gives it. */
export interface UpstreamImageFile {
  data: Buffer;
  contentType: string;
  filename: string;
}

/** An edit of one or more images (a prompt, and optionally a mask whose transparent pixels are redrawn). */
export interface UpstreamImageEditRequest extends UpstreamImageRequest {
  images: UpstreamImageFile[];
  mask?: UpstreamImageFile;
}

/** One generated image: its bytes in base64, or (OpenAI `dall-e-*`) a URL to fetch them from. */
export interface UpstreamImage {
  base64?: string;
  url?: string;
  /** `image/png` etc.; from the answer, else from the requested format. */
  mimeType: string;
  /** Pixel size read from the image bytes (PNG/JPEG headers) or the requested size; absent when unknown. */
  width?: number;
  height?: number;
  /** The prompt the provider actually used (OpenAI `revised_prompt`). */
  revisedPrompt?: string;
  /** Stability: `SUCCESS` or `CONTENT_FILTERED` (a blurred image, still charged). */
  finishReason?: string;
  seed?: number;
}

/** What was produced, as facts a price can be computed from (per image, per megapixel, per step). */
export interface UpstreamImageUsage {
  images: number;
  /** The size billed: of the images when known, else the requested one. */
  width?: number;
  height?: number;
  /** Total megapixels over all images (width × height × images / 1e6), when the size is known. */
  megapixels?: number;
  steps?: number;
  /** Token usage, when the provider reports it (OpenAI gpt-image-1). */
  inputTokens?: number;
  outputTokens?: number;
}

export interface UpstreamImageResult {
  model: string;
  images: UpstreamImage[];
  usage: UpstreamImageUsage;
}

/** One provider kind's image generation capability. */
export interface ImagesAdapter {
  generate(target: ProviderTarget, request: UpstreamImageRequest, options: CallOptions): Promise<UpstreamImageResult>;
  /**
   * Why the API cannot edit images with `model` (e.g. `dall-e-3 has no edit API`), or undefined
   * when it can; an adapter without `edit` edits nothing.
   */
  editRefusal?(model: string): string | undefined;
  edit?(target: ProviderTarget, request: UpstreamImageEditRequest, options: CallOptions): Promise<UpstreamImageResult>;
}

/** Audio to transcribe: the bytes themselves (fetched by the gateway) and their type. */
export interface UpstreamTranscriptionRequest {
  model: string;
  audio: Buffer;
  /** e.g. `audio/wav`, `audio/mpeg`; sent as the upload's type. */
  contentType: string;
  /** A file name for multipart uploads; providers guess the format from its extension. Default from the content type. */
  filename?: string;
  /** ISO-639-1 language hint, e.g. `en`. */
  language?: string;
  /** Context or spelling hints (OpenAI `prompt`; Deepgram `keyterm` for nova-3). */
  prompt?: string;
  /** Ask for word timings (default true where it costs nothing). */
  words?: boolean;
  /** Sampling temperature, where the API takes one (OpenAI, 0 to 1). */
  temperature?: number;
  /** `translate`: the speech in English, whatever its language (OpenAI's translations); default `transcribe`. */
  task?: 'transcribe' | 'translate';
  /** Provider-specific options passed on as they are (Deepgram query parameters such as `smart_format`, `diarize`). */
  options?: Record<string, string | number | boolean>;
}

export interface TranscribedWord {
  word: string;
  /** Seconds from the start of the audio. */
  start: number;
  end: number;
  confidence?: number;
  punctuatedWord?: string;
}

export interface UpstreamTranscriptionResult {
  model: string;
  transcript: string;
  /** Length of the audio in seconds as the provider reported it; undefined when it reported none. */
  durationSeconds?: number;
  language?: string;
  confidence?: number;
  words?: TranscribedWord[];
  /** Provider fields worth keeping (Deepgram `metadata`, OpenAI `usage`, `segments`), untouched. */
  raw: Record<string, unknown>;
}

/** One provider kind's speech-to-text capability (pre-recorded audio). */
export interface TranscriptionAdapter {
  /** Why `model` cannot translate on this API, or undefined when it can (only OpenAI's Whisper does). */
  translationRefusal(model: string): string | undefined;
  transcribe(target: ProviderTarget, request: UpstreamTranscriptionRequest, options: CallOptions): Promise<UpstreamTranscriptionResult>;
}

/** Audio encodings every speech adapter can ask for; WAV is the gateway's default. */
export const SPEECH_FORMATS = ['wav', 'mp3', 'opus', 'flac', 'aac', 'pcm'] as const;
export type SpeechFormat = (typeof SPEECH_FORMATS)[number];

export interface UpstreamSpeechRequest {
  model: string;
  text: string;
  /** Provider voice name (OpenAI `alloy`; Deepgram Aura `thalia`, or a full `aura-2-thalia-en` model). */
  voice?: string;
  /** Default `wav`. */
  format?: SpeechFormat;
  /** Playback speed where supported (OpenAI, 0.25 to 4). */
  speed?: number;
  /** How to speak (OpenAI's gpt-4o-mini-tts), for adapters that `takeInstructions`. */
  instructions?: string;
  /** Provider-specific options passed on as they are (Deepgram `sample_rate`). */
  options?: Record<string, string | number | boolean>;
}

export interface UpstreamSpeechResult {
  model: string;
  audio: Buffer;
  /** The `Content-Type` to answer with: the upstream's, else the format's. */
  contentType: string;
  format: SpeechFormat;
  /** Characters billed: the text's length in Unicode code points. */
  characters: number;
}

/** One provider kind's text-to-speech capability. */
export interface SpeechAdapter {
  /** Whether the API takes `instructions` (OpenAI's does; Deepgram's has no such field). */
  readonly takesInstructions: boolean;
  synthesize(target: ProviderTarget, request: UpstreamSpeechRequest, options: CallOptions): Promise<UpstreamSpeechResult>;
}
