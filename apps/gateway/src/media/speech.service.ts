import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { codePointCount, ErrorMessages, type SpeechRequestDto } from '@igw/contracts';
import { GatewayException, SERVICE_SETTINGS, type AuthenticatedKey, type ServiceSettings } from '@igw/platform';
import { speechAdapterFor, type CancelSignal, type UpstreamSpeechResult } from '@igw/providers';
import { CatalogueSnapshotService } from '../catalogue/catalogue-snapshot.service';
import { RequestMeter, type ChargedUsage } from '../limits/request-meter';
import { UpstreamCallBilling } from '../upstream/upstream-billing';
import { UpstreamFallback } from '../upstream/upstream-route';
import { assertModelKind, mediaTargets } from './media-routing';

export interface SpeechCall {
  requestId: string;
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
  private readonly fallback = new UpstreamFallback();

  constructor(
    private readonly catalogue: CatalogueSnapshotService,
    private readonly meter: RequestMeter,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  async synthesize(call: SpeechCall): Promise<SpeechAnswer> {
    const { body } = call;
    const { model, revision } = this.catalogue.resolveModel(body.model);
    assertModelKind(model, 'text-to-speech');
    if (body.format !== undefined && body.encoding !== undefined && body.format !== body.encoding) {
      throw new GatewayException(
        HttpStatus.BAD_REQUEST,
        `${ErrorMessages.bodyValidationPrefix} encoding: Expected the same value as format ('${body.format}'), or only one of the two. Received '${body.encoding}'`,
      );
    }
    const format = body.format ?? body.encoding ?? 'wav';
    const targets = mediaTargets(model, body.provider, this.settings, { name: 'text-to-speech', supports: (kind) => speechAdapterFor(kind) !== undefined });
    const characters = codePointCount(body.text);
    const admitted = await this.meter.admit({ requestId: call.requestId, auth: call.auth, endpoint: 'tts', model, catalogueRevision: revision }, { characters });
    const billing = new UpstreamCallBilling(call.signal, this.settings.env.UPSTREAM_TIMEOUT_MS);
    let result: UpstreamSpeechResult;
    let usage: ChargedUsage;
    try {
      result = await billing.callWithFallback(
        this.fallback,
        targets,
        (target, signal) =>
          speechAdapterFor(target.definition.kind)!.synthesize(
            target,
            { model: target.model, text: body.text, voice: body.voice, format, speed: body.speed },
            { timeoutMs: this.settings.env.UPSTREAM_TIMEOUT_MS, signal },
          ),
        () => admitted.settle({ characters }),
      );
      usage = admitted.settle({ characters });
    } finally {
      billing.close();
      admitted.finish();
    }
    return { audio: result.audio, contentType: result.contentType, model: model.id, characters, usage };
  }
}
