import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import type { CatalogueModel, ChatCompletionDto, ChatCompletionRequestDto, UsageDto } from '@igw/contracts';
import { chatUnits, countTokens, estimatePromptTokens, microToCredits, priceUsage } from '@igw/domain';
import { GatewayException, SERVICE_SETTINGS, type AuthenticatedKey, type ServiceSettings } from '@igw/platform';
import {
  chatAdapterFor,
  CircuitBreaker,
  planRoute,
  runWithFallback,
  type RoutePlan,
  type UpstreamChatCompletion,
  type UpstreamUsage,
} from '@igw/providers';
import { CatalogueSnapshotService } from '../catalogue/catalogue-snapshot.service';
import { UsageRecorder } from '../usage/usage-recorder.service';
import { assertChatModel, assertRolesAllowed, assertWithinModelLimits, selectSources, upstreamRequest } from './chat-request';
import { chatStreamEvents } from './chat-stream';
import { toClientError } from './upstream-error.mapper';

/** A `retry-after` up to this long is waited for; longer ones move on to the next source. */
const RETRY_AFTER_CAP_MS = 2_000;

export interface ChatCall {
  requestId: string;
  auth: AuthenticatedKey;
  body: ChatCompletionRequestDto;
  /** Size of the request body, for the cheap context-length pre-check. */
  bodyBytes: number;
  signal: AbortSignal;
}

interface PreparedChat {
  model: CatalogueModel;
  revision: number;
  targets: RoutePlan['targets'];
}

@Injectable()
export class ChatService {
  private readonly breaker = new CircuitBreaker();

  constructor(
    private readonly catalogue: CatalogueSnapshotService,
    private readonly usage: UsageRecorder,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  async complete(call: ChatCall): Promise<ChatCompletionDto> {
    const prepared = this.prepare(call);
    const completion = await this.withFallback(prepared, call, (target) =>
      chatAdapterFor(target.definition.kind).chat(target, upstreamRequest(call.body, target.model), this.callOptions(call)),
    );
    const usage = usageOf(completion, call.body);
    const meta = this.settle(prepared, call, usage);
    return {
      id: completion.id,
      object: 'chat.completion',
      created: completion.created,
      model: prepared.model.id,
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

  /**
   * Opens the stream on the first source that accepts it (falling back only before anything
   * was sent) and returns its server-sent events.
   */
  async openStream(call: ChatCall): Promise<AsyncGenerator<string>> {
    const prepared = this.prepare(call);
    const chunks = await this.withFallback(prepared, call, (target) =>
      chatAdapterFor(target.definition.kind).stream(target, upstreamRequest(call.body, target.model), this.callOptions(call)),
    );
    return chatStreamEvents(chunks, {
      modelId: prepared.model.id,
      includeUsage: call.body.stream_options?.include_usage === true,
      messages: call.body.messages,
      settle: ({ usage }) => this.settle(prepared, call, usage),
      describeError: (error) => {
        const mapped = toClientError(error);
        return mapped instanceof GatewayException ? mapped.message : 'The upstream stream failed.';
      },
    });
  }

  private prepare(call: ChatCall): PreparedChat {
    const index = this.catalogue.current;
    if (!index) throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'Service Unavailable: the model catalogue is not loaded yet. Retry shortly.');
    const model = index.resolve(call.body.model);
    if (!model) throw new GatewayException(HttpStatus.NOT_FOUND, `Not Found: no model named '${call.body.model}' in the catalogue.`);
    assertChatModel(model);
    assertRolesAllowed(model, call.body.messages);
    assertWithinModelLimits(model, call.body, call.bodyBytes);
    const plan = planRoute(selectSources(model, call.body.provider), this.settings.providers);
    if (plan.targets.length === 0) {
      throw new GatewayException(
        HttpStatus.SERVICE_UNAVAILABLE,
        `Service Unavailable: no upstream is configured for model '${model.id}'. Set ${plan.missing.join(' or ')}.`,
      );
    }
    // The model (and so its prices) is fixed here: a price change applies to requests that start after it.
    return { model, revision: index.revision, targets: plan.targets };
  }

  private async withFallback<T>(prepared: PreparedChat, call: ChatCall, attempt: (target: PreparedChat['targets'][number]) => Promise<T>): Promise<T> {
    try {
      return await runWithFallback(prepared.targets, attempt, { breaker: this.breaker, retryAfterCapMs: RETRY_AFTER_CAP_MS, signal: call.signal });
    } catch (error) {
      throw toClientError(error);
    }
  }

  private callOptions(call: ChatCall) {
    return { timeoutMs: this.settings.env.UPSTREAM_TIMEOUT_MS, signal: call.signal };
  }

  /** Prices the usage with the prices of the request's start and records it for the ledger. */
  private settle(prepared: PreparedChat, call: ChatCall, usage: UpstreamUsage): { credits_used: number; usd_spent: number } {
    const { model } = prepared;
    const pricedUnits = new Set((model.pricing?.units ?? []).map((unit) => unit.unit));
    const units = chatUnits(usage, pricedUnits);
    const priced = priceUsage(model.pricing, units, this.settings.env.CREDITS_PER_USD);
    this.usage.record({
      requestId: call.requestId,
      accountId: call.auth.accountId,
      keyId: call.auth.keyId,
      model: model.id,
      endpoint: 'chat.completions',
      units,
      creditsMicro: priced.creditsMicro.toString(),
      usd: priced.usd,
      catalogueRevision: prepared.revision,
      prices: model.pricing?.units ?? [],
      occurredAt: new Date().toISOString(),
    });
    return { credits_used: microToCredits(priced.creditsMicro), usd_spent: Number(priced.usd) };
  }
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
  const completionTokens = completion.choices.reduce((sum, choice) => sum + countTokens(choice.message.content ?? ''), 0);
  return { prompt_tokens: prompt, completion_tokens: completionTokens, total_tokens: prompt + completionTokens };
}
