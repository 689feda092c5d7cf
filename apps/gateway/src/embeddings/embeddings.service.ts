import { Inject, Injectable } from '@nestjs/common';
import type { EmbeddingListDto, EmbeddingRequestDto, AuthenticatedKey } from '@igw/contracts';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import type { RequestContext } from '@igw/http';
import { providerKind, type CancelSignal, type UpstreamEmbeddingResult } from '@igw/providers';
import { countAllOffLoop, whenCounted } from '@igw/tokenizer';
import type { AdmittedRequest } from '../paid-requests/admitted-request';
import type { ChargedUsage } from '../usage/usage-charging';
import { PaidRequestPipeline } from '../paid-requests/paid-request-pipeline';
import { AnswerCache } from '../response-cache/answer-cache';
import { planTargets, selectSources, upstreamTimeoutMsOf } from '../paid-requests/upstream-route';
import { encodeEmbedding } from './embedding-encoding';
import { assertDimensions, assertWithinContext, embeddingSources, inputList } from './embeddings-request';

export interface EmbeddingsCall {
  requestId: string;
  /** The HTTP request's context, for the access log and metrics. */
  context?: RequestContext;
  auth: AuthenticatedKey;
  body: EmbeddingRequestDto;
  signal: CancelSignal;
  /** The request's `Cache-Control` header, for the response cache. */
  cacheControl?: string | string[];
}

/** Embeddings as the response cache keeps them: the vectors (encoded per request) and the tokens they were billed for. */
interface CachedEmbeddings {
  version: 1;
  embeddings: number[][];
  promptTokens: number;
}

function isCachedEmbeddings(value: unknown): value is CachedEmbeddings {
  const entry = value as CachedEmbeddings | null;
  return typeof entry === 'object' && entry !== null && entry.version === 1 && Array.isArray(entry.embeddings) && Number.isInteger(entry.promptTokens);
}

/**
 * POST /v1/embeddings through the paid-request pipeline: the hold is the inputs' UTF-8 bytes
 * (no text has more tokens) or token array lengths; the bill is the input tokens (embeddings
 * generate none). A client that leaves once the inputs went upstream is billed all the same.
 */
@Injectable()
export class EmbeddingsService {
  constructor(
    private readonly pipeline: PaidRequestPipeline,
    private readonly answers: AnswerCache,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  async embed(call: EmbeddingsCall): Promise<EmbeddingListDto> {
    const { body } = call;
    const { model, revision } = this.pipeline.resolveModel(body.model, 'embeddings');
    assertDimensions(model, body.dimensions);
    const inputs = inputList(body.input);
    const pinned = body.provider !== undefined && body.provider.toLowerCase() !== 'auto';
    const sources = embeddingSources(model, selectSources(model, body.provider), pinned);
    const inputTokensCeiling = (inputs as Array<string | number[]>).reduce((sum, input) => sum + (typeof input === 'string' ? Buffer.byteLength(input) : input.length), 0);
    const plan = { endpoint: 'embeddings', model, catalogueRevision: revision, targets: planTargets(model, sources, this.settings), ceiling: { input_tokens: inputTokensCeiling }, prompt: call.body.input };
    const listOf = (embeddings: number[][], promptTokens: number, charge: () => ChargedUsage): EmbeddingListDto => ({
      object: 'list',
      data: embeddings.map((vector, index) => ({ object: 'embedding', index, embedding: encodeEmbedding(vector, body.encoding_format) })),
      model: model.id,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
      meta: { usage: charge() },
    });
    // The vectors are one answer whatever their encoding: one entry serves floats and base64 alike.
    const cached = await this.answers.consult({ auth: call.auth, cacheControl: call.cacheControl, cacheable: true, context: call.context }, plan.endpoint, model, { ...body, encoding_format: undefined }, isCachedEmbeddings);
    if (cached?.status === 'hit') {
      const hit = await this.answers.admitHit(call, plan, { input_tokens: cached.answer.promptTokens });
      try {
        return listOf(cached.answer.embeddings, cached.answer.promptTokens, hit.charge);
      } finally {
        hit.release();
      }
    }
    const keep = cached?.status === 'miss' ? cached.keep : undefined;
    const answer = (result: UpstreamEmbeddingResult, promptTokens: number, admitted: AdmittedRequest): EmbeddingListDto => {
      keep?.({ version: 1, embeddings: result.embeddings, promptTokens });
      return listOf(result.embeddings, promptTokens, () => admitted.settle({ input_tokens: promptTokens }));
    };
    return this.pipeline.run(call, keep ? { ...plan, cache: { status: 'miss' } } : plan, {
      // Counted only now that the key has been admitted, and before the call: a refused input never leaves the gateway.
      beforeCall: () => assertWithinContext(model, inputs),
      send: (target, signal) =>
        // embeddingSources kept only sources whose kind has an adapter.
        providerKind(target.definition.kind).embeddings!.embed(
          target,
          // A null optional field (some clients send them) means absent.
          { model: target.model, input: inputs, dimensions: body.dimensions ?? undefined, user: body.user ?? undefined },
          { timeoutMs: upstreamTimeoutMsOf(model, this.settings, target), signal },
        ),
      unreadUnits: () => {
        return whenCounted(countedInputTokens(inputs), (tokens) => ({ input_tokens: tokens }));
      },
      settle: (result, admitted) => {
        return whenCounted(promptTokensOf(result, inputs), (tokens) => answer(result, tokens, admitted));
      },
    });
  }
}

/** The upstream's count when it reports one; else the gateway tokenizer's (Gemini reports none), so nothing goes unbilled. */
function promptTokensOf(result: UpstreamEmbeddingResult, inputs: ReadonlyArray<string | number[]>): number | Promise<number> {
  const reported = result.usage?.prompt_tokens;
  if (reported !== undefined && Number.isInteger(reported) && reported >= 0) return reported;
  return countedInputTokens(inputs);
}

/** Token arrays by their length, texts by the tokenizer: in the token counting workers when long. */
function countedInputTokens(inputs: ReadonlyArray<string | number[]>): number | Promise<number> {
  const texts = inputs.filter((input): input is string => typeof input === 'string');
  const arrays = inputs.reduce((sum, input) => sum + (typeof input === 'string' ? 0 : input.length), 0);
  return whenCounted(countAllOffLoop(texts), (tokens) => arrays + tokens);
}
