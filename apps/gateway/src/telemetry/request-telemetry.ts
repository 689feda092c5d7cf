import { Injectable } from '@nestjs/common';
import { creditsToMicro, microToCredits, promptTokensOf } from '@igw/domain';
import { endSpanWithError, modelLabel, startClientSpan, startServerSpan, tracingEnabled, upstreamDuration } from '@igw/observability';
import type { Span } from '@opentelemetry/api';
import type { PaidCall, PaidRequestListener } from '../paid-requests/admitted-request';
import { creditsCharged, genAiOperation, timeToFirstToken, tokensCounted } from './gateway-metrics';

/**
 * A paid request's telemetry, from its admission on: the metrics (upstream attempts, time to
 * first token, tokens and credits charged), its access-log fields (provider, tokens, credits
 * in its RequestContext) and, when tracing is on, a server span with a GenAI client span per
 * upstream call.
 */
@Injectable()
export class RequestTelemetry {
  admitted(call: PaidCall): PaidRequestListener {
    return new RequestObserver(call);
  }
}

class RequestObserver implements PaidRequestListener {
  /** The source that answered (its provider's name), once one did. */
  private provider: string | undefined;
  /** The attempt running: its provider, start and span. */
  private attemptProvider = '';
  private attemptStartedAt = 0;
  private attemptSpan: Span | undefined;
  /** The request's span and its answered upstream call's, when tracing is on. */
  private readonly span: Span | undefined;
  private upstreamSpan: Span | undefined;
  /** Credits of the request's settlements, summed exactly for its access-log line. */
  private creditsMicro = 0n;

  constructor(private readonly call: PaidCall) {
    if (tracingEnabled()) this.span = startServerSpan(call.endpoint, this.traceAttributes());
  }

  attemptStarted(provider: string, upstreamModel: string): void {
    this.attemptProvider = provider;
    this.attemptSpan = this.span ? this.startUpstreamSpan(provider, upstreamModel) : undefined;
    this.attemptStartedAt = performance.now();
  }

  attemptAnswered(): void {
    this.observeAttempt('ok');
    const provider = this.attemptProvider;
    this.provider = provider;
    if (this.call.context) this.call.context.provider = provider;
    this.upstreamSpan = this.attemptSpan;
  }

  attemptFailed(error: unknown): void {
    this.observeAttempt('error');
    endSpanWithError(this.attemptSpan, error);
  }

  /** Its time to first token, from the request's arrival. */
  firstChunk(): void {
    const since = this.call.context?.startedAt;
    if (since === undefined) return;
    timeToFirstToken.observe(timeToFirstToken.series(modelLabel(this.call.model.id), this.provider ?? 'none'), (performance.now() - since) / 1000);
  }

  /** The tokens and credits of a settlement, in the metrics, the access-log line and the upstream span. */
  settled(units: Record<string, number>, credits: number): void {
    const model = modelLabel(this.call.model.id);
    const provider = this.provider ?? 'none';
    const input = promptTokensOf(units);
    const output = units.output_tokens ?? 0;
    if (input > 0) tokensCounted.inc(tokensCounted.series(model, provider, 'input'), input);
    if (output > 0) tokensCounted.inc(tokensCounted.series(model, provider, 'output'), output);
    const creditsMicro = creditsToMicro(credits);
    this.creditsMicro += creditsMicro;
    if (creditsMicro > 0n) creditsCharged.inc(creditsCharged.series(model, this.call.endpoint), creditsMicro);
    const context = this.call.context;
    if (context) {
      context.inputTokens = (context.inputTokens ?? 0) + input;
      context.outputTokens = (context.outputTokens ?? 0) + output;
      context.credits = microToCredits(this.creditsMicro);
    }
    const span = this.upstreamSpan ?? this.span;
    if (span) {
      span.setAttributes({ 'gen_ai.usage.input_tokens': input, 'gen_ai.usage.output_tokens': output, 'igw.credits': credits });
      this.upstreamSpan?.end();
      this.upstreamSpan = undefined;
    }
  }

  finished(): void {
    this.upstreamSpan?.end();
    this.span?.end();
  }

  private observeAttempt(outcome: 'ok' | 'error'): void {
    upstreamDuration.observe(upstreamDuration.series(this.call.endpoint, this.attemptProvider, outcome), (performance.now() - this.attemptStartedAt) / 1000);
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
}
