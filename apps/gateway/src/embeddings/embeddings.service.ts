import { Inject, Injectable } from '@nestjs/common';
import type { CatalogueModel, EmbeddingListDto, EmbeddingRequestDto } from '@igw/contracts';
import { SERVICE_SETTINGS, type AuthenticatedKey, type ServiceSettings } from '@igw/platform';
import { embeddingsAdapterFor, type CancelSignal, type UpstreamEmbeddingResult } from '@igw/providers';
import { CatalogueSnapshotService } from '../catalogue/catalogue-snapshot.service';
import { RequestMeter, type AdmittedRequest, type ChargedUsage } from '../limits/request-meter';
import { planTargets, selectSources, UpstreamFallback, type UpstreamTarget } from '../upstream/upstream-route';
import { UpstreamCallBilling } from '../upstream/upstream-billing';
import { encodeEmbedding } from './embedding-encoding';
import { assertDimensions, assertEmbeddingModel, assertWithinContext, embeddingSources, inputList, inputTokens } from './embeddings-request';

export interface EmbeddingsCall {
  requestId: string;
  auth: AuthenticatedKey;
  body: EmbeddingRequestDto;
  signal: CancelSignal;
}

interface PreparedEmbeddings {
  model: CatalogueModel;
  revision: number;
  targets: UpstreamTarget[];
  /** The request's inputs as a list (texts or token arrays). */
  inputs: string[] | number[][];
}

/**
 * POST /v1/embeddings, shaped like ChatService: prepare (model, limits, sources), admission
 * (rate limits, credits, the hold), the upstream call with fallback, then settle (the input
 * tokens priced and recorded for the ledger; embeddings generate none).
 */
@Injectable()
export class EmbeddingsService {
  private readonly fallback = new UpstreamFallback();

  constructor(
    private readonly catalogue: CatalogueSnapshotService,
    private readonly meter: RequestMeter,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  /** A client that leaves once the inputs went upstream is billed all the same (upstream-billing.ts). */
  async embed(call: EmbeddingsCall): Promise<EmbeddingListDto> {
    const prepared = this.prepare(call);
    const { body } = call;
    const admitted = await this.admit(prepared, call);
    const billing = new UpstreamCallBilling(call.signal, this.settings.env.UPSTREAM_TIMEOUT_MS);
    let result: UpstreamEmbeddingResult;
    let promptTokens: number;
    let meta: ChargedUsage;
    try {
      // Counted only now that the key has been admitted: a key that cannot pay costs no tokenizer time.
      await assertWithinContext(prepared.model, prepared.inputs);
      result = await billing.callWithFallback(
        this.fallback,
        prepared.targets,
        (target, signal) =>
          // embeddingSources kept only sources whose kind has an adapter.
          embeddingsAdapterFor(target.definition.kind)!.embed(
            target,
            // A null optional field (some clients send them) means absent.
            { model: target.model, input: prepared.inputs, dimensions: body.dimensions ?? undefined, user: body.user ?? undefined },
            { timeoutMs: this.settings.env.UPSTREAM_TIMEOUT_MS, signal },
          ),
        () => admitted.settle({ input_tokens: countedInputTokens(prepared.inputs) }),
      );
      promptTokens = promptTokensOf(result, prepared.inputs);
      meta = admitted.settle({ input_tokens: promptTokens });
    } finally {
      billing.close();
      admitted.finish();
    }
    return {
      object: 'list',
      data: result.embeddings.map((vector, index) => ({ object: 'embedding', index, embedding: encodeEmbedding(vector, body.encoding_format) })),
      model: prepared.model.id,
      usage: { prompt_tokens: promptTokens, total_tokens: promptTokens },
      meta: { usage: meta },
    };
  }

  private prepare(call: EmbeddingsCall): PreparedEmbeddings {
    const { model, revision } = this.catalogue.resolveModel(call.body.model);
    assertEmbeddingModel(model);
    assertDimensions(model, call.body.dimensions);
    const inputs = inputList(call.body.input);
    const pinned = call.body.provider !== undefined && call.body.provider.toLowerCase() !== 'auto';
    const sources = embeddingSources(model, selectSources(model, call.body.provider), pinned);
    return { model, revision, targets: planTargets(model, sources, this.settings), inputs };
  }

  /**
   * Rate limits and credits, holding the most the request can cost: no text has more tokens
   * than UTF-8 bytes, and a token array is its length.
   */
  private admit(prepared: PreparedEmbeddings, call: EmbeddingsCall): Promise<AdmittedRequest> {
    const inputTokensCeiling = (prepared.inputs as Array<string | number[]>).reduce((sum, input) => sum + (typeof input === 'string' ? Buffer.byteLength(input) : input.length), 0);
    return this.meter.admit(
      { requestId: call.requestId, auth: call.auth, endpoint: 'embeddings', model: prepared.model, catalogueRevision: prepared.revision },
      { input_tokens: inputTokensCeiling },
    );
  }
}

/** The upstream's count when it reports one; else the gateway tokenizer's (Gemini reports none), so nothing goes unbilled. */
function promptTokensOf(result: UpstreamEmbeddingResult, inputs: ReadonlyArray<string | number[]>): number {
  const reported = result.usage?.prompt_tokens;
  if (reported !== undefined && Number.isInteger(reported) && reported >= 0) return reported;
  return countedInputTokens(inputs);
}

function countedInputTokens(inputs: ReadonlyArray<string | number[]>): number {
  return inputs.reduce((sum, input) => sum + inputTokens(input), 0);
}
