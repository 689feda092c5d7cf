import { audioFilename } from '../media/audio-facts';
import type {
  CallOptions,
  ProviderTarget,
  TranscribedWord,
  TranscriptionAdapter,
  UpstreamTranscriptionRequest,
  UpstreamTranscriptionResult,
} from '../provider.types';
import { postMultipart } from '../transport/http-client';
import { UpstreamProtocolError } from '../upstream.errors';
import type { OpenAiEndpoint } from './openai.chat';

const bearer = (target: ProviderTarget): Record<string, string> => (target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {});
const OPENAI_TRANSCRIPTIONS_ENDPOINT: OpenAiEndpoint = { url: (target) => `${target.baseUrl}/audio/transcriptions`, headers: bearer };
const OPENAI_TRANSLATIONS_ENDPOINT: OpenAiEndpoint = { url: (target) => `${target.baseUrl}/audio/translations`, headers: bearer };

/** OpenAI's transcription answer (`json` or `verbose_json`), as far as the gateway reads it. */
export interface OpenAiTranscriptionResponse {
  text?: string;
  task?: string;
  language?: string;
  duration?: number;
  words?: Array<{ word?: string; start?: number; end?: number }>;
  segments?: unknown[];
  usage?: { type?: 'duration' | 'tokens'; seconds?: number; input_tokens?: number; output_tokens?: number; total_tokens?: number };
}

/**
 * Only Whisper answers `verbose_json` (duration, language, word timings); the GPT-4o
 * transcribe models refuse it and answer `json` with token usage but no duration (the
 * gateway then bills the length it read from the audio itself).
 */
function takesVerboseJson(model: string): boolean {
  return model.startsWith('whisper');
}

/**
 * The form fields of a transcription or translation. A translation takes no `language` (its
 * output is English) nor `timestamp_granularities[]` (OpenAI refuses both there).
 */
export function toOpenAiTranscriptionFields(request: UpstreamTranscriptionRequest): Record<string, string | string[] | undefined> {
  const verbose = takesVerboseJson(request.model);
  const translating = request.task === 'translate';
  const options = Object.fromEntries(Object.entries(request.options ?? {}).map(([name, value]) => [name, String(value)]));
  return {
    ...options,
    model: request.model,
    response_format: verbose ? 'verbose_json' : 'json',
    language: translating ? undefined : request.language,
    prompt: request.prompt,
    temperature: request.temperature === undefined ? undefined : String(request.temperature),
    'timestamp_granularities[]': verbose && !translating && request.words !== false ? ['word', 'segment'] : undefined,
  };
}

export function fromOpenAiTranscriptionResponse(provider: string, request: UpstreamTranscriptionRequest, response: OpenAiTranscriptionResponse): UpstreamTranscriptionResult {
  if (!response || typeof response.text !== 'string') throw new UpstreamProtocolError(provider, 'no text in the transcription answer');
  const { text, words, ...raw } = response;
  const reported = typeof response.duration === 'number' ? response.duration : response.usage?.type === 'duration' ? response.usage.seconds : undefined;
  const result: UpstreamTranscriptionResult = { model: request.model, transcript: text.trim(), raw };
  if (reported !== undefined && Number.isFinite(reported)) result.durationSeconds = reported;
  if (typeof response.language === 'string') result.language = response.language;
  if (Array.isArray(words)) {
    result.words = words
      .filter((word) => typeof word?.word === 'string' && typeof word.start === 'number' && typeof word.end === 'number')
      .map((word): TranscribedWord => ({ word: word.word as string, start: word.start as number, end: word.end as number }));
  }
  return result;
}

/** OpenAI's transcriptions API and servers that copy it (Groq): a multipart upload to `{base}/audio/transcriptions`. */
export class OpenAiTranscriptionAdapter implements TranscriptionAdapter {
  constructor(
    private readonly endpoint: OpenAiEndpoint = OPENAI_TRANSCRIPTIONS_ENDPOINT,
    private readonly translationEndpoint: OpenAiEndpoint = OPENAI_TRANSLATIONS_ENDPOINT,
  ) {}

  /** OpenAI translates with Whisper only (`whisper-1`); its GPT-4o transcribers have no translations route. */
  translationRefusal(model: string): string | undefined {
    return takesVerboseJson(model) ? undefined : `${model} does not translate (only Whisper models do)`;
  }

  async transcribe(target: ProviderTarget, request: UpstreamTranscriptionRequest, options: CallOptions): Promise<UpstreamTranscriptionResult> {
    const endpoint = request.task === 'translate' ? this.translationEndpoint : this.endpoint;
    const response = await postMultipart<OpenAiTranscriptionResponse>({
      provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits,
      url: endpoint.url(target),
      headers: endpoint.headers(target),
      fields: toOpenAiTranscriptionFields(request),
      files: [{ field: 'file', filename: request.filename ?? audioFilename(request.contentType, request.audio), contentType: request.contentType, data: request.audio }],
      timeoutMs: options.timeoutMs,
      signal: options.signal,
      limits: target.limits,
    });
    return fromOpenAiTranscriptionResponse(target.provider, request, response);
  }
}
