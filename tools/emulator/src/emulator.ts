// Upstream emulator: a lean node:http server that plays the role of an AI provider
// (OpenAI and every OpenAI-compatible server today) for tests, benchmarks and
// `--demo` mode. Replies are deterministic; failure modes are driven per request by
// control headers (see README.md):
//   x-emulator-status: <code>         answer with that HTTP status (400-599) and an error body
//   x-emulator-delay-ms: <n>          wait n ms (max 60000) before responding / before the first stream event
//   x-emulator-chunk-delay-ms: <n>    wait n ms between stream events
// or, for callers that cannot set headers (a gateway), by suffixes of the upstream model
// name: `<name>@status=500@delay=10`, `@chunk-delay=<ms>`, `@fail-after=<n>`, `@no-usage`
// (controls.ts; for Deepgram the model is the `model` query parameter, for Stability the path
// segment after `/generate/`). A control header in effect (a 400-599 status, a delay above 0) overrides the suffix.
// Hostile answers (`@huge-body=<MB>`, `@huge-line=<MB>`, `@endless-stream`, `@endless-error`)
// come from hostile.ts, for any route that exists.
//
// This file is the router; each wire format (src/<format>/) contributes routes, its
// auth scheme and its error shape through the WireFormat interface (format.ts).
// It is the benchmark baseline: keep the per-request path free of logging and
// synchronous heavy work.
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { RequestContext } from './context';
import { requestControls } from './controls';
import { anthropicFormat } from './anthropic';
import { azureFormat } from './azure';
import { BedrockAccounts, bedrockFormat, type BedrockEmulatorOptions } from './bedrock';
import type { Route, RouterFailure, WireFormat } from './format';
import { geminiFormat } from './gemini';
import { answerHostile, wantsHostileAnswer } from './hostile';
import { openAIFormat } from './openai';
import { deepgramFormat } from './deepgram';
import { mediaFormat } from './media';
import { parseMultipart } from './multipart';
import { TurnScripts, type ScriptedTurn } from './scripts';
import { stabilityFormat } from './stability';
import { randomId } from './util';
import { vertexFormat, VertexTokens, type ServiceAccountKey, type VertexEmulatorOptions } from './vertex';

export interface EmulatorOptions {
  /** Port to listen on; 0 (the default) picks a free port. */
  port?: number;
  /** Interface to bind; default 127.0.0.1. */
  host?: string;
  /** When set, requests must carry `Authorization: Bearer <apiKey>`, else 401. */
  apiKey?: string;
  /**
   * Routes this emulator does not serve, as `"<METHOD> <path>"` (`"POST /v1/responses"`): they
   * answer as any unknown path does (OpenAI's 404 `Invalid URL (POST /v1/responses)`), as an
   * OpenAI-compatible server without that API does.
   */
  withoutRoutes?: readonly string[];
  /** Amazon Bedrock's accounts: the access keys, API keys, web identity token and roles it takes (bedrock/auth.ts). */
  bedrock?: BedrockEmulatorOptions;
  /** Vertex AI's token endpoint: how long its tokens live, the project of its service accounts. */
  vertex?: VertexEmulatorOptions;
}

export interface RecordedRequest {
  method: string;
  /** Request target as received (path plus query string, if any). */
  path: string;
  /** Header names are lower-case. */
  headers: Record<string, string | string[] | undefined>;
  /**
   * Parsed JSON body (model-name control suffixes included); the raw text if it was not valid
   * JSON; the text fields of a multipart form; undefined if empty or binary (audio uploads).
   */
  body: unknown;
  /** Body size in bytes (0 when empty). */
  bodyBytes: number;
  /** The file parts of a multipart form, without their bytes. */
  files?: Array<{ field: string; filename: string; contentType: string; bytes: number }>;
  /**
   * True once the client closed the connection before the response ended (set when it
   * happens: the entry is updated in place). Not set when the emulator cut it (`@fail-after`).
   */
  closedEarly: boolean;
  /** True once the exchange is over: the response ended or the connection closed (tests wait for it). */
  ended: boolean;
}

export interface RunningEmulator {
  /** Base URL, e.g. http://127.0.0.1:43210 (no trailing slash, no /v1). */
  url: string;
  /** The last 1000 requests, newest last. */
  requests: RecordedRequest[];
  /**
   * Queues answers for the upstream model's next chat requests, in any wire format: a text or
   * one tool call (scripts.ts). Each request for the model takes the next turn; then the
   * deterministic rules answer again.
   */
  script(model: string, turns: readonly ScriptedTurn[]): void;
  /** Bedrock's accounts: what its STS issued so far (`issued`). */
  bedrock: BedrockAccounts;
  /** Vertex AI's token endpoint (`POST /token`): the tokens it issued, the service accounts it trusts. */
  vertex: {
    tokens: VertexTokens;
    /** A new service account's JSON key file, its `token_uri` this emulator's token endpoint. */
    serviceAccount(): ServiceAccountKey;
  };
  close(): Promise<void>;
}

export type { ScriptedTurn } from './scripts';

/** Formats in priority order; the last one is the fallback for unclaimed paths. */
const FORMATS: readonly WireFormat[] = [anthropicFormat, geminiFormat, azureFormat, deepgramFormat, stabilityFormat, mediaFormat, openAIFormat];

/** Form bodies (an OAuth token request), given to routes as an object of their fields. */
const FORM_TYPE = /^application\/x-www-form-urlencoded/i;

/** Bodies passed to routes as bytes, never parsed as JSON (Deepgram takes the audio itself as the body). */
const BINARY_TYPE = /^(?:audio\/|video\/|image\/|application\/octet-stream)/i;

const MAX_RECORDED = 1000;
const MAX_BODY_BYTES = 64 * 1024 * 1024;
const MAX_DELAY_MS = 60_000;
const KEEP_ALIVE_TIMEOUT_MS = 65_000;

interface RouteMatch {
  route: Route;
  format: WireFormat;
  params: readonly string[];
}

class Router {
  private readonly exact = new Map<string, { route: Route; format: WireFormat }>();
  private readonly patterns: { route: Route; format: WireFormat; path: RegExp }[] = [];

  constructor(
    private readonly formats: readonly WireFormat[],
    without: ReadonlySet<string> = new Set(),
  ) {
    for (const format of formats) {
      for (const route of format.routes) {
        if (typeof route.path === 'string') {
          const key = `${route.method} ${route.path}`;
          if (!this.exact.has(key) && !without.has(key)) this.exact.set(key, { route, format });
        } else {
          this.patterns.push({ route, format, path: route.path });
        }
      }
    }
  }

  match(method: string, path: string): RouteMatch | undefined {
    const exact = this.exact.get(`${method} ${path}`);
    if (exact !== undefined) return { ...exact, params: [] };
    for (const candidate of this.patterns) {
      if (candidate.route.method !== method) continue;
      const found = candidate.path.exec(path);
      if (found !== null) return { route: candidate.route, format: candidate.format, params: found.slice(1) };
    }
    return undefined;
  }

  /** The format whose error shape answers a request no route matched. */
  formatFor(path: string): WireFormat {
    return this.formats.find((format) => format.ownsPath(path)) ?? this.formats[this.formats.length - 1];
  }
}

interface EmulatorState {
  readonly router: Router;
  readonly requests: RecordedRequest[];
  readonly apiKey: string | undefined;
  readonly scripts: TurnScripts;
}

export function startEmulator(options: EmulatorOptions = {}): Promise<RunningEmulator> {
  // Bedrock's and Vertex AI's formats are made per emulator: their accounts (keys, the sessions
  // Bedrock's STS issued, Vertex AI's tokens) are the emulator's own.
  const bedrock = new BedrockAccounts(options.bedrock);
  const tokens = new VertexTokens(options.vertex);
  const formats = [bedrockFormat(bedrock), vertexFormat(tokens), ...FORMATS];
  const state: EmulatorState = { router: new Router(formats, new Set(options.withoutRoutes)), requests: [], apiKey: options.apiKey, scripts: new TurnScripts() };
  const server = createServer({ noDelay: true }, (req, res) => {
    handle(state, req, res).catch(() => {
      // Unreachable in practice (handle() catches handler errors); never crash the process.
      if (!res.destroyed) res.destroy();
    });
  });
  server.keepAliveTimeout = KEEP_ALIVE_TIMEOUT_MS;
  // Must exceed keepAliveTimeout, or a reused connection can be cut mid-request.
  server.headersTimeout = KEEP_ALIVE_TIMEOUT_MS + 1_000;

  return new Promise<RunningEmulator>((resolve, reject) => {
    const onListenError = (error: Error): void => reject(error);
    server.once('error', onListenError);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => {
      server.off('error', onListenError);
      const address = server.address() as AddressInfo;
      let closing: Promise<void> | undefined;
      resolve({
        url: `http://${urlHost(address)}:${address.port}`,
        requests: state.requests,
        script: (model, turns) => state.scripts.add(model, turns),
        bedrock,
        vertex: { tokens, serviceAccount: () => tokens.serviceAccount(`http://${urlHost(address)}:${address.port}`) },
        close: () => {
          closing ??= new Promise<void>((done) => {
            server.close(() => done());
            // Also drop idle keep-alive connections and in-flight streams, so callers never hang.
            server.closeAllConnections();
          });
          return closing;
        },
      });
    });
  });
}

async function handle(state: EmulatorState, req: IncomingMessage, res: ServerResponse): Promise<void> {
  const body = await readBody(req);
  if (body === 'aborted') return;

  const method = req.method ?? 'GET';
  const target = req.url ?? '/';
  let parsed: unknown;
  let invalidJson = false;
  const contentType = req.headers['content-type'] ?? '';
  const form = body !== 'too_large' && body !== undefined && /^multipart\/form-data/i.test(contentType) ? parseMultipart(body, contentType) : undefined;
  if (form !== undefined) {
    parsed = form.fields;
  } else if (body !== 'too_large' && body !== undefined && FORM_TYPE.test(contentType)) {
    // AWS's query protocol (STS) and OAuth token requests: the form's fields, as a multipart form's are.
    parsed = Object.fromEntries(new URLSearchParams(body.toString('utf8')));
  } else if (body !== 'too_large' && body !== undefined && !BINARY_TYPE.test(contentType) && !/^multipart\//i.test(contentType)) {
    const text = body.toString('utf8');
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = text;
      invalidJson = true;
    }
  }
  const entry: RecordedRequest = { method, path: target, headers: { ...req.headers }, body: parsed, bodyBytes: Buffer.isBuffer(body) ? body.length : 0, closedEarly: false, ended: false };
  if (form !== undefined) entry.files = form.files.map((file) => ({ field: file.field, filename: file.filename, contentType: file.contentType, bytes: file.data.length }));
  record(state.requests, entry);

  const query = target.indexOf('?');
  // Model-name controls: routes see the model (body or form `model`, query `model`, path segment) without the suffixes.
  const { path, query: queryString, body: input, controls } = requestControls(query === -1 ? target : target.slice(0, query), parsed, query === -1 ? '' : target.slice(query + 1));
  const match = state.router.match(method, path);
  const format = match?.format ?? state.router.formatFor(path);
  const headers = req.headers;
  const chunkDelayMs = headerMs(headers['x-emulator-chunk-delay-ms']) || (controls.chunkDelayMs ?? 0);
  const ctx = new RequestContext(req, res, format, path, input, chunkDelayMs, `req_${randomId(24)}`);
  ctx.controls = controls;
  ctx.scripts = state.scripts;
  ctx.query = new URLSearchParams(queryString);
  if (Buffer.isBuffer(body)) ctx.rawBody = body;
  if (form !== undefined) ctx.files = form.files;
  if (res.destroyed) entry.closedEarly = entry.ended = true;
  res.once('close', () => {
    if (!res.writableFinished && !ctx.abortedByEmulator) entry.closedEarly = true;
    entry.ended = true;
  });
  const fail = (failure: RouterFailure, extraHeaders?: Record<string, string>): void => {
    const { status, message, details } = format.describeFailure(failure);
    ctx.error(status, message, details, extraHeaders);
  };

  const delay = headerMs(headers['x-emulator-delay-ms']) || (controls.delayMs ?? 0);
  if (delay > 0 && !(await ctx.sleep(delay))) return;

  if (state.apiKey !== undefined && match?.route.public !== true) {
    const key = format.apiKeyOf(req);
    if (key === undefined || key === '') return fail({ kind: 'missing_api_key' });
    if (key !== state.apiKey) return fail({ kind: 'invalid_api_key' });
  }

  const headerStatus = emulatedStatus(headers['x-emulator-status']);
  const status = headerStatus ?? controls.status;
  if (controls.endlessError) return answerHostile(ctx, controls, status);
  if (status !== undefined) {
    const source = headerStatus === undefined ? 'model' : 'header';
    return fail({ kind: 'emulated', status, source }, status === 429 ? { 'retry-after': '1' } : undefined);
  }

  if (match === undefined) return fail({ kind: 'not_found', method, path });
  if (body === 'too_large') return fail({ kind: 'body_too_large', limitBytes: MAX_BODY_BYTES });
  if (invalidJson) return fail({ kind: 'invalid_json' });

  ctx.params = match.params;
  if (wantsHostileAnswer(controls)) return answerHostile(ctx, controls, status);
  try {
    await match.route.handle(ctx);
  } catch {
    if (!res.headersSent) fail({ kind: 'internal' });
    else await ctx.abort();
  }
}

/** The body bytes; undefined if empty; 'too_large' past MAX_BODY_BYTES; 'aborted' if the client left. */
function readBody(req: IncomingMessage): Promise<Buffer | undefined | 'too_large' | 'aborted'> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= MAX_BODY_BYTES) chunks.push(chunk);
    });
    req.on('end', () => {
      if (size > MAX_BODY_BYTES) resolve('too_large');
      else if (chunks.length === 0) resolve(undefined);
      else resolve(chunks.length === 1 ? chunks[0] : Buffer.concat(chunks, size));
    });
    // After 'end' these are no-ops (a promise settles once).
    req.on('error', () => resolve('aborted'));
    req.on('close', () => resolve('aborted'));
  });
}

function record(requests: RecordedRequest[], entry: RecordedRequest): void {
  requests.push(entry);
  if (requests.length > MAX_RECORDED) requests.splice(0, requests.length - MAX_RECORDED);
}

/** A non-negative millisecond count from a control header, capped at MAX_DELAY_MS; 0 if absent/invalid. */
function headerMs(value: string | string[] | undefined): number {
  if (value === undefined) return 0;
  const ms = Number.parseInt(Array.isArray(value) ? value[0] : value, 10);
  return Number.isFinite(ms) && ms > 0 ? Math.min(ms, MAX_DELAY_MS) : 0;
}

/** The status requested by x-emulator-status, if it is an error status (400-599). */
function emulatedStatus(value: string | string[] | undefined): number | undefined {
  if (value === undefined) return undefined;
  const status = Number.parseInt(Array.isArray(value) ? value[0] : value, 10);
  return Number.isInteger(status) && status >= 400 && status <= 599 ? status : undefined;
}

function urlHost(address: AddressInfo): string {
  if (address.address === '0.0.0.0') return '127.0.0.1';
  if (address.address === '::') return '[::1]';
  return address.family === 'IPv6' ? `[${address.address}]` : address.address;
}
