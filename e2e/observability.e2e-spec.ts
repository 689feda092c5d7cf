import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { eventually } from '@igw/testing';
import { startEmulator, type RunningEmulator } from '../tools/emulator/src/emulator';
import { call } from './support/http';
import { emulatedProviders, startStandaloneHarness, type StandaloneHarness } from './support/standalone-harness';

type Labels = Record<string, string>;
type Usage = { prompt_tokens: number; completion_tokens: number };
type Charged = { meta: { usage: { credits_used: number } } };

/** The value of one series in Prometheus' text format (0 when it is not there yet). */
function sample(metrics: string, name: string, labels: Labels): number {
  for (const line of metrics.split('\n')) {
    if (!line.startsWith(`${name}{`) && !line.startsWith(`${name} `)) continue;
    const open = line.indexOf('{');
    const close = line.lastIndexOf('}');
    const found: Labels = {};
    if (open !== -1 && open < name.length + 1) {
      for (const match of line.slice(open + 1, close).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) found[match[1]] = match[2];
    }
    if (Object.entries(labels).every(([label, value]) => found[label] === value)) return Number(line.slice(line.lastIndexOf(' ') + 1));
  }
  return 0;
}

/** What the spans sent to the receiver say: name and attributes, flattened. */
interface ReceivedSpan {
  name: string;
  kind: number;
  attributes: Record<string, string | number>;
}

/** A tiny OTLP/HTTP (JSON) trace receiver on 127.0.0.1: the collector a deployment would run. */
async function startOtlpReceiver(): Promise<{ url: string; spans: ReceivedSpan[]; close(): Promise<void> }> {
  const spans: ReceivedSpan[] = [];
  const server: Server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.url === '/v1/traces') {
        type Value = { stringValue?: string; intValue?: string | number; doubleValue?: number };
        const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
          resourceSpans: Array<{ scopeSpans: Array<{ spans: Array<{ name: string; kind: number; attributes: Array<{ key: string; value: Value }> }> }> }>;
        };
        for (const resource of body.resourceSpans) {
          for (const scope of resource.scopeSpans) {
            for (const span of scope.spans) {
              const attributes = Object.fromEntries(span.attributes.map(({ key, value }) => [key, value.stringValue ?? Number(value.intValue ?? value.doubleValue)]));
              spans.push({ name: span.name, kind: span.kind, attributes });
            }
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

/** The JSON lines of the process's output. */
function jsonLines(output: string): Array<Record<string, unknown>> {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
}

/**
 * Metrics, logs and traces of real requests through the standalone app (the emulator playing
 * the providers): the counters move by exactly what the requests used, the access log says
 * who asked for what without a key or a prompt, and each upstream call is a GenAI span.
 */
describe('observability: /metrics, JSON logs and traces', () => {
  let emulator: RunningEmulator;
  let receiver: Awaited<ReturnType<typeof startOtlpReceiver>>;
  let harness: StandaloneHarness;
  let key: string;
  let accountId: string;
  const PROMPT = 'Tell me about the secret garden of Quentin';

  beforeAll(async () => {
    emulator = await startEmulator();
    receiver = await startOtlpReceiver();
    harness = await startStandaloneHarness({
      CATALOGUE_FILE: path.join(__dirname, 'fixtures/chat-catalogue.yaml'),
      ...emulatedProviders(emulator.url),
      LOG_FORMAT: 'json',
      LOG_LEVEL: 'log',
      // The test is the reverse proxy: its X-Forwarded-For names the client.
      TRUSTED_PROXIES: '127.0.0.1',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
    });
    ({ key, accountId } = await harness.paidKey(1_000_000));
  }, 120_000);

  afterAll(async () => {
    await harness?.stop();
    await emulator?.close();
    await receiver?.close();
  });

  const metrics = async (base = harness.gateway) => {
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
    return response.text();
  };
  const chat = (body: Record<string, unknown>, headers: Record<string, string> = {}) =>
    call<{ usage: Usage } & Charged>(`${harness.gateway}/v1/chat/completions`, {
      token: key,
      body: { messages: [{ role: 'user', content: PROMPT }], ...body },
      headers,
    });

  it('counts requests, tokens, credits, upstream calls, first tokens and fallbacks by the amounts the requests used', async () => {
    const before = await metrics();
    const mini = { model: 'test/mini', provider: 'openai' };

    // The chat direct route, unstreamed.
    const plain = await chat({ model: 'mini' });
    expect(plain.status).toBe(200);
    // A stream, with its usage.
    const streamed = await fetch(`${harness.gateway}/v1/chat/completions`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'mini', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: PROMPT }] }),
    });
    const events = (await streamed.text()).split('\n\n').filter((event) => event.startsWith('data: {'));
    const last = JSON.parse(events.at(-1)!.slice('data: '.length)) as { usage: Usage } & Charged;
    // Embeddings, through Express.
    const embedded = await call<{ usage: { prompt_tokens: number } } & Charged>(`${harness.gateway}/v1/embeddings`, { token: key, body: { model: 'embed', input: 'hello there' } });
    expect(embedded.status).toBe(200);
    // The first source answers 500: the request falls back to the second.
    const fellBack = await chat({ model: 'test/fallback' });
    expect(fellBack.status).toBe(200);
    // A model the catalogue does not have.
    expect((await chat({ model: 'no-such-model' })).status).toBe(404);

    const after = await metrics();
    const moved = (name: string, labels: Labels) => sample(after, name, labels) - sample(before, name, labels);
    const route = '/v1/chat/completions';
    expect(moved('igw_http_requests_total', { service: 'gateway', route, method: 'POST', status: '200', ...mini })).toBe(2);
    expect(moved('igw_http_requests_total', { service: 'gateway', route: '/v1/embeddings', status: '200', model: 'test/embed', provider: 'openai' })).toBe(1);
    expect(moved('igw_http_requests_total', { service: 'gateway', route, status: '200', model: 'test/fallback', provider: 'together' })).toBe(1);
    expect(moved('igw_http_requests_total', { service: 'gateway', route, status: '404', model: 'none', provider: 'none' })).toBe(1);
    // The client cannot make series: no label names the unknown model.
    expect(after).not.toContain('no-such-model');

    const input = plain.body.usage.prompt_tokens + last.usage.prompt_tokens;
    const output = plain.body.usage.completion_tokens + last.usage.completion_tokens;
    expect(moved('igw_tokens_total', { ...mini, direction: 'input' })).toBe(input);
    expect(moved('igw_tokens_total', { ...mini, direction: 'output' })).toBe(output);
    expect(moved('igw_tokens_total', { model: 'test/embed', provider: 'openai', direction: 'input' })).toBe(embedded.body.usage.prompt_tokens);
    expect(moved('igw_credits_charged_total', { model: 'test/mini', endpoint: 'chat.completions' })).toBeCloseTo(plain.body.meta.usage.credits_used + last.meta.usage.credits_used, 6);
    expect(moved('igw_credits_charged_total', { model: 'test/embed', endpoint: 'embeddings' })).toBeCloseTo(embedded.body.meta.usage.credits_used, 6);

    expect(moved('igw_upstream_request_duration_seconds_count', { endpoint: 'chat.completions', provider: 'openai', outcome: 'ok' })).toBe(2);
    expect(moved('igw_upstream_request_duration_seconds_count', { endpoint: 'chat.completions', provider: 'groq', outcome: 'error' })).toBe(1);
    expect(moved('igw_upstream_request_duration_seconds_count', { endpoint: 'chat.completions', provider: 'together', outcome: 'ok' })).toBe(1);
    expect(moved('igw_time_to_first_token_seconds_count', mini)).toBe(1);
    expect(moved('igw_upstream_fallbacks_total', { endpoint: 'chat.completions', provider: 'groq' })).toBe(1);
    // The failed deployment was cooled and the request retried elsewhere; both are counted per deployment.
    expect(moved('igw_deployment_retries_total', { deployment: 'groq/broken@status=500' })).toBe(1);
    expect(moved('igw_deployment_cooldowns_total', { deployment: 'groq/broken@status=500', reason: 'failing' })).toBe(1);
    expect(after).toMatch(/igw_deployment_state\{deployment="openai\/[^"]+",state="serving"\} 1/);

    // Billing applies the events: the ledger lag is observed once per event, and the queues are counted.
    await eventually(async () => sample(await metrics(harness.billing), 'igw_ledger_usage_events_total', {}) - sample(before, 'igw_ledger_usage_events_total', {}) >= 4, 15_000, 200);
    const billing = await metrics(harness.billing);
    expect(sample(billing, 'igw_ledger_lag_seconds_count', {}) - sample(before, 'igw_ledger_lag_seconds_count', {})).toBeGreaterThanOrEqual(4);
    expect(billing).toMatch(/^igw_queue_jobs\{queue="usage",state="waiting"\} \d+$/m);
    expect(billing).toMatch(/^igw_usage_backlog_events \d+$/m);
  }, 60_000);

  it('writes one JSON access-log line per request with its ids, key prefix, model, provider, tokens and credits, and never the key or the prompt', async () => {
    const clientRequestId = 'checkout-7f3a 42';
    const answer = await chat({ model: 'mini' }, { 'x-client-request-id': clientRequestId });
    expect(answer.status).toBe(200);
    const requestId = answer.headers.get('x-request-id')!;
    const ignored = await chat({ model: 'mini' }, { 'x-client-request-id': 'x'.repeat(129) });
    const ignoredId = ignored.headers.get('x-request-id')!;

    let line: Record<string, unknown> | undefined;
    await eventually(async () => (line = jsonLines(harness.process.output()).find((entry) => entry.requestId === requestId)) !== undefined, 5_000);
    expect(line).toMatchObject({
      level: 'info',
      context: 'access',
      msg: 'request',
      service: 'gateway',
      method: 'POST',
      route: '/v1/chat/completions',
      status: 200,
      clientRequestId,
      keyPrefix: key.slice(0, 10),
      model: 'test/mini',
      provider: 'openai',
      inputTokens: answer.body.usage.prompt_tokens,
      outputTokens: answer.body.usage.completion_tokens,
      credits: answer.body.meta.usage.credits_used,
    });
    expect(typeof line!.durationMs).toBe('number');
    expect(typeof line!.time).toBe('string');
    let ignoredLine: Record<string, unknown> | undefined;
    await eventually(async () => (ignoredLine = jsonLines(harness.process.output()).find((entry) => entry.requestId === ignoredId)) !== undefined, 5_000);
    expect(ignoredLine!.clientRequestId).toBeUndefined();

    // Every line is JSON, the banner's too, and none carries a secret or the prompt.
    const output = harness.process.output();
    for (const text of output.split('\n')) if (text.trim()) expect(() => JSON.parse(text)).not.toThrow();
    expect(output).not.toContain(key);
    expect(output).not.toContain(harness.adminToken);
    expect(output).not.toContain('openai-key');
    expect(output).not.toContain('secret garden');

    // The client's id travelled with the usage event to the ledger row.
    let rows: Array<{ requestId: string | null; clientRequestId?: string | null }> = [];
    await eventually(async () => (rows = await harness.usageEntries(accountId, 50)).some((row) => row.requestId === requestId), 15_000, 200);
    expect(rows.find((row) => row.requestId === requestId)!.clientRequestId).toBe(clientRequestId);
    await eventually(async () => (rows = await harness.usageEntries(accountId, 50)).some((row) => row.requestId === ignoredId), 15_000, 200);
    expect(rows.find((row) => row.requestId === ignoredId)!.clientRequestId).toBeNull();
  }, 60_000);

  it('says in the JSON stream, as one line of fields, what the banner says at a terminal', () => {
    const running = jsonLines(harness.process.output()).find((entry) => entry.context === 'standalone' && entry.msg === 'Inference gateway is running (standalone)');
    expect(running).toMatchObject({ level: 'info', gatewayUrl: harness.gateway, billingUrl: harness.billing, swaggerUi: [`${harness.gateway}/docs`, `${harness.billing}/docs`] });
    expect(harness.process.output()).not.toContain('Press Ctrl-C to stop');
  });

  it("gives each access line the client's address (through TRUSTED_PROXIES), and an error's line its reason and the model asked for", async () => {
    const unknown = await chat({ model: 'no-such-model' }, { 'x-forwarded-for': '203.0.113.7' });
    expect(unknown.status).toBe(404);
    const invalid = await chat({ model: 'mini', max_tokens: -1 });
    expect(invalid.status).toBe(400);
    const lineOf = async (response: { headers: Headers }) => {
      const requestId = response.headers.get('x-request-id')!;
      let line: Record<string, unknown> | undefined;
      await eventually(async () => (line = jsonLines(harness.process.output()).find((entry) => entry.requestId === requestId)) !== undefined, 5_000);
      return line!;
    };
    expect(await lineOf(unknown)).toMatchObject({
      status: 404,
      clientAddress: '203.0.113.7',
      model: 'no-such-model',
      error: expect.stringContaining("no model named 'no-such-model'"),
    });
    expect(await lineOf(invalid)).toMatchObject({ status: 400, clientAddress: '127.0.0.1', model: 'mini', error: expect.stringContaining('max_tokens') });
  }, 30_000);

  it("names metrics as Prometheus and prom-client do: Node's own unprefixed, ours with igw_, no gauge named _total, Swagger's files under its route", async () => {
    for (const file of ['/docs/swagger-ui.css', '/docs/swagger-ui-bundle.js']) {
      const response = await fetch(`${harness.gateway}${file}`);
      expect(response.status).toBe(200);
      await response.arrayBuffer();
    }
    const swaggerFiles = { service: 'gateway', route: '/docs/*', method: 'GET', status: '200' };
    // A response is counted when it closes, a moment after the client has read it.
    await eventually(async () => sample(await metrics(), 'igw_http_requests_total', swaggerFiles) >= 2, 5_000);
    const text = await metrics();
    const types = new Map([...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((match) => [match[1], match[2]]));
    expect(types.get('process_cpu_seconds_total')).toBe('counter');
    expect(types.get('nodejs_eventloop_lag_p99_seconds')).toBe('gauge');
    const ours = [...types].filter(([name]) => name.startsWith('igw_'));
    expect(ours.filter(([name]) => /^igw_(process|nodejs)_/.test(name))).toEqual([]);
    expect(ours.filter(([name, type]) => type !== 'counter' && name.endsWith('_total'))).toEqual([]);
    expect(ours.filter(([name, type]) => type === 'counter' && !name.endsWith('_total'))).toEqual([]);
    expect(sample(text, 'igw_http_requests_total', { ...swaggerFiles, route: 'unmatched' })).toBe(0);
  });

  it('sends a GenAI span per upstream call, under the request span, to the OTLP endpoint', async () => {
    const answer = await chat({ model: 'mini' }, { 'x-client-request-id': 'trace-me' });
    const requestId = answer.headers.get('x-request-id')!;
    let upstream: ReceivedSpan | undefined;
    await eventually(async () => (upstream = receiver.spans.find((span) => span.attributes['igw.request_id'] === requestId && span.attributes['gen_ai.system'] !== undefined)) !== undefined, 15_000, 200);
    expect(upstream).toMatchObject({
      name: 'chat gpt-4o-mini',
      kind: 3, // CLIENT
      attributes: {
        'gen_ai.operation.name': 'chat',
        'gen_ai.system': 'openai',
        'gen_ai.request.model': 'gpt-4o-mini',
        'gen_ai.usage.input_tokens': answer.body.usage.prompt_tokens,
        'gen_ai.usage.output_tokens': answer.body.usage.completion_tokens,
        'igw.model': 'test/mini',
        'igw.client_request_id': 'trace-me',
      },
    });
    await eventually(async () => receiver.spans.some((span) => span.attributes['igw.request_id'] === requestId && span.kind === 2 && span.name === 'chat.completions'), 15_000, 200);
  }, 30_000);
});
