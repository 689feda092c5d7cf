import { Inject, Injectable, Logger } from '@nestjs/common';
import type { AuthenticatedKey, CatalogueModel, ChatCompletionDto, ChatCompletionRequestDto, UsageDto } from '@igw/contracts';
import type { JsonSource } from '@igw/json';
import { chatUnits } from '@igw/domain';
import { GatewayException, type RequestContext } from '@igw/http';
import { SERVICE_SETTINGS, type ServiceSettings } from '@igw/config';
import { providerKind, wireApiOf, type CancelSignal, type ChunkStream, type NativeAnswer, type StreamedChunk, type UpstreamChatCompletion, type UpstreamUsage } from '@igw/providers';
import { chatPromptTexts, countEachOffLoop, whenCounted } from '@igw/tokenizer';
import type { AdmittedRequest } from '../paid-requests/admitted-request';
import type { RequestHold } from '../limits/request-admission';
import { PaidRequestPipeline, type FallbackSteps, type RequestPlan } from '../paid-requests/paid-request-pipeline';
import { planTargets, selectSources, upstreamTimeoutMsOf, type UpstreamTarget } from '../paid-requests/upstream-route';
import { toClientError } from '../paid-requests/upstream-error.mapper';
import type { ChargedUsage } from '../usage/usage-charging';
import {
  assertCacheLifetimesPriced,
  assertOperatorAccountFields,
  assertOutputWithinModelLimit,
  assertPromptFitsContext,
  assertRolesAllowed,
  chatCostCeilingUnits,
  pricedAtServiceTier,
  upstreamRequest,
} from './chat-request';
import { chatStreamEvents, type ChatStreamOptions } from './chat-stream';
import { answeredRouteMissing, NATIVE_API_ABSENCE_MS, NativeApiAbsences } from './native-api-absence';
import { isNativeOpened, NativeReply, nativeStreamEvents, type NativeOpened, type NativeUpstream } from './native-upstream';
import { cachedCompletion, completionOfCached, isCachedChatAnswer, StreamRecorder, streamOfCached, type CachedChatAnswer } from '../response-cache/cached-chat-answer';
import { AnswerCache, type CacheTurn } from '../response-cache/answer-cache';

export interface ChatCall {
  requestId: string;
  /** The HTTP request's context, for the access log and metrics. */
  context?: RequestContext;
  auth: AuthenticatedKey;
  body: ChatCompletionRequestDto;
  /** The client's own JSON text of `body.messages`, when the route kept it (a long conversation), to send upstream in their place while the two agree. */
  messagesJson?: JsonSource;
  /** Size of the request body, for the cheap context-length pre-check. */
  bodyBytes: number;
  signal: CancelSignal;
  /** The ledger's name of the API called, when another API front runs the request (default `chat.completions`). */
  endpoint?: string;
  /** The front's native path, for the sources that speak its API (native-upstream.ts). */
  native?: NativeUpstream;
  /** Its slot and first hold, when its front admitted it before its full cost was known (PaidRequestPipeline.admitFirst). */
  firstHold?: RequestHold;
  /** The request's `Cache-Control` header, for the response cache. */
  cacheControl?: string | string[];
  /** Whether the response cache may answer it (chat completions; fronts that say so). */
  cacheable?: boolean;
}

/** A whole answer: a chat completion, or a native one. */
type WholeAnswer = UpstreamChatCompletion | { native: NativeAnswer };

/** How a stream's chunks become the client's server-sent events: chat's own, or another API front's. */
export type StreamEvents = (stream: ChunkStream, options: ChatStreamOptions) => AsyncGenerator<string>;

/** The ledger's name of chat completions, and the fallback every API front over chat shares. */
const CHAT_COMPLETIONS = 'chat.completions';

interface ChatPlan extends RequestPlan {
  targets: readonly UpstreamTarget[];
  /** The most the request can cost, in priced units: what admission holds. */
  ceiling: Record<string, number> & { output_tokens: number };
}

@Injectable()
export class ChatService {
  private readonly logger = new Logger('ChatService');
  /** The sources that answered a front's native API as missing lately (this replica's own memory). */
  private readonly nativeApiAbsences = new NativeApiAbsences();

  constructor(
    private readonly pipeline: PaidRequestPipeline,
    private readonly answers: AnswerCache,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
  ) {}

  /**
   * Runs the request and hands its answer to `deliver`, which sends it just after the
   * request's slot and hold are given back (paid-request-pipeline.ts). A client that leaves
   * once the prompt went upstream is billed all the same (upstream-billing.ts).
   */
  async complete(call: ChatCall, deliver: (completion: ChatCompletionDto) => void, deliverNative?: (answer: unknown) => void): Promise<void> {
    const plan = this.plan(call);
    const cached = await this.consultCache(call, plan);
    if (cached?.status === 'hit') {
      const units = chatUnits(cached.answer.usage, pricedUnitsOf(plan.model));
      const hit = await this.answers.admitHit(call, plan, units);
      let answer: ChatCompletionDto;
      try {
        answer = completionOf(completionOfCached(cached.answer, plan.model.id), plan.model, cached.answer.usage, withSearches(hit.charge(), units));
      } finally {
        hit.release();
      }
      if (!call.signal.aborted) deliver(answer);
      return;
    }
    const keep = cached?.status === 'miss' ? cached.keep : undefined;
    const native = call.native;
    await this.pipeline.run<WholeAnswer, ChatCompletionDto | NativeReply>(call, plan, {
      ...this.upstreamSteps<WholeAnswer>(call, plan, (target, signal) => {
        const options = this.callOptions(plan, target, signal);
        return this.nativeOrTranslated<WholeAnswer>(
          native,
          target,
          () => native!.complete(target, options).then((answer) => ({ native: answer })),
          () => providerKind(target.definition.kind).chat.chat(target, upstreamRequest(call.body, target.model, call.messagesJson), options),
        );
      }),
      settle: (result, admitted) => {
        if ('native' in result) return new NativeReply(native!.answer(result.native.body, settle(plan.model, result.native.usage, admitted), plan.model.id));
        const usage = usageOf(result, call.body);
        const answer = (counted: UpstreamUsage) => {
          keep?.(cachedCompletion(result, counted));
          return completionOf(result, plan.model, counted, settle(plan.model, counted, admitted));
        };
        return whenCounted(usage, answer);
      },
      deliver: (answer, clientGone) => {
        if (clientGone) return;
        if (answer instanceof NativeReply) (deliverNative ?? deliver)(answer.body as ChatCompletionDto);
        else deliver(answer);
      },
    });
  }

  /**
   * Opens the stream on the first source that accepts it (falling back only before anything
   * was sent) and returns its server-sent events. The call stops with its client: a client
   * that leaves, while the stream opens or half-way, ends the upstream call and is billed for
   * what was generated up to then (upstream-billing.ts).
   */
  async openStream(call: ChatCall, streamEvents: StreamEvents = chatStreamEvents): Promise<AsyncGenerator<string>> {
    const plan: ChatPlan = { ...this.plan(call), whenClientLeaves: { stopsWithClient: true } };
    const cached = await this.consultCache(call, plan);
    if (cached?.status === 'hit') return this.streamFromCache(call, plan, cached.answer, streamEvents);
    const recording = cached?.status === 'miss' && cached.keep ? new RecordedStream(cached.keep) : undefined;
    const native = call.native;
    const opened = await this.pipeline.open<ChunkStream | NativeOpened>(
      call,
      plan,
      this.upstreamSteps<ChunkStream | NativeOpened>(call, plan, (target, signal) => {
        const options = this.callOptions(plan, target, signal);
        return this.nativeOrTranslated<ChunkStream | NativeOpened>(
          native,
          target,
          () => native!.stream(target, options).then((stream) => ({ native: stream })),
          () => providerKind(target.definition.kind).chat.stream(target, upstreamRequest(call.body, target.model, call.messagesJson), options),
        );
      }),
    );
    const options: ChatStreamOptions = {
      modelId: plan.model.id,
      includeUsage: call.body.stream_options?.include_usage === true,
      prompt: call.body,
      // The stream's end, however it came (its client gone included): the request is over for its limits and hold.
      settle: ({ usage }) => {
        try {
          recording?.settled(usage);
          return settle(plan.model, usage, opened.admitted);
        } finally {
          opened.release();
        }
      },
      describeError: (error) => {
        const mapped = toClientError(error);
        return mapped instanceof GatewayException ? mapped.message : 'The upstream stream failed.';
      },
    };
    const result = opened.result;
    if (isNativeOpened(result)) return nativeStreamEvents(notingFirstChunk(result.native, opened.admitted), options, native!.writer(plan.model.id));
    return streamEvents(notingFirstChunk(recording ? recording.of(result) : result, opened.admitted), options);
  }

  /**
   * What the response cache says of the call: a stored answer, or a miss whose answer may be
   * kept; undefined when the cache is off for the key. A miss is marked on the usage event.
   */
  private async consultCache(call: ChatCall, plan: ChatPlan): Promise<CacheTurn<CachedChatAnswer> | undefined> {
    const cacheable = call.cacheable === true && answerCanRepeat(call.body);
    const turn = await this.answers.consult({ auth: call.auth, cacheControl: call.cacheControl, cacheable, context: call.context }, plan.endpoint, plan.model, call.body, isCachedChatAnswer);
    if (turn?.status === 'miss' && turn.keep) plan.cache = { status: 'miss' };
    return turn;
  }

  /** A stored answer as the stream the client asked for, through the same events a live one takes. */
  private async streamFromCache(call: ChatCall, plan: ChatPlan, answer: CachedChatAnswer, streamEvents: StreamEvents): Promise<AsyncGenerator<string>> {
    const units = chatUnits(answer.usage, pricedUnitsOf(plan.model));
    const hit = await this.answers.admitHit(call, plan, units);
    return streamEvents(streamOfCached(answer, plan.model.id), {
      modelId: plan.model.id,
      includeUsage: call.body.stream_options?.include_usage === true,
      prompt: call.body,
      settle: () => {
        try {
          return withSearches(hit.charge(), units);
        } finally {
          hit.release();
        }
      },
      describeError: () => 'The stored answer could not be replayed.',
    });
  }

  /**
   * One attempt on one source: the front's native call where the source takes it, else the chat
   * translation. A source that answers the native route as missing (404 or 405, before anything
   * streamed) is sent the translation within the same attempt, so the refused call is neither
   * billed nor a fallback, and it is remembered for a while (logged once), so its next requests
   * go straight to the translation.
   */
  private nativeOrTranslated<T>(native: NativeUpstream | undefined, target: UpstreamTarget, callNative: () => Promise<T>, callTranslated: () => Promise<T>): Promise<T> {
    const api = native?.apiMayBeMissing;
    if (!native?.takes(target) || (api !== undefined && this.nativeApiAbsences.lacks(api, target))) {
      native?.beforeAttempt?.(false);
      return callTranslated();
    }
    native.beforeAttempt?.(true);
    if (api === undefined) return callNative();
    return callNative().catch((error: unknown) => {
      if (!answeredRouteMissing(error)) throw error;
      if (this.nativeApiAbsences.remember(api, target)) {
        this.logger.warn(
          `Source ${target.provider} (model ${target.model}) answered ${(error as { status: number }).status} to the ${api}: sending it chat completions in its place for ${NATIVE_API_ABSENCE_MS / 60_000} minutes, then trying the ${api} again.`,
        );
      }
      native.beforeAttempt?.(false);
      return callTranslated();
    });
  }

  /** The context is counted after admission, before the call; a prompt an upstream processed is billed by estimate if the call fails. */
  private upstreamSteps<T>(call: ChatCall, plan: ChatPlan, send: FallbackSteps<T>['send']): FallbackSteps<T> {
    return {
      beforeCall: () => assertPromptFitsContext(plan.model, call.body, call.bodyBytes),
      send,
      unreadUnits: (unread) => {
        const output = unread === 'answer-unread' ? plan.ceiling.output_tokens : 0;
        return whenCounted(estimatedUsage(call.body, output), (usage) => chatUnits(usage, pricedUnitsOf(plan.model)));
      },
    };
  }

  private plan(call: ChatCall): ChatPlan {
    const { model: entry, revision } = this.pipeline.resolveModel(call.body.model, 'chat.completions');
    assertRolesAllowed(entry, call.body.messages);
    assertOutputWithinModelLimit(entry, call.body);
    assertOperatorAccountFields(call.body, this.settings.env);
    // Held, billed and journalled at the prices of the service tier asked for.
    const model = pricedAtServiceTier(entry, call.body);
    assertCacheLifetimesPriced(model, call.body);
    const targets = planTargets(entry, selectSources(entry, call.body.provider), this.settings);
    const ceiling = chatCostCeilingUnits(
      model,
      call.body,
      call.bodyBytes,
      targets.map((target) => wireApiOf(target.definition.kind, target.model)),
    );
    // A native call may run what the chat request does not ask for (the provider's own web search).
    for (const [unit, most] of Object.entries(call.native?.extraCeiling ?? {})) ceiling[unit] = Math.max(ceiling[unit] ?? 0, most);
    return { endpoint: call.endpoint ?? CHAT_COMPLETIONS, fallbackGroup: CHAT_COMPLETIONS, model, catalogueRevision: revision, targets, ceiling, prompt: call.body.messages };
  }

  private callOptions(plan: ChatPlan, target: UpstreamTarget, signal: CancelSignal) {
    return { timeoutMs: upstreamTimeoutMsOf(plan.model, this.settings, target), signal };
  }
}

/** A spoken answer carries audio that expires upstream: it is never stored. */
function answerCanRepeat(body: ChatCompletionRequestDto): boolean {
  return !body.audio && !(body.modalities ?? []).includes('audio');
}

/** Largest stream kept for the cache, in characters of its deltas; a longer one is not stored. */
const RECORDED_STREAM_CHARS = 4 * 1024 * 1024;

/**
 * A stream on its way to the client, kept for the response cache: stored once it both ended as
 * the upstream ended it (not cut by its client or a failure) and was settled.
 */
class RecordedStream {
  private readonly recorder = new StreamRecorder(RECORDED_STREAM_CHARS);
  private usage: UpstreamUsage | undefined;
  private ended = false;

  constructor(private readonly keep: (answer: CachedChatAnswer) => void) {}

  of(stream: ChunkStream): ChunkStream {
    return {
      [Symbol.asyncIterator]: () => {
        const iterator = stream[Symbol.asyncIterator]();
        return {
          next: () =>
            iterator.next().then((result: IteratorResult<readonly StreamedChunk[]>) => {
              if (result.done) {
                this.ended = true;
                this.keepWhenComplete();
              } else this.recorder.read(result.value);
              return result;
            }),
          return: (value?: unknown) => iterator.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined }),
        } as AsyncIterator<readonly StreamedChunk[]>;
      },
    };
  }

  settled(usage: UpstreamUsage): void {
    this.usage = usage;
    this.keepWhenComplete();
  }

  private keepWhenComplete(): void {
    if (!this.ended || !this.usage) return;
    const answer = this.recorder.answer(this.usage);
    this.usage = undefined;
    if (answer) this.keep(answer);
  }
}

/**
 * The stream as it came, telling `admitted` when its first chunk arrives (the time to first
 * token); past the first chunk each read is the stream's own, with nothing added.
 */
function notingFirstChunk<C>(chunks: AsyncIterable<C>, admitted: AdmittedRequest): AsyncIterable<C> {
  return {
    [Symbol.asyncIterator]() {
      const iterator = chunks[Symbol.asyncIterator]();
      let first = true;
      return {
        next() {
          if (!first) return iterator.next();
          first = false;
          return iterator.next().then((result) => {
            if (!result.done) admitted.firstChunk();
            return result;
          });
        },
        return: (value?: unknown) => iterator.return?.(value) ?? Promise.resolve({ done: true as const, value: undefined }),
      } as AsyncIterator<C>;
    },
  };
}

/** The client's answer: the upstream's choices with finish reasons in the spec's set, the usage and what it cost. */
function completionOf(completion: UpstreamChatCompletion, model: CatalogueModel, upstreamUsage: UpstreamUsage, meta: ChargedUsage): ChatCompletionDto {
  // The search count is the gateway's own field: it shows in meta.usage, not in OpenAI's usage.
  const { web_search_calls: _searches, ...usage } = upstreamUsage;
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
    usage: usage as UsageDto,
    meta: { usage: meta },
    ...(completion.service_tier !== undefined ? { service_tier: completion.service_tier } : {}),
    ...(completion.system_fingerprint !== undefined ? { system_fingerprint: completion.system_fingerprint } : {}),
  } as ChatCompletionDto;
}

/**
 * Charges the usage in the units the model's price list names (cached tokens only where
 * priced). meta.usage also names the web searches charged, when there were any.
 */
function settle(model: CatalogueModel, usage: UpstreamUsage, admitted: AdmittedRequest): ChargedUsage & { web_search_calls?: number } {
  const units = chatUnits(usage, pricedUnitsOf(model));
  return withSearches(admitted.settle(units), units);
}

function withSearches(charged: ChargedUsage, units: Record<string, number>): ChargedUsage & { web_search_calls?: number } {
  return units.web_search_calls ? { ...charged, web_search_calls: units.web_search_calls } : charged;
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
function usageOf(completion: UpstreamChatCompletion, request: ChatCompletionRequestDto): UpstreamUsage | Promise<UpstreamUsage> {
  const reported = completion.usage;
  if (reported && Number.isInteger(reported.prompt_tokens) && Number.isInteger(reported.completion_tokens)) {
    return { ...reported, total_tokens: reported.prompt_tokens + reported.completion_tokens };
  }
  const generated: string[] = [];
  for (const { message } of completion.choices) {
    for (const text of [message.content, message.refusal, message.reasoning_content, message.reasoning, (message.audio as { transcript?: unknown } | undefined)?.transcript]) {
      if (typeof text === 'string') generated.push(text);
    }
    for (const call of (message.tool_calls as Array<{ function?: { name?: unknown; arguments?: unknown } }> | undefined) ?? []) {
      if (typeof call?.function?.name === 'string') generated.push(call.function.name);
      if (typeof call?.function?.arguments === 'string') generated.push(call.function.arguments);
    }
  }
  // Counted as one text, as a stream's generated text is (chat-stream.ts).
  return estimatedUsage(request, [generated.join('')], completion.usage?.web_search_calls);
}

/**
 * A tokenizer count of the whole prompt (text, tool schemas, images) with the `generated`
 * texts (or that many tokens): in the token counting workers when long, so an upstream that
 * reports no usage for a long prompt does not hold the event loop.
 */
function estimatedUsage(request: ChatCompletionRequestDto, generated: number | string[], webSearchCalls?: number): UpstreamUsage | Promise<UpstreamUsage> {
  const { texts, fixedTokens } = chatPromptTexts(request);
  const generatedTexts = typeof generated === 'number' ? [] : generated;
  const usageOf = (counts: number[]): UpstreamUsage => {
    let prompt = fixedTokens;
    for (let index = 0; index < texts.length; index++) prompt += counts[index];
    let completion = typeof generated === 'number' ? generated : 0;
    for (let index = texts.length; index < counts.length; index++) completion += counts[index];
    const usage: UpstreamUsage = { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
    if (webSearchCalls) usage.web_search_calls = webSearchCalls;
    return usage;
  };
  return whenCounted(countEachOffLoop([...texts, ...generatedTexts]), usageOf);
}
