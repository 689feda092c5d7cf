import { Inject, Injectable } from '@nestjs/common';
import type { AuthenticatedKey, CatalogueModel, CompletionRequestDto } from '@igw/contracts';
import { chatUnits } from '@igw/domain';
import { GatewayException, type RequestContext } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { completionTexts, openAiNativeCompletion, openAiNativeCompletionStream, type CancelSignal, type NativeEvent, type NativeEventStream, type UpstreamCompletionRequest, type UpstreamUsage } from '@igw/providers';
import { countEachOffLoop, whenCounted, type EstimableChatPrompt } from '@igw/tokenizer';
import { nativeStreamEvents, type NativeEventWriter } from '../chat/native-upstream';
import type { ChatStreamOptions } from '../chat/chat-stream';
import type { AdmittedRequest } from '../paid-requests/admitted-request';
import { PaidRequestPipeline, type RequestPlan } from '../paid-requests/paid-request-pipeline';
import { toClientError } from '../paid-requests/upstream-error.mapper';
import { upstreamTimeoutMsOf, type UpstreamTarget } from '../paid-requests/upstream-route';
import type { ChargedUsage } from '../usage/usage-charging';
import { assertCompletionBounds, assertPromptsFitContext, completionTargets, generatedChoices, promptList } from './completions-request';

export interface CompletionsCall {
  requestId: string;
  /** The HTTP request's context, for the access log and metrics. */
  context?: RequestContext;
  auth: AuthenticatedKey;
  body: CompletionRequestDto;
  bodyBytes: number;
  signal: CancelSignal;
}

/** What a request reads of its prompts, for its hold and for a count when no usage comes. */
interface PromptFacts {
  prompts: Array<string | number[]>;
  /** The texts a tokenizer counts: the text prompts and the suffix. */
  texts: string[];
  /** The tokens of the token-array prompts: their lengths. */
  tokenIds: number;
}

interface CompletionsPlan extends RequestPlan {
  targets: readonly UpstreamTarget[];
  ceiling: { input_tokens: number; output_tokens: number };
}

/**
 * POST /v1/completions, OpenAI's legacy text completions, through the paid-request pipeline
 * (admission, holds, fallback among the sources that serve it, the client-leaves rule, pricing,
 * ledger). The request goes upstream as it came, the model renamed; the answer, whole or
 * streamed, comes back as it came, with the catalogue's model id and `meta.usage`. Billed by
 * the upstream's usage, else by a tokenizer count of the prompts and of what was generated (an
 * echoed prompt is not generated); the hold is the body's bytes of input and, for every
 * completion generated (prompts × the larger of n and best_of), max_tokens (else the model's
 * output limit) of output.
 */
@Injectable()
export class CompletionsService {
  constructor(
    private readonly pipeline: PaidRequestPipeline,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  /** A whole answer, handed to `deliver` just after the request's slot and hold are given back. */
  async complete(call: CompletionsCall, deliver: (answer: Record<string, unknown>) => void): Promise<void> {
    const { plan, facts, upstreamBody } = this.plan(call);
    await this.pipeline.run(call, plan, {
      beforeCall: () => assertPromptsFitContext(plan.model, call.body, facts.prompts, call.bodyBytes),
      send: (target, signal) => openAiNativeCompletion(target, upstreamBody, { timeoutMs: upstreamTimeoutMsOf(plan.model, this.settings, target), signal }),
      unreadUnits: (unread) => whenCounted(estimatedUsage(facts, unread === 'answer-unread' ? plan.ceiling.output_tokens : []), (usage) => unitsOf(plan.model, usage)),
      settle: (result, admitted) => {
        const generated = completionTexts(result.body).map(({ index, text }) => withoutEcho(call.body, facts, index, text));
        const usage = result.usageReported ? result.usage : estimatedUsage(facts, [generated.join('')]);
        return whenCounted(usage, (counted) => ({ ...result.body, model: plan.model.id, meta: { usage: admitted.settle(unitsOf(plan.model, counted)) } }));
      },
      deliver: (answer, clientGone) => {
        if (!clientGone) deliver(answer);
      },
    });
  }

  /**
   * Opens the stream on the first source that takes it and returns its server-sent events. It
   * stops with its client, billed for what was generated up to then (upstream-billing.ts).
   */
  async openStream(call: CompletionsCall): Promise<AsyncGenerator<string>> {
    const { plan: whole, facts, upstreamBody } = this.plan(call);
    const plan: CompletionsPlan = { ...whole, whenClientLeaves: { stopsWithClient: true } };
    const choicesPerPrompt = call.body.n ?? 1;
    const echoed = call.body.echo === true ? (choice: number) => echoedPrompt(facts, Math.floor(choice / choicesPerPrompt)) : undefined;
    const opened = await this.pipeline.open<NativeEventStream>(call, plan, {
      beforeCall: () => assertPromptsFitContext(plan.model, call.body, facts.prompts, call.bodyBytes),
      send: (target, signal) => openAiNativeCompletionStream(target, upstreamBody, { timeoutMs: upstreamTimeoutMsOf(plan.model, this.settings, target), signal }, echoed),
      unreadUnits: () => whenCounted(estimatedUsage(facts, []), (usage) => unitsOf(plan.model, usage)),
    });
    const options: ChatStreamOptions = {
      modelId: plan.model.id,
      includeUsage: call.body.stream_options?.include_usage === true,
      prompt: estimablePrompt(facts),
      settle: ({ usage, reported }) => {
        try {
          const counted = reported ? usage : { ...usage, prompt_tokens: usage.prompt_tokens + facts.tokenIds };
          return opened.admitted.settle(unitsOf(plan.model, counted));
        } finally {
          opened.release();
        }
      },
      describeError: (error) => {
        const mapped = toClientError(error);
        return mapped instanceof GatewayException ? mapped.message : 'The upstream stream failed.';
      },
    };
    return nativeStreamEvents(notingFirstEvent(opened.result, opened.admitted), options, new CompletionsStreamWriter(plan.model.id, options.includeUsage));
  }

  private plan(call: CompletionsCall): { plan: CompletionsPlan; facts: PromptFacts; upstreamBody: UpstreamCompletionRequest } {
    const { body } = call;
    const { model, revision } = this.pipeline.resolveModel(body.model, 'completions');
    const prompts = promptList(body.prompt);
    assertCompletionBounds(model, body, prompts.length);
    const targets = completionTargets(model, body.provider, this.settings);
    const texts = prompts.filter((prompt): prompt is string => typeof prompt === 'string');
    if (typeof body.suffix === 'string') texts.push(body.suffix);
    const tokenIds = prompts.reduce((sum, prompt) => sum + (typeof prompt === 'string' ? 0 : prompt.length), 0);
    const perChoice = body.max_tokens ?? model.info.outputMax ?? model.info.contextLength ?? 0;
    // No prompt has more tokens than the body has bytes: a text has at most one per byte, a token id takes at least one.
    const ceiling = { input_tokens: call.bodyBytes, output_tokens: generatedChoices(body, prompts.length) * perChoice };
    // A null field means absent; `provider` is the gateway's own.
    const upstreamBody = Object.fromEntries(Object.entries(body).filter(([field, value]) => value !== null && value !== undefined && field !== 'provider')) as UpstreamCompletionRequest;
    return { plan: { endpoint: 'completions', model, catalogueRevision: revision, targets, ceiling, prompt: body.prompt }, facts: { prompts, texts, tokenIds }, upstreamBody };
  }
}

/** The prompt of a choice when the request echoes it and it is a text (a token array's echo cannot be matched). */
function echoedPrompt(facts: PromptFacts, promptIndex: number): string | undefined {
  const prompt = facts.prompts[promptIndex];
  return typeof prompt === 'string' ? prompt : undefined;
}

/** A choice's generated text: without the prompt that leads it when the request asked for echo. */
function withoutEcho(body: CompletionRequestDto, facts: PromptFacts, choice: number, text: string): string {
  if (body.echo !== true) return text;
  const prompt = echoedPrompt(facts, Math.floor(choice / (body.n ?? 1)));
  return prompt !== undefined && text.startsWith(prompt) ? text.slice(prompt.length) : text;
}

/** The prompts as the chat tokenizer estimate reads them (each text a message). */
function estimablePrompt(facts: PromptFacts): EstimableChatPrompt {
  return { messages: facts.texts.map((content) => ({ role: 'user', content })) };
}

/** A tokenizer count of the prompts (token arrays by their length) with the generated texts, or that many output tokens. */
function estimatedUsage(facts: PromptFacts, generated: number | string[]): UpstreamUsage | Promise<UpstreamUsage> {
  const generatedTexts = typeof generated === 'number' ? [] : generated;
  return whenCounted(countEachOffLoop([...facts.texts, ...generatedTexts]), (counts: number[]) => {
    const prompt = facts.tokenIds + counts.slice(0, facts.texts.length).reduce((sum, count) => sum + count, 0);
    const completion = typeof generated === 'number' ? generated : counts.slice(facts.texts.length).reduce((sum, count) => sum + count, 0);
    return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
  });
}

function unitsOf(model: CatalogueModel, usage: UpstreamUsage): Record<string, number> {
  return chatUnits(usage, new Set((model.pricing?.units ?? []).map((unit) => unit.unit)));
}

/** The stream as it came, telling `admitted` when its first events arrive (the time to first token). */
async function* notingFirstEvent(stream: NativeEventStream, admitted: AdmittedRequest): AsyncGenerator<readonly NativeEvent[]> {
  let first = true;
  for await (const batch of stream) {
    if (first) {
      first = false;
      admitted.firstChunk();
    }
    yield batch;
  }
}

/**
 * The `text_completion` chunks as they came, the model renamed to the catalogue id; the usage
 * chunk (always asked of the upstream, what the stream is billed by) only for a client that
 * asked for it, with `meta.usage`; then `data: [DONE]`. A failure half-way is an in-band error,
 * as chat streams report it.
 */
export class CompletionsStreamWriter implements NativeEventWriter {
  constructor(
    private readonly modelId: string,
    private readonly includeUsage: boolean,
  ) {}

  event(event: NativeEvent, meta: () => ChargedUsage | undefined): string {
    if (event.data === '[DONE]') return 'data: [DONE]\n\n';
    const chunk: Record<string, unknown> = { ...event.parsed, model: this.modelId };
    const charged = event.usage !== undefined ? meta() : undefined;
    if (!this.includeUsage) {
      if (event.usage !== undefined && (!Array.isArray(chunk.choices) || chunk.choices.length === 0)) return '';
      delete chunk.usage;
    } else if (charged !== undefined) chunk.meta = { usage: charged };
    return `data: ${JSON.stringify(chunk)}\n\n`;
  }

  failure(message: string): string {
    return `data: ${JSON.stringify({ error: { message, type: 'upstream_error' } })}\n\n`;
  }
}
