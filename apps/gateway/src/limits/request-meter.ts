import { HttpStatus, Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { ErrorMessages, type AuthenticatedKey, type CatalogueModel } from '@igw/contracts';
import { microToCredits, priceUsage, promptTokensOf } from '@igw/domain';
import {
  endSpanWithError,
  GatewayException,
  modelLabel,
  SERVICE_SETTINGS,
  startClientSpan,
  startServerSpan,
  tracingEnabled,
  timedUpstreamAttempt,
  type RequestContext,
  type ServiceSettings,
} from '@igw/platform';
import type { Span } from '@opentelemetry/api';
import { creditsCharged, genAiOperation, timeToFirstToken, tokensCounted } from '../upstream/gateway-metrics';
import { UsageRecorder } from '../usage/usage-recorder.service';
import { InMemoryLimitStore } from './in-memory-limit-store';
import { LIMIT_STORE } from './limit-store.provider';
import type { Admission, AdmissionResult, LimitStore } from './limit-store.types';

/** A billable request, as the meter sees it. */
export interface MeteredCall {
  requestId: string;
  auth: AuthenticatedKey;
  /** The ledger's name for the endpoint, e.g. `chat.completions`. */
  endpoint: string;
  /** The entry as read when the request started: its prices are the ones charged. */
  model: CatalogueModel;
  catalogueRevision: number;
  /** The HTTP request's context: what it ran and used goes there for its access-log line. */
  context?: RequestContext;
}

/** What a response's `meta.usage` says; the same numbers reach the ledger. */
export interface ChargedUsage {
  credits_used: number;
  usd_spent: number;
}

/**
 * A request's slot and hold are renewed this often per lapse (REQUEST_HOLD_LAPSE_MS): a
 * renewal or two may be lost (Redis briefly away) before they lapse under a running request.
 */
const RENEWALS_PER_LAPSE = 3;
/**
 * A request never finished (a bug) stops renewing after this long, so it cannot keep its
 * key's slot and its account's hold for ever; no request runs this long.
 */
const LONGEST_RENEWED_MS = 24 * 3_600_000;

/**
 * The running requests of a replica, whose slots and holds one timer renews (a timer per
 * request would cost every request its creation and clearing, for the few that run long).
 * A request admitted just after a tick is renewed at the next: never later than a third of
 * the lapse after its admission or last renewal.
 */
export class RunningRequests {
  private readonly running = new Set<AdmittedRequest>();
  private timer?: NodeJS.Timeout;

  constructor(readonly lapseMs: number) {}

  add(request: AdmittedRequest): void {
    this.running.add(request);
    if (this.timer) return;
    this.timer = setInterval(() => this.renewAll(), Math.max(1, Math.floor(this.lapseMs / RENEWALS_PER_LAPSE)));
    this.timer.unref();
  }

  delete(request: AdmittedRequest): void {
    this.running.delete(request);
  }

  close(): void {
    clearInterval(this.timer);
    this.timer = undefined;
    this.running.clear();
  }

  private renewAll(): void {
    const now = Date.now();
    for (const request of this.running) if (!request.renew(now)) this.running.delete(request);
    if (this.running.size === 0) this.close();
  }
}

/**
 * One admitted request. `settle` prices what it used and records it for the ledger; `finish`
 * gives back its slot and hold and counts what it cost as spent, once, however it ended.
 */
export class AdmittedRequest {
  private spentMicro = 0n;
  private finished = false;
  private readonly admittedAt = Date.now();
  /** The source that answered (its provider's name), once one did. */
  private provider: string | undefined;
  /** The request's span and its upstream call's, when tracing is on. */
  private span: Span | undefined;
  private upstreamSpan: Span | undefined;

  constructor(
    private readonly call: MeteredCall,
    private readonly usage: UsageRecorder,
    private readonly creditsPerUsd: number,
    private readonly store: LimitStore,
    private readonly concurrencyKey: string,
    private readonly hold: { accountId: string; holdId: string; amountMicro: bigint },
    /** Renews its slot and hold until it finishes; without, they live as long as the store was told at admission. */
    private readonly running?: RunningRequests,
  ) {
    running?.add(this);
    if (tracingEnabled()) this.span = startServerSpan(call.endpoint, this.traceAttributes());
  }

  /**
   * Runs one upstream attempt on `target`, timed for the metrics and traced as a GenAI client
   * span; the source that answers is the request's provider from then on.
   */
  async attempt<T>(target: { provider: string; model: string; definition: { name: string } }, send: () => Promise<T>): Promise<T> {
    const provider = target.definition.name;
    const span = this.span ? this.startUpstreamSpan(provider, target.model) : undefined;
    try {
      const result = await timedUpstreamAttempt(this.call.endpoint, provider, send);
      this.provider = provider;
      if (this.call.context) this.call.context.provider = provider;
      this.upstreamSpan = span;
      return result;
    } catch (error) {
      endSpanWithError(span, error);
      throw error;
    }
  }

  /** A stream's first chunk arrived: its time to first token, from the request's arrival. */
  firstChunk(): void {
    const since = this.call.context?.startedAt;
    if (since === undefined) return;
    timeToFirstToken.observe(timeToFirstToken.series(modelLabel(this.call.model.id), this.provider ?? 'none'), (performance.now() - since) / 1000);
  }

  /**
   * A replica that dies leaves its requests' slots and holds to lapse; a request that lives
   * (a long stream) pushes their lapse on until it finishes, however long it runs. Returns
   * whether it still needs renewing.
   */
  renew(now: number): boolean {
    if (this.finished || !this.running || now - this.admittedAt > LONGEST_RENEWED_MS) return false;
    const { accountId, holdId, amountMicro } = this.hold;
    this.store.renew({ concurrencyKey: this.concurrencyKey, slotId: holdId, credits: { accountId, holdId, amountMicro }, ttlMs: this.running.lapseMs }, now);
    return true;
  }

  /** Prices `units` with the model's prices of the request's start, records the usage event, and returns meta.usage. */
  settle(units: Record<string, number>): ChargedUsage {
    const { model } = this.call;
    const priced = priceUsage(model.pricing, units, this.creditsPerUsd);
    this.usage.record({
      requestId: this.call.requestId,
      accountId: this.call.auth.accountId,
      keyId: this.call.auth.keyId,
      model: model.id,
      endpoint: this.call.endpoint,
      units,
      creditsMicro: priced.creditsMicro.toString(),
      usd: priced.usd,
      catalogueRevision: this.call.catalogueRevision,
      prices: model.pricing?.units ?? [],
      occurredAt: new Date().toISOString(),
      // Left out of the JSON when the client sent none.
      clientRequestId: this.call.context?.clientRequestId,
    });
    this.spentMicro += priced.creditsMicro;
    const credits = microToCredits(priced.creditsMicro);
    this.count(units, credits);
    return { credits_used: credits, usd_spent: Number(priced.usd) };
  }

  /** The tokens and credits of a settlement, in the metrics, the access-log line and the upstream span. */
  private count(units: Record<string, number>, credits: number): void {
    const model = modelLabel(this.call.model.id);
    const provider = this.provider ?? 'none';
    const input = promptTokensOf(units);
    const output = units.output_tokens ?? 0;
    if (input > 0) tokensCounted.inc(tokensCounted.series(model, provider, 'input'), input);
    if (output > 0) tokensCounted.inc(tokensCounted.series(model, provider, 'output'), output);
    if (credits > 0) creditsCharged.inc(creditsCharged.series(model, this.call.endpoint), credits);
    const context = this.call.context;
    if (context) {
      context.inputTokens = (context.inputTokens ?? 0) + input;
      context.outputTokens = (context.outputTokens ?? 0) + output;
      context.credits = (context.credits ?? 0) + credits;
    }
    const span = this.upstreamSpan ?? this.span;
    if (span) {
      span.setAttributes({ 'gen_ai.usage.input_tokens': input, 'gen_ai.usage.output_tokens': output, 'igw.credits': credits });
      this.upstreamSpan?.end();
      this.upstreamSpan = undefined;
    }
  }

  private traceAttributes(): Record<string, string | number> {
    const { call } = this;
    const attributes: Record<string, string | number> = {
      'igw.request_id': call.requestId,
      'igw.endpoint': call.endpoint,
      'igw.model': call.model.id,
      'igw.catalogue_revision': call.catalogueRevision,
      'igw.account_id': call.auth.accountId,
    };
    if (call.context?.clientRequestId) attributes['igw.client_request_id'] = call.context.clientRequestId;
    return attributes;
  }

  /** A span per upstream call, with the GenAI semantic conventions' attributes. */
  private startUpstreamSpan(provider: string, upstreamModel: string): Span | undefined {
    const operation = genAiOperation(this.call.endpoint);
    return startClientSpan(`${operation} ${upstreamModel}`, this.span, {
      'gen_ai.operation.name': operation,
      'gen_ai.system': provider,
      'gen_ai.provider.name': provider,
      'gen_ai.request.model': upstreamModel,
      'igw.model': this.call.model.id,
      'igw.request_id': this.call.requestId,
      ...(this.call.context?.clientRequestId ? { 'igw.client_request_id': this.call.context.clientRequestId } : {}),
    });
  }

  finish(): void {
    if (this.finished) return;
    this.finished = true;
    this.upstreamSpan?.end();
    this.span?.end();
    this.running?.delete(this);
    this.store.finish({
      concurrencyKey: this.concurrencyKey,
      slotId: this.hold.holdId,
      credits: { ...this.hold, spentMicro: this.spentMicro },
    });
  }
}

/**
 * Admits paid requests: per API key, requests per minute and requests in flight; per free
 * account, requests per hour; per account, credits, holding each request's most expensive
 * outcome while it runs. Over a rate limit: 429 with `retry-after`; nothing left to spend: 403.
 * Everything is checked and counted in one step in the LIMIT_STORE (see limit-store.provider.ts):
 * shared by every replica when REDIS_URL is set, kept in the process otherwise.
 */
@Injectable()
export class RequestMeter implements OnApplicationShutdown {
  private readonly logger = new Logger(RequestMeter.name);
  /** Every replica's own counters while the store is unreachable. */
  private readonly local = new InMemoryLimitStore();
  private readonly running: RunningRequests;
  private degraded = false;

  constructor(
    private readonly usage: UsageRecorder,
    @Inject(SERVICE_SETTINGS) private readonly settings: ServiceSettings,
    @Inject(LIMIT_STORE) private readonly store: LimitStore,
  ) {
    this.running = new RunningRequests(settings.env.REQUEST_HOLD_LAPSE_MS);
  }

  /**
   * Admits the request or throws the 403/429 that says why not. The most it can cost (its
   * `ceilingUnits` at the model's prices) is held until it finishes.
   */
  async admit(call: MeteredCall, ceilingUnits: Record<string, number>): Promise<AdmittedRequest> {
    const { env } = this.settings;
    const { auth, requestId } = call;
    const costCeilingMicro = priceUsage(call.model.pricing, ceilingUnits, env.CREDITS_PER_USD).creditsMicro;
    const abandonedAfterMs = env.REQUEST_HOLD_LAPSE_MS;
    const concurrencyKey = `key:${auth.keyId}:running`;
    const admission: Admission = {
      perMinute: { key: `key:${auth.keyId}:minute`, limit: auth.limits.requestsPerMinute ?? env.RATE_LIMIT_RPM },
      concurrency: { key: concurrencyKey, limit: auth.limits.concurrentRequests ?? env.RATE_LIMIT_CONCURRENCY, ttlMs: abandonedAfterMs, slotId: requestId },
      freeHourly: auth.plan === 'free' ? { key: `account:${auth.accountId}:hour`, limit: env.FREE_TIER_HOURLY_LIMIT } : undefined,
      credits: { accountId: auth.accountId, snapshot: auth.balance, holdId: requestId, amountMicro: costCeilingMicro, ttlMs: abandonedAfterMs },
    };
    const { store, result } = await this.admitSomewhere(admission);
    if (!result.allowed) {
      if (result.reason === 'credits') throw new GatewayException(HttpStatus.FORBIDDEN, ErrorMessages.creditsExhausted);
      const message = result.reason === 'free-hourly' ? ErrorMessages.freeTierExhausted(env.FREE_TIER_HOURLY_LIMIT) : ErrorMessages.tooManyRequests;
      throw new GatewayException(HttpStatus.TOO_MANY_REQUESTS, message, { headers: { 'retry-after': String(result.retryAfterSeconds) } });
    }
    const hold = { accountId: auth.accountId, holdId: requestId, amountMicro: costCeilingMicro };
    return new AdmittedRequest(call, this.usage, env.CREDITS_PER_USD, store, concurrencyKey, hold, this.running);
  }

  /**
   * In the store when it answers. While it does not (Redis away), requests are still served
   * (the queue may be down too, and the usage journal keeps their events): limits and holds
   * are then counted per replica, which loosens them by the number of replicas until it is back.
   */
  private async admitSomewhere(admission: Admission): Promise<{ store: LimitStore; result: AdmissionResult }> {
    const shared = this.store;
    if (shared.reachable) {
      try {
        const result = await shared.admit(admission, Date.now());
        if (this.degraded) this.logger.log('Redis answers again: limits and credit holds are shared by all replicas again');
        this.degraded = false;
        return { store: shared, result };
      } catch {
        // Fall through to the local counters.
      }
    }
    if (!this.degraded) {
      this.degraded = true;
      this.logger.warn('Redis is unreachable: limits and credit holds are counted by this replica alone until it is back');
    }
    return { store: this.local, result: await this.local.admit(admission, Date.now()) };
  }

  async onApplicationShutdown(): Promise<void> {
    this.running.close();
    await Promise.all([this.local.close(), this.store.close()]);
  }
}
