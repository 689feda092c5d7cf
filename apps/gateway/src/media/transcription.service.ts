import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { ErrorMessages, type AuthenticatedKey, type TranscriptionRequestDto, type TranscriptionResultDto, type TranscriptWordDto } from '@igw/contracts';
import { GatewayException, SERVICE_SETTINGS, type RequestContext, type ServiceSettings } from '@igw/platform';
import {
  MediaBudgetExhaustedError,
  MediaFetchFailedError,
  MediaFetchRefusedError,
  audioDurationSeconds,
  transcriptionAdapterFor,
  type CancelSignal,
  type UpstreamTranscriptionResult,
} from '@igw/providers';
import { PaidRequestPipeline } from '../paid-requests/paid-request-pipeline';
import { upstreamTimeoutMsOf } from '../paid-requests/upstream-route';
import { MediaFetcher, type HeldMedia } from './media-fetcher';
import { mediaTargets } from './media-routing';

/** What audio of unknown length is assumed to be: 128 kbit/s, a typical MP3 of speech. */
export const ESTIMATED_AUDIO_BYTES_PER_SECOND = 16_000;

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
 * STT_MAX_AUDIO_SECONDS) of audio, and must fit before the gateway fetches anything. Then the
 * audio is fetched under the media address policy (a refusal or failure is the client's 400;
 * no room in the process's media budget, a 503 with `retry-after`) and counted in that budget
 * until the request is over (the upload sends that one copy). Its length is read from its
 * bytes: audio longer than the maximum is refused (400, nothing billed); the rest is
 * transcribed. Billed: audioSeconds, never capped by the hold: the hold decides admission,
 * never the price.
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
          audio = await this.fetchAudio(body.url, call.signal);
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
            { timeoutMs: upstreamTimeoutMsOf(model, this.settings), signal },
          ),
        unreadUnits: () => ({ audio_seconds: billableSeconds(audioSeconds(undefined, measuredSeconds, audio!.bytes.length)) }),
        settle: (result, admitted) => {
          const duration = audioSeconds(result.durationSeconds, measuredSeconds, audio!.bytes.length);
          const billedSeconds = billableSeconds(duration);
          const usage = admitted.settle({ audio_seconds: billedSeconds });
          return resultOf(call, model.id, result, duration, { ...usage, audio_seconds: billedSeconds });
        },
      });
    } finally {
      // The upload is over, or never began: the bytes leave the budget (a fetch that failed gave its own back).
      audio?.release();
    }
  }

  /** The client chose the URL: whatever stops the fetch is a 400 naming it, but a full media budget (the gateway's state) is a 503. */
  private async fetchAudio(url: string, signal: CancelSignal): Promise<HeldMedia> {
    try {
      const audio = await this.fetcher.fetch(url, signal);
      if (audio.bytes.length === 0) throw new MediaFetchFailedError('http-status', 'answered with an empty file');
      return audio;
    } catch (error) {
      if (error instanceof MediaFetchRefusedError || error instanceof MediaFetchFailedError) {
        throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} url: ${error.detail}`, { cause: error });
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

/**
 * The audio's length: the longer of the provider's figure and the one read from the file (a
 * header can understate what a decoder hears), either alone when only one is known, else
 * estimated from the size at 128 kbit/s.
 */
export function audioSeconds(reportedSeconds: number | undefined, measuredSeconds: number | undefined, bytes: number): number {
  if (reportedSeconds === undefined && measuredSeconds === undefined) return bytes / ESTIMATED_AUDIO_BYTES_PER_SECOND;
  return Math.max(reportedSeconds ?? 0, measuredSeconds ?? 0);
}

/** Whole seconds, rounded up (a started second counts), at least 1. */
export function billableSeconds(seconds: number): number {
  if (!Number.isFinite(seconds) || seconds <= 0) return 1;
  return Math.max(1, Math.ceil(seconds - 1e-9));
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
