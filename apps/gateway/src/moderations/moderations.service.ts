import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import { DEFAULT_MODERATION_MODEL, ErrorMessages, type AuthenticatedKey, type ModerationListDto, type ModerationRequestDto } from '@igw/contracts';
import { GatewayException, type RequestContext } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { providerKind, type CancelSignal, type UpstreamModerationResult } from '@igw/providers';
import { countAllOffLoop, whenCounted } from '@igw/tokenizer';
import { mediaTargets } from '../media/media-routing';
import { PaidRequestPipeline } from '../paid-requests/paid-request-pipeline';
import { upstreamTimeoutMsOf } from '../paid-requests/upstream-route';
import { moderationTexts } from './moderation-input';

export interface ModerationsCall {
  requestId: string;
  /** The HTTP request's context, for the access log and metrics. */
  context?: RequestContext;
  auth: AuthenticatedKey;
  body: ModerationRequestDto;
  signal: CancelSignal;
}

/**
 * POST /v1/moderations through the paid-request pipeline, on the catalogue's moderation models
 * and their sources that serve OpenAI's moderation API. Moderation answers report no usage, so
 * the bill is the gateway tokenizer's count of the input texts at the catalogue's
 * `input_tokens` price (OpenAI's moderation is free: a price of 0 still journals the request,
 * 0 credits, for the ledger and the usage reports); the hold is their UTF-8 bytes, which no text
 * has fewer tokens than. Images are not a priced unit. A client that leaves once the input went
 * upstream is billed all the same.
 */
@Injectable()
export class ModerationsService {
  constructor(
    private readonly pipeline: PaidRequestPipeline,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  async moderate(call: ModerationsCall): Promise<ModerationListDto> {
    const { body } = call;
    const { model, revision } = this.pipeline.resolveModel(body.model ?? DEFAULT_MODERATION_MODEL, 'moderations');
    const { texts, images } = moderationTexts(body.input);
    if (images > 0 && !(model.modalities?.input ?? []).includes('image')) {
      throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} input: '${model.id}' moderates text only; send images to a model whose modalities take them (omni-moderation-latest).`);
    }
    const targets = mediaTargets(model, body.provider, this.settings, { name: 'moderation', supports: (kind) => providerKind(kind).moderations !== undefined });
    const inputTokens = () => whenCounted(countAllOffLoop(texts), (tokens) => ({ input_tokens: tokens }));
    const ceiling = { input_tokens: texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0) };
    return this.pipeline.run(call, { endpoint: 'moderations', model, catalogueRevision: revision, targets, ceiling, prompt: body.input }, {
      send: (target, signal) =>
        providerKind(target.definition.kind).moderations!.moderate(target, { model: target.model, input: body.input }, { timeoutMs: upstreamTimeoutMsOf(model, this.settings, target), signal }),
      unreadUnits: inputTokens,
      settle: (result: UpstreamModerationResult, admitted) =>
        whenCounted(inputTokens(), (units) => ({ id: result.id, model: model.id, results: result.results, meta: { usage: admitted.settle(units) } })),
    });
  }
}
