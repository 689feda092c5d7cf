import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { ErrorMessages, type AuthenticatedKey, type TranscriptionRequestDto, type TranscriptionResultDto, type TranscriptWordDto } from '@igw/contracts';
import { GatewayException, type RequestContext } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import {
  audioDurationSeconds,
  MediaBudgetExhaustedError,
  MediaFetchFailedError,
  MediaFetchRefusedError,
  providerKind,
  type CancelSignal,
  type UpstreamTranscriptionRequest,
  type UpstreamTranscriptionResult,
} from '@igw/providers';
import { PaidRequestPipeline } from '../paid-requests/paid-request-pipeline';
import { upstreamTimeoutMsOf, type UpstreamTarget } from '../paid-requests/upstream-route';
import { MediaFetcher, mediaBudgetException, type HeldMedia } from './media-fetcher';
import type { UploadedPart } from './multipart-upload';
import { mediaTargets } from './media-routing';
import { audioSeconds, billableSeconds, billedAudioSeconds } from './transcription-billing';

/** Audio to transcribe, held in the media budget until `release`. */
interface AudioInput {
  bytes: Buffer;
  contentType?: string;
  filename?: string;
  release(): void;
}

/** What one transcription runs with, whichever route it came in by. */
interface TranscriptionJob {
  model: string;
  provider?: string;
  maxSeconds?: number;
  /** The request field the audio came in: what a refusal of it names. */
  field: 'url' | 'file';
  audio(): Promise<AudioInput>;
  request: Pick<UpstreamTranscriptionRequest, 'language' | 'prompt' | 'words' | 'temperature' | 'task'>;
}

/** An OpenAI-style upload to transcribe or translate. */
export interface UploadTranscription {
  model: string;
  provider?: string;
  file: UploadedPart;
  task: 'transcribe' | 'translate';
  request: Pick<UpstreamTranscriptionRequest, 'language' | 'prompt' | 'words' | 'temperature'>;
}

/** A transcription done and billed, before it is shaped for its route. */
export interface AudioTranscription {
  /** The catalogue id of the model. */
  model: string;
  result: UpstreamTranscriptionResult;
  /** Seconds of audio (audioSeconds). */
  duration: number;
  usage: TranscriptionResultDto['meta']['usage'];
}

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
    const transcription = await this.run(call, {
      model: body.model,
      provider: body.provider,
      maxSeconds: body.max_duration_seconds,
      field: 'url',
      audio: () => this.fetchAudio(body.url, call.signal, call.auth.keyId),
      request: { language: body.language, prompt: body.prompt, words: body.words },
    });
    return resultOf(call, transcription);
  }

  /**
   * POST /v1/audio/transcriptions and /translations: the audio uploaded with the request (its
   * bytes already held in the media budget by the upload), billed as /stt bills a fetched file.
   * A translation on a source whose model cannot translate is the client's 400.
   */
  transcribeUpload(call: Omit<TranscriptionCall, 'body'>, upload: UploadTranscription): Promise<AudioTranscription> {
    return this.run(call, {
      model: upload.model,
      provider: upload.provider,
      field: 'file',
      audio: async () => ({ bytes: upload.file.bytes, contentType: upload.file.contentType, filename: upload.file.filename, release: () => undefined }),
      request: { ...upload.request, task: upload.task },
    });
  }

  private async run(call: Omit<TranscriptionCall, 'body'>, job: TranscriptionJob): Promise<AudioTranscription> {
    const { model, revision } = this.pipeline.resolveModel(job.model, 'stt');
    const limit = this.settings.env.STT_MAX_AUDIO_SECONDS;
    if (job.maxSeconds !== undefined && job.maxSeconds > limit) {
      throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} max_duration_seconds: Expected an integer from 1 to ${limit}. Received ${job.maxSeconds}`);
    }
    const maxSeconds = job.maxSeconds ?? limit;
    const translating = job.request.task === 'translate';
    const allTargets = mediaTargets(model, job.provider, this.settings, { name: 'speech-to-text', supports: (kind) => providerKind(kind).transcription !== undefined });
    const targets = translating ? translatingTargets(model.id, allTargets) : allTargets;
    // Had after admission (beforeCall), so the steps after it read it with `!`.
    let audio: AudioInput | undefined;
    // The length read from the audio's bytes, when they carry one.
    let measuredSeconds: number | undefined;
    try {
      return await this.pipeline.run(call, { endpoint: 'stt', model, catalogueRevision: revision, targets, ceiling: { audio_seconds: maxSeconds } }, {
        beforeCall: async () => {
          audio = await job.audio();
          measuredSeconds = await audioDurationSeconds(audio.bytes);
          if (measuredSeconds !== undefined && billableSeconds(measuredSeconds) > maxSeconds) {
            throw new GatewayException(
              HttpStatus.BAD_REQUEST,
              `${ErrorMessages.bodyValidationPrefix} ${job.field}: the audio lasts ${billableSeconds(measuredSeconds)} s, longer than the ${maxSeconds} s this request may transcribe (${job.field === 'url' ? 'max_duration_seconds, at most ' : ''}STT_MAX_AUDIO_SECONDS).`,
            );
          }
        },
        send: (target, signal) =>
          providerKind(target.definition.kind).transcription!.transcribe(
            target,
            { ...job.request, model: target.model, audio: audio!.bytes, contentType: audio!.contentType ?? 'application/octet-stream', filename: audio!.filename },
            { timeoutMs: upstreamTimeoutMsOf(model, this.settings, target), signal },
          ),
        unreadUnits: () => ({ audio_seconds: billedAudioSeconds(undefined, measuredSeconds, audio!.bytes.length, maxSeconds) }),
        settle: (result, admitted): AudioTranscription => {
          const duration = audioSeconds(result.durationSeconds, measuredSeconds, audio!.bytes.length);
          const billedSeconds = billedAudioSeconds(result.durationSeconds, measuredSeconds, audio!.bytes.length, maxSeconds);
          const usage = admitted.settle({ audio_seconds: billedSeconds });
          return { model: model.id, result, duration, usage: { ...usage, audio_seconds: billedSeconds } };
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
      if (error instanceof MediaBudgetExhaustedError) throw mediaBudgetException(error.scope, this.settings.env, 'audio at url', error.detail, error);
      throw error;
    }
  }
}

/**
 * A translation goes only to sources whose model translates; none left is the client's 400
 * naming the model (a catalogue entry routed to Deepgram or to a GPT-4o transcriber).
 */
function translatingTargets(modelId: string, targets: readonly UpstreamTarget[]): readonly UpstreamTarget[] {
  const refusals = targets.map((target) => providerKind(target.definition.kind).transcription!.translationRefusal(target.model));
  const usable = targets.filter((_, index) => refusals[index] === undefined);
  if (usable.length === 0) {
    throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} model: '${modelId}' cannot translate speech: ${[...new Set(refusals)].join('; ')}. Translations are served by Whisper models on OpenAI-format sources.`);
  }
  return usable;
}

function resultOf(call: TranscriptionCall, { model: modelId, result, duration, usage }: AudioTranscription): TranscriptionResultDto {
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
