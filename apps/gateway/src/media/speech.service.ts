import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { codePointCount, ErrorMessages, type AuthenticatedKey, type OpenAiSpeechRequestDto, type SpeechRequestDto } from '@igw/contracts';
import { GatewayException, type RequestContext } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { providerKind, type CancelSignal, type SpeechFormat } from '@igw/providers';
import type { ChargedUsage } from '../usage/usage-charging';
import { PaidRequestPipeline } from '../paid-requests/paid-request-pipeline';
import { upstreamTimeoutMsOf } from '../paid-requests/upstream-route';
import { mediaTargets } from './media-routing';

export interface SpeechCall {
  requestId: string;
  /** The HTTP request's context, for the access log and metrics. */
  context?: RequestContext;
  auth: AuthenticatedKey;
  body: SpeechRequestDto;
  signal: CancelSignal;
}

export interface SpeechAnswer {
  audio: Buffer;
  contentType: string;
  /** The catalogue id of the model that spoke. */
  model: string;
  characters: number;
  usage: ChargedUsage;
}

/**
 * POST /tts: the text's characters are known before the call, so the hold is the exact cost
 * and the bill is the same number, whichever provider speaks (and also when the client left
 * once the text went upstream: the provider charges the characters it was sent).
 */
@Injectable()
export class SpeechService {
  constructor(
    private readonly pipeline: PaidRequestPipeline,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  async synthesize(call: SpeechCall): Promise<SpeechAnswer> {
    const { body } = call;
    if (body.format !== undefined && body.encoding !== undefined && body.format !== body.encoding) {
      throw new GatewayException(
        HttpStatus.BAD_REQUEST,
        `${ErrorMessages.bodyValidationPrefix} encoding: Expected the same value as format ('${body.format}'), or only one of the two. Received '${body.encoding}'`,
      );
    }
    return this.speak(call, { model: body.model, provider: body.provider, text: body.text, voice: body.voice, format: body.format ?? body.encoding ?? 'wav', speed: body.speed });
  }

  /** POST /v1/audio/speech: OpenAI's body, billed as /tts bills the same text. */
  synthesizeOpenAi(call: Omit<SpeechCall, 'body'>, body: OpenAiSpeechRequestDto): Promise<SpeechAnswer> {
    return this.speak(call, {
      model: body.model,
      provider: body.provider,
      text: body.input,
      voice: body.voice,
      format: body.response_format ?? 'mp3',
      speed: body.speed,
      instructions: body.instructions,
    });
  }

  private speak(call: Omit<SpeechCall, 'body'>, job: SpeechJob): Promise<SpeechAnswer> {
    const { model, revision } = this.pipeline.resolveModel(job.model, 'tts');
    const instructed = job.instructions !== undefined;
    const allTargets = mediaTargets(model, job.provider, this.settings, { name: 'text-to-speech', supports: (kind) => providerKind(kind).speech !== undefined });
    // Instructions change what is said aloud: never dropped, so only sources that take them may speak.
    const targets = instructed ? allTargets.filter((target) => providerKind(target.definition.kind).speech!.takesInstructions) : allTargets;
    if (targets.length === 0) {
      throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} instructions: no source of '${model.id}' takes speaking instructions (OpenAI-format sources do); send the request without them.`);
    }
    const characters = codePointCount(job.text);
    return this.pipeline.run(call, { endpoint: 'tts', model, catalogueRevision: revision, targets, ceiling: { characters } }, {
      send: (target, signal) =>
        providerKind(target.definition.kind).speech!.synthesize(
          target,
          { model: target.model, text: job.text, voice: job.voice, format: job.format, speed: job.speed, instructions: job.instructions },
          { timeoutMs: upstreamTimeoutMsOf(model, this.settings, target), signal },
        ),
      unreadUnits: () => ({ characters }),
      settle: (result, admitted): SpeechAnswer => {
        const usage = admitted.settle({ characters });
        return { audio: result.audio, contentType: result.contentType, model: model.id, characters, usage };
      },
    });
  }
}

/** What one speech request runs with, whichever route it came in by. */
interface SpeechJob {
  model: string;
  provider?: string;
  text: string;
  voice?: string;
  format: SpeechFormat;
  speed?: number;
  instructions?: string;
}
