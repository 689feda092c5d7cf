import { speechResult } from '../openai/openai.speech';
import type { CallOptions, ProviderTarget, SpeechAdapter, SpeechFormat, UpstreamSpeechRequest, UpstreamSpeechResult } from '../provider.types';
import { postJsonForBytes } from '../transport/http-client';
import { deepgramHeaders } from './deepgram.transcription';

/** Aura's default voice, when the catalogue's model (`aura-2`) names none and the client neither. */
export const DEEPGRAM_DEFAULT_VOICE = 'thalia';

/** Deepgram's `encoding` and `container` for each gateway format. */
const ENCODINGS: Record<SpeechFormat, Record<string, string>> = {
  wav: { encoding: 'linear16', container: 'wav' },
  pcm: { encoding: 'linear16', container: 'none' },
  mp3: { encoding: 'mp3' },
  opus: { encoding: 'opus', container: 'ogg' },
  flac: { encoding: 'flac' },
  aac: { encoding: 'aac' },
};

/**
 * Aura names the voice inside the model: `aura-2-thalia-en`. A bare family (`aura`, `aura-2`)
 * gets the request's voice (or Thalia) and English; a full name is used as it is.
 */
export function deepgramSpeakModel(model: string, voice: string | undefined): string {
  if (/^aura(-\d+)?$/.test(model)) return `${model}-${voice ?? DEEPGRAM_DEFAULT_VOICE}-en`;
  return model;
}

export function deepgramSpeakUrl(target: ProviderTarget, request: UpstreamSpeechRequest): string {
  const format = request.format ?? 'wav';
  const query = new URLSearchParams({ model: deepgramSpeakModel(request.model, request.voice), ...ENCODINGS[format] });
  for (const [name, value] of Object.entries(request.options ?? {})) query.set(name, String(value));
  return `${target.baseUrl}/v1/speak?${query.toString()}`;
}

/** Deepgram Aura: `POST {base}/v1/speak?model=...` with `{text}`, the audio bytes in the answer. */
export class DeepgramSpeechAdapter implements SpeechAdapter {
  readonly takesInstructions = false;

  async synthesize(target: ProviderTarget, request: UpstreamSpeechRequest, options: CallOptions): Promise<UpstreamSpeechResult> {
    const format = request.format ?? 'wav';
    const answer = await postJsonForBytes(
      {
        provider: target.provider, extraHeaders: target.headers, onRateLimits: target.onRateLimits,
        url: deepgramSpeakUrl(target, request),
        headers: deepgramHeaders(target),
        body: { text: request.text },
        timeoutMs: options.timeoutMs,
        signal: options.signal,
        limits: target.limits,
      },
      'audio/*',
    );
    return speechResult(target.provider, request, format, answer.body, answer.contentType);
  }
}
