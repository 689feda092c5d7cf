// Per-request failure and pacing controls carried in the upstream MODEL NAME, for
// callers that cannot set the x-emulator-* control headers (a gateway does not forward
// client headers upstream). Suffixes follow the model name, in any order and combinable:
//
//   <name>@status=<code>        answer with that HTTP status (400-599; other values ignored)
//   <name>@delay=<ms>           wait ms (max 60000) before responding / before the first stream event
//   <name>@chunk-delay=<ms>     streams: wait ms (max 60000) between events
//   <name>@fail-after=<n>       streams: destroy the connection abruptly after n content events
//   <name>@no-usage             report no token usage (formats that support it; OpenAI chat and embeddings)
//   <name>@heard-seconds=<s>    speech-to-text (OpenAI transcriptions, Deepgram listen): report the audio as
//                               lasting s seconds whatever the upload holds, as a provider whose decoder
//                               hears more than the file's size allows would (what the gateway's caps meet)
//   <name>@cache-read           Anthropic Messages: the prompt up to its last cache_control breakpoint is read
//                               from the cache (cache_read_input_tokens) rather than written to it
//   <name>@top-logprobs=<token>:<logprob>,...
//                               OpenAI chat with `logprobs: true` (non-streamed): the first token is the
//                               most likely of these, and its `top_logprobs` are these, most likely first
//                               (as many as `top_logprobs` asks); e.g. `@top-logprobs=yes:-0.2,no:-1.8`.
//                               What the decisions fallback's tests read known probabilities from.
//
// Hostile answers, to prove a client bounds what it reads (hostile.ts; each is written as the
// client takes it, never built in memory, and stops when the client leaves):
//   <name>@huge-body=<MB>       a 200 JSON answer of that many MiB (max 65536), chunked, no content-length
//   <name>@huge-line=<MB>       a 200 event stream whose second event is one `data:` line of that many MiB
//   <name>@endless-stream       a 200 event stream of content events in the format's shape that never ends
//                               (one every chunk-delay ms, 10 ms unless set)
//   <name>@endless-error        an error answer (the `@status` given, else 500) whose body never ends
//
// e.g. `gpt-4o-mini@status=500@delay=10`. Only trailing suffixes with one of these keys
// are controls, so names that contain `@` themselves (Vertex's `claude-3-5-sonnet@20240620`)
// are left alone. A suffix with a known key but an invalid value is still stripped, and
// ignored (like an invalid control header).
//
// The router (emulator.ts) reads the model from the JSON body field `model` (OpenAI,
// Anthropic, ...), the multipart form field `model` (OpenAI transcriptions, Stability sd3),
// the query parameter `model` (Deepgram `/v1/listen?model=nova-3@status=500`), and from the
// path segments after `/models/` (Gemini `/v1beta/models/{model}:generateContent`; the
// `:method` tail is kept), after `/deployments/` (Azure `/openai/deployments/{deployment}/...`)
// or after `/generate/` (Stability `/v2beta/stable-image/generate/core@status=500`); `@` and
// `=` may be percent-encoded there (`%40`, `%3D`). Handlers see the name
// without the suffixes (so responses report it), while `RunningEmulator.requests`
// records the request exactly as received.
import { isRecord } from './util';

export const MAX_CONTROL_DELAY_MS = 60_000;
/** 64 GiB: far past any limit worth testing, still a number a loop counts exactly. */
export const MAX_HUGE_MB = 65_536;

export interface ModelControls {
  /** The model name without the control suffixes. */
  model: string;
  status?: number;
  delayMs?: number;
  chunkDelayMs?: number;
  failAfter?: number;
  noUsage?: boolean;
  /** `@heard-seconds`: the length a speech-to-text route reports, whatever the upload holds. */
  heardSeconds?: number;
  /** `@cache-read`: Anthropic reads the cached prefix rather than writing it. */
  cacheRead?: boolean;
  hugeBodyMb?: number;
  hugeLineMb?: number;
  endlessStream?: boolean;
  endlessError?: boolean;
  /** `@top-logprobs`: the first token's alternatives, most likely first. */
  topLogprobs?: Array<{ token: string; logprob: number }>;
}

/** The controls of one request (from its model name); the router merges the control headers in. */
export type RequestControls = Omit<ModelControls, 'model'>;

const SUFFIX = /@(status|delay|chunk-delay|fail-after|huge-body|huge-line|heard-seconds|top-logprobs)=([^@]*)$|@(no-usage|cache-read|endless-stream|endless-error)$/;
const DIGITS = /^\d{1,15}$/;

/** Splits the control suffixes off a model name: `parseModelControls('m@status=500')` → `{model: 'm', status: 500}`. */
export function parseModelControls(model: string): ModelControls {
  const result: ModelControls = { model };
  if (!model.includes('@')) return result;
  let rest = model;
  for (let found = SUFFIX.exec(rest); found !== null; found = SUFFIX.exec(rest)) {
    rest = rest.slice(0, found.index);
    // Parsed right to left: when a key repeats, the rightmost occurrence wins.
    const key = found[1];
    const value = found[2];
    const flag = found[3];
    if (flag === 'no-usage') result.noUsage = true;
    else if (flag === 'cache-read') result.cacheRead = true;
    else if (flag === 'endless-stream') result.endlessStream = true;
    else if (flag === 'endless-error') result.endlessError = true;
    if (key === undefined) continue;
    if (key === 'top-logprobs') {
      result.topLogprobs ??= parseTopLogprobs(value);
      continue;
    }
    if (!DIGITS.test(value)) continue;
    const number = Number(value);
    switch (key) {
      case 'status':
        if (result.status === undefined && number >= 400 && number <= 599) result.status = number;
        break;
      case 'delay':
        result.delayMs ??= Math.min(number, MAX_CONTROL_DELAY_MS);
        break;
      case 'chunk-delay':
        result.chunkDelayMs ??= Math.min(number, MAX_CONTROL_DELAY_MS);
        break;
      case 'fail-after':
        result.failAfter ??= number;
        break;
      case 'huge-body':
        if (number > 0) result.hugeBodyMb ??= Math.min(number, MAX_HUGE_MB);
        break;
      case 'heard-seconds':
        if (number > 0) result.heardSeconds ??= number;
        break;
      case 'huge-line':
        if (number > 0) result.hugeLineMb ??= Math.min(number, MAX_HUGE_MB);
        break;
    }
  }
  result.model = rest;
  return result;
}

/** `yes:-0.2,no:-1.8` → the pairs, most likely first; undefined when any pair is malformed. */
function parseTopLogprobs(value: string): Array<{ token: string; logprob: number }> | undefined {
  const pairs = value.split(',').map((pair) => {
    const colon = pair.lastIndexOf(':');
    return { token: pair.slice(0, colon), logprob: Number(pair.slice(colon + 1)) };
  });
  if (pairs.length === 0 || pairs.some((pair) => pair.token === '' || !Number.isFinite(pair.logprob) || pair.logprob > 0)) return undefined;
  return pairs.sort((a, b) => b.logprob - a.logprob);
}

export interface ControlledRequest {
  /** The path with the control suffixes removed from its model/deployment segment. */
  path: string;
  /** The query string given (without `?`), its `model` parameter stripped of control suffixes (Deepgram). */
  query?: string;
  /** The parsed body, with `model` stripped of its control suffixes (a shallow copy if changed). */
  body: unknown;
  controls: RequestControls;
}

/**
 * Model names follow `/models/` (Gemini, Vertex, OpenAI's retrieve-model), `/deployments/`
 * (Azure) or `/generate/` (Stability's `/v2beta/stable-image/generate/{core|ultra|sd3}`).
 */
const MODEL_MARKER = /\/(?:models|deployments|generate)\//;
const ENCODED_AT = /%40/i;

/**
 * The model-name controls of a request, from its body `model` and from its path; a
 * control present in both is taken from the path. Cheap when there are none (no `@`).
 */
export function requestControls(path: string, body: unknown, query?: string): ControlledRequest {
  let controls: RequestControls = {};
  let strippedQuery = query;
  if (query !== undefined && query.includes('model=') && (query.includes('@') || ENCODED_AT.test(query))) {
    const params = new URLSearchParams(query);
    const name = params.get('model');
    if (name !== null) {
      const { model, ...found } = parseModelControls(name);
      if (model !== name) {
        params.set('model', model);
        strippedQuery = params.toString();
        controls = found;
      }
    }
  }
  let strippedBody = body;
  if (isRecord(body) && typeof body.model === 'string' && body.model.includes('@')) {
    const { model, ...found } = parseModelControls(body.model);
    if (model !== body.model) {
      strippedBody = { ...body, model };
      controls = found;
    }
  }

  let strippedPath = path;
  const marker = path.includes('@') || ENCODED_AT.test(path) ? MODEL_MARKER.exec(path) : null;
  if (marker !== null) {
    // Every segment after the marker: Azure deployment names may contain (unencoded) slashes.
    const start = marker.index + marker[0].length;
    const segments = path.slice(start).split('/');
    let changed = false;
    for (let i = 0; i < segments.length; i++) {
      // Clients may percent-encode the control characters; decode just those.
      const raw = segments[i].replace(/%40/gi, '@').replace(/%3D/gi, '=');
      if (!raw.includes('@')) continue;
      // Gemini: `{model}:{method}`; the method follows the controls. A colon before the
      // last `@` belongs to the name (OpenAI fine-tuned ids: `ft:gpt-4o-mini:org::id`).
      const colon = raw.lastIndexOf(':');
      const tail = colon > raw.lastIndexOf('@') ? raw.slice(colon) : '';
      const name = raw.slice(0, raw.length - tail.length);
      const { model, ...found } = parseModelControls(name);
      if (model === name) continue;
      segments[i] = model + tail;
      controls = { ...controls, ...found };
      changed = true;
    }
    if (changed) strippedPath = path.slice(0, start) + segments.join('/');
  }
  return { path: strippedPath, ...(strippedQuery === undefined ? {} : { query: strippedQuery }), body: strippedBody, controls };
}
