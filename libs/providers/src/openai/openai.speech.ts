import { characterCount, speechContentType } from '../media/audio-facts';
import type { CallOptions, ProviderTarget, SpeechAdapter, SpeechFormat, UpstreamSpeechRequest, UpstreamSpeechResult } from '../provider.types';
import { postJsonForBytes } from '../transport/http-client';
import { UpstreamProtocolError } from '../upstream.errors';
import type { OpenAiEndpoint } from './openai.chat';

const OPENAI_SPEECH_ENDPOINT: OpenAiEndpoint = {
  url: (target) => `${target.baseUrl}/audio/speech`,
  headers: (target): Record<string, string> => (target.apiKey ? { authorization: `Bearer ${target.apiKey}` } : {}),
};

/** OpenAI needs a voice; this one when the client names none. */
export const OPENAI_DEFAULT_VOICE = 'alloy';

export function toOpenAiSpeechRequest(request: UpstreamSpeechRequest): Record<string, unknown> {
  const body: Record<string, unknown> = {
    ...request.options,
    model: request.model,
    input: request.text,
    voice: request.voice ?? OPENAI_DEFAULT_VOICE,
    // OpenAI's `pcm` is what the gateway calls pcm: raw 24 kHz 16-bit little-endian samples.
    response_format: request.format ?? 'wav',
  };
  if (request.speed !== undefined) body.speed = request.speed;
  if (request.instructions !== undefined) body.instructions = request.instructions;
  return body;
}

/** OpenAI's speech API and servers that copy it: `POST {base}/audio/speech`, the audio bytes in the answer. */
export class OpenAiSpeechAdapter implements SpeechAdapter {
  readonly takesInstructions = true;

  constructor(private readonly endpoint: OpenAiEndpoint = OPENAI_SPEECH_ENDPOINT) {}

  async synthesize(target: ProviderTarget, request: UpstreamSpeechRequest, options: CallOptions): Promise<UpstreamSpeechResult> {
    const format: SpeechFormat = request.format ?? 'wav';
    const answer = await postJsonForBytes(
      {
        provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits,
        url: this.endpoint.url(target),
        headers: this.endpoint.headers(target),
        body: toOpenAiSpeechRequest(request),
        timeoutMs: options.timeoutMs,
        signal: options.signal,
        limits: target.limits,
      },
      'audio/*',
    );
    return speechResult(target.provider, request, format, answer.body, answer.contentType);
  }
}

/** The result of a speech call; an empty or JSON answer (a proxy's error page with a 200) is a protocol error. */
export function speechResult(provider: string, request: UpstreamSpeechRequest, format: SpeechFormat, audio: Buffer, contentType: string): UpstreamSpeechResult {
  if (audio.length === 0) throw new UpstreamProtocolError(provider, 'the speech answer has no audio');
  if (contentType === 'application/json' || contentType.startsWith('text/')) throw new UpstreamProtocolError(provider, `the speech answer is ${contentType}, not audio`);
  return {
    model: request.model,
    audio,
    contentType: contentType.startsWith('audio/') ? contentType : speechContentType(format),
    format,
    characters: characterCount(request.text),
  };
}
