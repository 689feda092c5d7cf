import { HttpStatus, Inject, Injectable, Logger } from '@nestjs/common';
import { ErrorMessages, toJevAnswers, toLunaAnswers, type AuthenticatedKey, type CatalogueModel, type DecideFailure, type DecideJob, type DecideReply, type DecisionRequestDto, type DecisionResultDto, type DecisionShape } from '@igw/contracts';
import { QueueName, MessagingService, RpcTimeoutError } from '@igw/messaging';
import { GatewayException, type RequestContext } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { decisionsAdapterFor, UpstreamHttpError, UpstreamProtocolError, UpstreamTimeoutError, UpstreamUnavailableError, type CancelSignal } from '@igw/providers';
import { countEachOffLoop, whenCounted } from '@igw/tokenizer';
import { PaidRequestPipeline } from '../paid-requests/paid-request-pipeline';
import { toClientError } from '../paid-requests/upstream-error.mapper';
import { selectSources, upstreamTimeoutMsOf } from '../paid-requests/upstream-route';
import { assertShape, assertWithinContext, decisionQuestions, decisionShapeOf, inputTokensOf, LOGPROBS_TAG, measuredTexts, utf8Bytes } from './decisions-request';

export interface DecisionsCall {
  requestId: string;
  /** The HTTP request's context, for the access log and metrics. */
  context?: RequestContext;
  auth: AuthenticatedKey;
  body: DecisionRequestDto;
  signal: CancelSignal;
}

interface PreparedDecision {
  /** The concrete entry that answers and whose prices are charged (a floating id resolved). */
  model: CatalogueModel;
  /** The floating entry the client named, when it resolved to `model`. */
  namedModel?: CatalogueModel;
  revision: number;
  shape: DecisionShape;
  job: DecideJob;
  inputTokensCeiling: number;
}

/**
 * POST /v1/decisions. The gateway validates, authenticates, admits and holds credits, then
 * puts the decision on the decisions queue and waits for the reply (DECISIONS_TIMEOUT_MS,
 * then 504); the decisions service calls the upstreams. Billed by input tokens only, through
 * the same journal and ledger as chat.
 *
 * A client that leaves: before the job is queued, nothing is sent or billed; after, the job
 * runs on (a queued job cannot be called back), the request keeps its slot and hold until
 * the reply, and what the reply says was processed is billed (upstream-billing.ts's rule).
 */
@Injectable()
export class DecisionsService {
  private readonly logger = new Logger(DecisionsService.name);

  constructor(
    private readonly pipeline: PaidRequestPipeline,
    private readonly messaging: MessagingService,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  async decide(call: DecisionsCall): Promise<DecisionResultDto> {
    const prepared = this.prepare(call);
    const plan = {
      endpoint: 'decisions',
      model: prepared.model,
      namedModel: prepared.namedModel,
      catalogueRevision: prepared.revision,
      ceiling: { input_tokens: prepared.inputTokensCeiling },
      // A queued job cannot be called back: the request waits for its reply, at most this long.
      whenClientLeaves: { runsOnMs: this.settings.env.DECISIONS_TIMEOUT_MS },
    };
    return this.pipeline.run(call, plan, {
      // Counted only now that the key has been admitted: a key that cannot pay costs no tokenizer time.
      beforeCall: () => {
        const { shape, job } = prepared;
        // Counted in the token counting workers when long, like the context check.
        const estimate = () => {
          const texts = measuredTexts(shape, job.via, call.body, job.questions);
          const record = (counts: number[]) => {
            const tokensOf = new Map(texts.map((text, index) => [text, counts[index]]));
            job.estimatedInputTokens = inputTokensOf(shape, job.via, call.body, job.questions, (text) => tokensOf.get(text)!);
          };
          return whenCounted(countEachOffLoop(texts), record);
        };
        const checked = assertWithinContext(prepared.model, prepared.shape, call.body);
        return checked ? checked.then(estimate) : estimate();
      },
      forward: () => this.send(prepared),
      unreadUnits: (unread) => (unread === 'answer-unread' ? { input_tokens: prepared.job.estimatedInputTokens } : undefined),
      settle: (reply, admitted): DecisionResultDto => {
        if (!reply.ok) {
          if (reply.inputTokensBilled > 0) admitted.settle({ input_tokens: reply.inputTokensBilled });
          throw clientErrorOf(reply.failure);
        }
        const meta = admitted.settle({ input_tokens: reply.usage.input_tokens });
        const { questions } = prepared.job;
        return {
          model: prepared.model.id,
          answers: prepared.shape === 'jev' ? toJevAnswers(questions, reply.answers) : toLunaAnswers(questions, reply.answers),
          usage: { input_tokens: reply.usage.input_tokens, output_tokens: producesNoOutput(prepared.model) ? 0 : reply.usage.output_tokens },
          meta: { usage: meta },
        };
      },
    });
  }

  private async send(prepared: PreparedDecision): Promise<DecideReply> {
    try {
      return await this.messaging.request(QueueName.Decisions, 'decisions.decide', prepared.job, this.settings.env.DECISIONS_TIMEOUT_MS);
    } catch (error) {
      if (error instanceof RpcTimeoutError) {
        const timeout = new GatewayException(HttpStatus.GATEWAY_TIMEOUT, `Gateway Timeout: the decisions service did not answer within ${error.timeoutMs} ms.`, { cause: error });
        // The worker had the job: upstreams may have read the content, and its count is billed (upstream-billing.ts).
        throw error.workerStarted ? Object.assign(timeout, { upstreamCharged: true }) : timeout;
      }
      this.logger.error(`Decision ${prepared.job.requestId}: ${error instanceof Error ? error.message : String(error)}`);
      throw new GatewayException(HttpStatus.BAD_GATEWAY, 'Bad Gateway: the decisions service failed to answer.', { cause: error });
    }
  }

  private prepare(call: DecisionsCall): PreparedDecision {
    const named = this.pipeline.resolveModel(call.body.model, 'decisions');
    // A floating id answers as its current pinned release: that entry's sources and prices.
    const { model, revision } = named.model.resolvesTo ? this.pipeline.resolveModel(named.model.resolvesTo, 'decisions') : named;
    const shape = decisionShapeOf(model);
    assertShape(model, shape, call.body);
    const questions = decisionQuestions(model, shape, call.body);
    const via: DecideJob['via'] = model.tags.includes(LOGPROBS_TAG) ? 'chat-logprobs' : 'decisions-api';
    const sources = decisionSources(model, shape, via, selectSources(model, call.body.provider), call.body.provider);
    const { model: _model, provider: _provider, ...request } = call.body;
    return {
      model,
      namedModel: model === named.model ? undefined : named.model,
      revision,
      shape,
      inputTokensCeiling: inputTokensOf(shape, via, call.body, questions, utf8Bytes),
      job: {
        requestId: call.requestId,
        model: model.id,
        shape,
        via,
        sources,
        request: request as Record<string, unknown>,
        questions,
        // Counted after admission (beforeCall).
        estimatedInputTokens: 0,
        upstreamTimeoutMs: upstreamTimeoutMsOf(model, this.settings),
      },
    };
  }
}

/**
 * The sources that can answer: for a decision API, those whose provider serves the model's
 * shape (others are skipped, as embeddings skip providers without an embeddings API). A pinned
 * source without one is the client's choice (400); a model left with none is a catalogue
 * problem (503).
 */
function decisionSources(
  model: CatalogueModel,
  shape: DecisionShape,
  via: DecideJob['via'],
  selected: CatalogueModel['routing']['sources'],
  provider: string | undefined,
): DecideJob['sources'] {
  const usable = via === 'chat-logprobs' ? selected : selected.filter((source) => decisionsAdapterFor(source.provider, shape) !== undefined);
  if (usable.length > 0) return usable.map(({ provider: name, model: upstream }) => ({ provider: name, model: upstream }));
  const names = [...new Set(selected.map((source) => source.provider))].join(', ');
  const pinned = provider !== undefined && !['auto', 'fallback'].includes(provider.toLowerCase());
  if (pinned) throw new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} provider: ${names} offers no decisions API for ${model.id}; pick another source.`);
  throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, `Service Unavailable: no source of model '${model.id}' offers a decisions API (${names} has none).`);
}

/** Models the catalogue marks `no_output_tokens` (liquid/d1) report none, whatever an upstream counts. */
function producesNoOutput(model: CatalogueModel): boolean {
  return (model.capabilities ?? []).includes('no_output_tokens');
}

/** The client error of a failed decision: the same statuses and messages as a chat call's upstream failure. */
export function clientErrorOf(failure: DecideFailure): unknown {
  switch (failure.kind) {
    case 'http':
      return toClientError(new UpstreamHttpError(failure.provider, failure.status, failure.upstreamMessage, failure.retryAfterSeconds));
    case 'timeout':
      return toClientError(new UpstreamTimeoutError(failure.provider, failure.timeoutMs, true));
    case 'unavailable':
      return toClientError(new UpstreamUnavailableError(failure.provider, failure.message));
    case 'protocol':
      return toClientError(Object.assign(new UpstreamProtocolError(failure.provider, ''), { message: failure.message }));
    case 'translation':
      return new GatewayException(HttpStatus.BAD_REQUEST, `${ErrorMessages.bodyValidationPrefix} ${failure.param ? `${failure.param}: ` : ''}${failure.message}`);
    case 'unconfigured':
      return new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, failure.message);
    case 'internal':
      return new GatewayException(HttpStatus.BAD_GATEWAY, 'Bad Gateway: the decisions service failed to answer.');
  }
}
