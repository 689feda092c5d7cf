import { Inject, Injectable } from '@nestjs/common';
import type { CatalogueModel, ChatCompletionDto, ChatCompletionRequestDto, UsageDto } from '@igw/contracts';
import { chatUnits, countTokens, estimatePromptTokens } from '@igw/domain';
import { GatewayException, SERVICE_SETTINGS, type AuthenticatedKey, type ServiceSettings } from '@igw/platform';
import { chatAdapterFor, type CancelSignal, type UpstreamChatChunk, type UpstreamChatCompletion, type UpstreamUsage } from '@igw/providers';
import { CatalogueSnapshotService } from '../catalogue/catalogue-snapshot.service';
import { RequestMeter, type AdmittedRequest, type ChargedUsage } from '../limits/request-meter';
import { planTargets, selectSources, UpstreamFallback, type UpstreamTarget } from '../upstream/upstream-route';
import { toClientError } from '../upstream/upstream-error.mapper';
import { assertChatModel, assertRolesAllowed, assertWithinModelLimits, chatCostCeilingUnits, upstreamRequest } from './chat-request';
import { chatStreamEvents } from './chat-stream';

export interface ChatCall {
  requestId: string;
  auth: AuthenticatedKey;
  body: ChatCompletionRequestDto;
  /** Size of the request body, for the cheap context-length pre-check. */
  bodyBytes: number;
  signal: CancelSignal;
}

interface PreparedChat {
  model: CatalogueModel;
  revision: number;
  targets: UpstreamTarget[];
}

@Injectable()
export class ChatService {
  private readonly fallback = new UpstreamFallback();

  constructor(
    private readonly catalogue: CatalogueSnapshotService,
    private readonly meter: RequestMeter,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  /**
   * Runs the request and hands its answer to `deliver`, which sends it. The request's slot and
   * hold are given back just after, in the same turn of the event loop: the answer leaves
   * ~10 µs sooner at concurrency 1, and no later request of the client can be admitted in
   * between (it cannot arrive before this turn is over).
   */
  async complete(call: ChatCall, deliver: (completion: ChatCompletionDto) => void): Promise<void> {
    const prepared = this.prepare(call);
    const admitted = await this.admit(prepared, call);
    try {
      const completion = await this.fallback.run(
        prepared.targets,
        (target) => chatAdapterFor(target.definition.kind).chat(target, upstreamRequest(call.body, target.model), this.callOptions(call)),
        call.signal,
      );
      const usage = usageOf(completion, call.body);
      deliver(completionOf(completion, prepared.model, usage, settle(prepared.model, usage, admitted)));
    } finally {
      admitted.finish();
    }
  }

  /**
   * Opens the stream on the first source that accepts it (falling back only before anything
   * was sent) and returns its server-sent events.
   */
  async openStream(call: ChatCall): Promise<AsyncGenerator<string>> {
    const prepared = this.prepare(call);
    const admitted = await this.admit(prepared, call);
    let chunks: AsyncIterable<UpstreamChatChunk>;
    try {
      chunks = await this.fallback.run(
        prepared.targets,
        (target) => chatAdapterFor(target.definition.kind).stream(target, upstreamRequest(call.body, target.model), this.callOptions(call)),
        call.signal,
      );
    } catch (error) {
      admitted.finish();
      throw error;
    }
    return chatStreamEvents(chunks, {
      modelId: prepared.model.id,
      includeUsage: call.body.stream_options?.include_usage === true,
      messages: call.body.messages,
      // The stream's end, however it came: the request is over for its limits and hold.
      settle: ({ usage }) => {
        try {
          return settle(prepared.model, usage, admitted);
        } finally {
          admitted.finish();
        }
      },
      describeError: (error) => {
        const mapped = toClientError(error);
        return mapped instanceof GatewayException ? mapped.message : 'The upstream stream failed.';
      },
    });
  }

  private prepare(call: ChatCall): PreparedChat {
    const { model, revision } = this.catalogue.resolveModel(call.body.model);
    assertChatModel(model);
    assertRolesAllowed(model, call.body.messages);
    assertWithinModelLimits(model, call.body, call.bodyBytes);
    return { model, revision, targets: planTargets(model, selectSources(model, call.body.provider), this.settings) };
  }

  /** Rate limits and credits, with the request's most expensive outcome held until it finishes. */
  private admit(prepared: PreparedChat, call: ChatCall): Promise<AdmittedRequest> {
    return this.meter.admit(
      { requestId: call.requestId, auth: call.auth, endpoint: 'chat.completions', model: prepared.model, catalogueRevision: prepared.revision },
      chatCostCeilingUnits(prepared.model, call.body, call.bodyBytes),
    );
  }

  private callOptions(call: ChatCall) {
    return { timeoutMs: this.settings.env.UPSTREAM_TIMEOUT_MS, signal: call.signal };
  }
}

/** The client's answer: the upstream's choices with finish reasons in the spec's set, the usage and what it cost. */
function completionOf(completion: UpstreamChatCompletion, model: CatalogueModel, usage: UsageDto, meta: ChargedUsage): ChatCompletionDto {
  return {
    id: completion.id,
    object: 'chat.completion',
    created: completion.created,
    model: model.id,
    choices: completion.choices.map((choice) => ({
      index: choice.index,
      message: choice.message,
      finish_reason: normalizeFinishReason(choice.finish_reason),
      logprobs: (choice.logprobs ?? null) as Record<string, unknown> | null,
    })),
    usage,
    meta: { usage: meta },
    ...(completion.service_tier !== undefined ? { service_tier: completion.service_tier } : {}),
    ...(completion.system_fingerprint !== undefined ? { system_fingerprint: completion.system_fingerprint } : {}),
  } as ChatCompletionDto;
}

/** Charges the usage in the units the model's price list names (cached tokens only where priced). */
function settle(model: CatalogueModel, usage: UpstreamUsage, admitted: AdmittedRequest): ChargedUsage {
  return admitted.settle(chatUnits(usage, pricedUnitsOf(model)));
}

/** Per catalogue entry (entries are replaced, never changed, when the catalogue changes). */
const pricedUnitsByModel = new WeakMap<CatalogueModel, ReadonlySet<string>>();

function pricedUnitsOf(model: CatalogueModel): ReadonlySet<string> {
  let units = pricedUnitsByModel.get(model);
  if (!units) {
    units = new Set((model.pricing?.units ?? []).map((unit) => unit.unit));
    pricedUnitsByModel.set(model, units);
  }
  return units;
}

const FINISH_REASONS = new Set(['stop', 'length', 'content_filter', 'tool_calls']);

/** Into the spec's set; OpenAI's legacy `function_call` is a tool call. */
function normalizeFinishReason(reason: string): ChatCompletionDto['choices'][number]['finish_reason'] {
  if (FINISH_REASONS.has(reason)) return reason as ChatCompletionDto['choices'][number]['finish_reason'];
  return reason === 'function_call' ? 'tool_calls' : 'stop';
}

/** The upstream's usage when it reports one; else a tokenizer count, so nothing goes unbilled. */
function usageOf(completion: UpstreamChatCompletion, request: ChatCompletionRequestDto): UsageDto {
  const reported = completion.usage;
  if (reported && Number.isInteger(reported.prompt_tokens) && Number.isInteger(reported.completion_tokens)) {
    return { ...reported, total_tokens: reported.prompt_tokens + reported.completion_tokens };
  }
  const prompt = estimatePromptTokens(request.messages);
  // A spoken answer's text is its audio transcript (as chat-stream.ts counts it).
  const text = (message: UpstreamChatCompletion['choices'][number]['message']) => message.content ?? (message.audio as { transcript?: string } | undefined)?.transcript ?? '';
  const completionTokens = completion.choices.reduce((sum, choice) => sum + countTokens(text(choice.message)), 0);
  return { prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens };
}
