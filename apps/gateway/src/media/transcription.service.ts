import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { ErrorMessages, type AuthenticatedKey, type TranscriptionRequestDto, type TranscriptionResultDto, type TranscriptWordDto } from '@igw/contracts';
import { GatewayException, SERVICE_SETTINGS, type RequestContext, type ServiceSettings } from '@igw/platform';
import {
  MediaBudgetExhaustedError,
  MediaFetchFailedError,
  MediaFetchRefusedError,
  audioDurationSeconds,
  describeBytes,
  transcriptionAdapterFor,
  type CancelSignal,
  type UpstreamTranscriptionResult,
} from '@igw/providers';
import { PaidRequestPipeline } from '../paid-requests/paid-request-pipeline';
import { upstreamTimeoutMsOf } from '../paid-requests/upstream-route';
import { MediaFetcher, keyShareBytes, type HeldMedia } from './media-fetcher';
import { mediaTargets } from './media-routing';
import { audioSeconds, billableSeconds, billedAudioSeconds } from './transcription-billing';

export interface TranscriptionCall {
  requestId: string;
  /** The HTTP request's context, for the access log and metrics. */
  context?: RequestContext;
  auth: AuthenticatedKey;
  body: TranscriptionRequestDto;
  signal: CancelSignal;
}

/**
 * POST /stt. Admission first: the hold is `max_duration_seconds` (default and cap
 * STT_MAX_AUDIO_SECONDS) of audio, and must fit before the gateway fetches anything; so the
 * request counts against the key's rates even when its fetch is then refused. Then the audio
 * is fetched under the media address policy (a refusal or failure is the client's 400; no room
 * in the key's share of the process's media budget, a 429, in the budget itself, a 503, both
 * with `retry-after`) and counted in that budget until the request is over (the upload sends
 * that one copy). Its length is read from its bytes: audio longer than the maximum is refused
 * (400, nothing billed); the rest is transcribed. Billed: billedAudioSeconds, never past the
 * hold, nor, when the length cannot be read, past what the bytes can carry
 * (transcription-billing.ts), whatever the provider reports.
 */
@Injectable()
export class TranscriptionService {
  constructor(
    private readonly pipeline: PaidRequestPipeline,
    private readonly fetcher: MediaFetcher,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  async transcribe(call: TranscriptionCall): Promise<TranscriptionResultDto> {
    const { body } = call;
    const { model, revision } = this.pipeline.resolveModel(body.model, 'stt');
    const limit = this.settings.env.STT_MAX_AUDIO_SECONDS;
    if (body.max_duration_seconds !== undefined && body.max_duration_seconds > limit) {
      throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} max_duration_seconds: Expected an integer from 1 to ${limit}. Received ${body.max_duration_seconds}`);
    }
    const maxSeconds = body.max_duration_seconds ?? limit;
    const targets = mediaTargets(model, body.provider, this.settings, { name: 'speech-to-text', supports: (kind) => transcriptionAdapterFor(kind) !== undefined });
    // Fetched after admission (beforeCall), so the steps after it read it with `!`.
    let audio: HeldMedia | undefined;
    // The length read from the audio's bytes, when they carry one.
    let measuredSeconds: number | undefined;
    try {
      return await this.pipeline.run(call, { endpoint: 'stt', model, catalogueRevision: revision, targets, ceiling: { audio_seconds: maxSeconds } }, {
        beforeCall: async () => {
          audio = await this.fetchAudio(body.url, call.signal, call.auth.keyId);
          measuredSeconds = await audioDurationSeconds(audio.bytes);
          if (measuredSeconds !== undefined && billableSeconds(measuredSeconds) > maxSeconds) {
            throw new GatewayException(
              HttpStatus.BAD_REQUEST,
              `${ErrorMessages.bodyValidationPrefix} url: the audio lasts ${billableSeconds(measuredSeconds)} s, longer than the ${maxSeconds} s this request may transcribe (max_duration_seconds, at most STT_MAX_AUDIO_SECONDS).`,
            );
          }
        },
        send: (target, signal) =>
          transcriptionAdapterFor(target.definition.kind)!.transcribe(
            target,
            { model: target.model, audio: audio!.bytes, contentType: audio!.contentType ?? 'application/octet-stream', language: body.language, prompt: body.prompt, words: body.words },
            { timeoutMs: upstreamTimeoutMsOf(model, this.settings, target), signal },
          ),
        unreadUnits: () => ({ audio_seconds: billedAudioSeconds(undefined, measuredSeconds, audio!.bytes.length, maxSeconds) }),
        settle: (result, admitted) => {
          const duration = audioSeconds(result.durationSeconds, measuredSeconds, audio!.bytes.length);
          const billedSeconds = billedAudioSeconds(result.durationSeconds, measuredSeconds, audio!.bytes.length, maxSeconds);
          const usage = admitted.settle({ audio_seconds: billedSeconds });
          return resultOf(call, model.id, result, duration, { ...usage, audio_seconds: billedSeconds });
        },
      });
    } finally {
      // The upload is over, or never began: the bytes leave the budget (a fetch that failed gave its own back).
      audio?.release();
    }
  }

  /**
   * The client chose the URL: whatever stops the fetch is a 400 naming it, but a full media
   * budget is not the URL's fault: the key's own share full is the key asking too much at once
   * (429), the process's budget full is the gateway's state (503).
   */
  private async fetchAudio(url: string, signal: CancelSignal, keyId: string): Promise<HeldMedia> {
    try {
      const audio = await this.fetcher.fetch(url, signal, keyId);
      if (audio.bytes.length === 0) throw new MediaFetchFailedError('http-status', 'answered with an empty file');
      return audio;
    } catch (error) {
      if (error instanceof MediaFetchRefusedError || error instanceof MediaFetchFailedError) {
        throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} url: ${error.detail}`, { cause: error });
      }
      if (error instanceof MediaBudgetExhaustedError && error.scope === 'holder') {
        throw new GatewayException(
          HttpStatus.TOO_MANY_REQUESTS,
          `Too Many Requests: this API key's requests hold ${describeBytes(keyShareBytes(this.settings.env))} of fetched media, as much as one key may at once (MEDIA_IN_FLIGHT_KEY_SHARE); retry when one of them is over.`,
          { cause: error, headers: { 'retry-after': '1' } },
        );
      }
      if (error instanceof MediaBudgetExhaustedError) {
        throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, `Service Unavailable: the audio at url ${error.detail}; try again shortly.`, {
          cause: error,
          headers: { 'retry-after': '1' },
        });
      }
      throw error;
    }
  }
}

function resultOf(call: TranscriptionCall, modelId: string, result: UpstreamTranscriptionResult, duration: number, usage: TranscriptionResultDto['meta']['usage']): TranscriptionResultDto {
  return {
    metadata: { request_id: call.requestId, created: new Date().toISOString(), duration, channels: 1, model: modelId },
    results: {
      channels: [
        {
          alternatives: [
            {
              transcript: result.transcript,
              ...(result.confidence !== undefined ? { confidence: result.confidence } : {}),
              ...(result.words && call.body.words !== false ? { words: result.words.map(wordOf) } : {}),
            },
          ],
          ...(result.language !== undefined ? { detected_language: result.language } : {}),
        },
      ],
    },
    meta: { usage },
  };
}

function wordOf(word: NonNullable<UpstreamTranscriptionResult['words']>[number]): TranscriptWordDto {
  const dto: TranscriptWordDto = { word: word.word, start: word.start, end: word.end };
  if (word.confidence !== undefined) dto.confidence = word.confidence;
  if (word.punctuatedWord !== undefined) dto.punctuated_word = word.punctuatedWord;
  return dto;
}
