import { HttpStatus, Inject, Injectable } from '@nestjs/common';
import type { CatalogueModel, ChatCompletionDto, ChatCompletionRequestDto, UsageDto } from '@igw/contracts';
import { countTokens, estimatePromptTokens, microToCredits, priceUsage } from '@igw/domain';
import { GatewayException, SERVICE_SETTINGS, type AuthenticatedKey, type ServiceSettings } from '@igw/platform';
import { chatAdapterFor, planRoute, type UpstreamChatCompletion, type UpstreamChatRequest } from '@igw/providers';
import { CatalogueSnapshotService } from '../catalogue/catalogue-snapshot.service';
import { UsageRecorder } from '../usage/usage-recorder.service';
import { isRetriableUpstreamError, toClientError } from './upstream-error.mapper';

const CHAT_ENDPOINT_KIND = 'chat-completions';

export interface ChatCall {
  requestId: string;
  auth: AuthenticatedKey;
  body: ChatCompletionRequestDto;
  signal?: AbortSignal;
}

@Injectable()
export class ChatService {
  constructor(
    private readonly catalogue: CatalogueSnapshotService,
    private readonly usage: UsageRecorder,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  async complete(call: ChatCall): Promise<ChatCompletionDto> {
    const index = this.catalogue.current;
    if (!index) throw new GatewayException(HttpStatus.SERVICE_UNAVAILABLE, 'Service Unavailable: the model catalogue is not loaded yet. Retry shortly.');
    const model = index.resolve(call.body.model);
    if (!model) throw new GatewayException(HttpStatus.NOT_FOUND, `Not Found: no model named '${call.body.model}' in the catalogue.`);
    if (model.type.split('/')[1] !== CHAT_ENDPOINT_KIND) {
      throw new GatewayException(HttpStatus.BAD_REQUEST, `${'Body validation error!'} model: '${model.id}' is a ${model.type} model, not a chat model.`);
    }

    const completion = await this.callUpstream(model, call);
    const usage = usageOf(completion, call.body);
    const units = { input_tokens: usage.prompt_tokens, output_tokens: usage.completion_tokens };
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
      catalogueRevision: index.revision,
      prices: model.pricing?.units ?? [],
      occurredAt: new Date().toISOString(),
    });
    return {
      id: completion.id,
      object: 'chat.completion',
      created: completion.created,
      model: model.id,
      choices: completion.choices.map((choice) => ({
        index: choice.index,
        message: choice.message,
        finish_reason: choice.finish_reason as ChatCompletionDto['choices'][number]['finish_reason'],
        logprobs: (choice.logprobs ?? null) as Record<string, unknown> | null,
      })),
      usage,
      meta: { usage: { credits_used: microToCredits(priced.creditsMicro), usd_spent: Number(priced.usd) } },
    };
  }

  /** Tries the model's sources in order, moving on only for failures another source may not have. */
  private async callUpstream(model: CatalogueModel, call: ChatCall): Promise<UpstreamChatCompletion> {
    const plan = planRoute(model.routing.sources, this.settings.providers);
    if (plan.targets.length === 0) {
      throw new GatewayException(
        HttpStatus.SERVICE_UNAVAILABLE,
        `Service Unavailable: no upstream is configured for model '${model.id}'. Set ${plan.missing.join(' or ')}.`,
      );
    }
    const { provider: _pin, ...body } = call.body;
    let lastError: unknown;
    for (const target of plan.targets) {
      const request: UpstreamChatRequest = { ...(body as Omit<ChatCompletionRequestDto, 'provider'>), model: target.model, stream: false };
      try {
        return await chatAdapterFor(target.definition.kind).chat(target, request, {
          timeoutMs: this.settings.env.UPSTREAM_TIMEOUT_MS,
          signal: call.signal,
        });
      } catch (error) {
        lastError = error;
        if (!isRetriableUpstreamError(error)) break;
      }
    }
    throw toClientError(lastError);
  }
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
