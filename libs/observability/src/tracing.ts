import { ROOT_CONTEXT, SpanKind, SpanStatusCode, trace, type Attributes, type Span, type Tracer } from '@opentelemetry/api';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import { redactSecrets } from './secrets';

let provider: NodeTracerProvider | undefined;
let tracer: Tracer | undefined;

/**
 * Records traces and sends them over OTLP/HTTP to `endpoint` (its `/v1/traces`), once per
 * process; without an endpoint nothing is recorded and no span is even created. Spans are
 * parented by hand (no context manager): tracking every promise of the process would cost the
 * hot path even with tracing off.
 */
export function startTracing(serviceName: string, endpoint: string | undefined): void {
  if (provider || !endpoint) return;
  const exporter = new OTLPTraceExporter({ url: `${endpoint.replace(/\/+$/, '')}/v1/traces` });
  provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1_000 })],
  });
  tracer = provider.getTracer('inference-gateway');
}

/** Sends the spans still buffered and stops recording: before the process exits. */
export async function stopTracing(): Promise<void> {
  const stopping = provider;
  provider = undefined;
  tracer = undefined;
  await stopping?.shutdown().catch(() => undefined);
}

/** Sends the spans buffered so far (tests, and a deliberate exit). */
export async function flushTraces(): Promise<void> {
  await provider?.forceFlush().catch(() => undefined);
}

/** Whether spans are recorded: callers skip building attributes when not. */
export function tracingEnabled(): boolean {
  return tracer !== undefined;
}

/** A span of the gateway's own (a paid request), or undefined when tracing is off. */
export function startServerSpan(name: string, attributes: Attributes): Span | undefined {
  return tracer?.startSpan(name, { kind: SpanKind.SERVER, attributes });
}

/** A span for a call to another system under `parent` (an upstream attempt), or undefined when tracing is off. */
export function startClientSpan(name: string, parent: Span | undefined, attributes: Attributes): Span | undefined {
  if (!tracer) return undefined;
  const context = parent ? trace.setSpan(ROOT_CONTEXT, parent) : ROOT_CONTEXT;
  return tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, context);
}

/** Ends `span` as failed with `error`'s type and message. */
export function endSpanWithError(span: Span | undefined, error: unknown): void {
  if (!span) return;
  const type = error instanceof Error ? error.constructor.name : 'Error';
  span.setAttribute('error.type', type);
  span.setStatus({ code: SpanStatusCode.ERROR, message: redactSecrets(error instanceof Error ? error.message : String(error)).slice(0, 500) });
  span.end();
}
