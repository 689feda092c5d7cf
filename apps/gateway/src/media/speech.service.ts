import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { codePointCount, ErrorMessages, type AuthenticatedKey, type SpeechRequestDto } from '@igw/contracts';
import { GatewayException, SERVICE_SETTINGS, type RequestContext, type ServiceSettings } from '@igw/platform';
import { speechAdapterFor, type CancelSignal } from '@igw/providers';
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
    const { model, revision } = this.pipeline.resolveModel(body.model, 'tts');
    if (body.format !== undefined && body.encoding !== undefined && body.format !== body.encoding) {
      throw new GatewayException(
        HttpStatus.BAD_REQUEST,
        `${ErrorMessages.bodyValidationPrefix} encoding: Expected the same value as format ('${body.format}'), or only one of the two. Received '${body.encoding}'`,
      );
    }
    const format = body.format ?? body.encoding ?? 'wav';
    const targets = mediaTargets(model, body.provider, this.settings, { name: 'text-to-speech', supports: (kind) => speechAdapterFor(kind) !== undefined });
    const characters = codePointCount(body.text);
    return this.pipeline.run(call, { endpoint: 'tts', model, catalogueRevision: revision, targets, ceiling: { characters } }, {
      send: (target, signal) =>
        speechAdapterFor(target.definition.kind)!.synthesize(
          target,
          { model: target.model, text: body.text, voice: body.voice, format, speed: body.speed },
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
