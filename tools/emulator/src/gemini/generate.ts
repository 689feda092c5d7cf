// POST /v1beta/models/{model}:generateContent and :streamGenerateContent?alt=sse.
// The rules mirror the OpenAI chat route (../openai/chat.ts) where Gemini has an equivalent.
//
// Reply, decided in this order (first match wins):
//   1. Forced call: `tools` declare functions and functionCallingConfig.mode is ANY → one
//      functionCall part for allowedFunctionNames[0] (else the first declaration).
//   2. The last content holds functionResponse parts → "Tool said: <content>", where
//      <content> is each response's `content` string (else its JSON), joined by a space.
//   3. `tools` declare functions, the mode is not NONE and the last user text contains the
//      word "weather" (case-insensitive, whole word) → a functionCall for the first declaration.
//   4. Otherwise "Hello from the emulator. You said: <last user text>", where the last user
//      text is the text parts of the last user content that has text, joined by a space.
// Function calls get args satisfying the declaration's `parameters` (or
// `parametersJsonSchema`), made by ../schema-values.ts (a `location` is "Paris"; a
// declaration without parameters gets {location: "Paris"}), finishReason STOP.
// `generationConfig.responseMimeType: "application/json"` makes the text of rules 2 and 4
// compact JSON: a value satisfying `responseJsonSchema` (else `responseSchema`, Gemini's
// OpenAPI subset), or a JSON object when neither is given.
// Text replies have their whitespace normalised to single spaces, then are cut, the
// earliest limit winning:
//   generationConfig.stopSequences: before the first occurrence of a sequence; STOP.
//   "trigger filter" in the last user text (case-insensitive): the first 3 words; SAFETY.
//   generationConfig.maxOutputTokens: that many words; MAX_TOKENS.
// `candidateCount` (1-8) returns that many identical candidates. A `googleSearch` tool adds
// groundingMetadata to text replies: one web chunk (https://example.com/emulated, "Emulated
// source") and one support whose segment (endIndex in UTF-8 bytes, startIndex 0 omitted as
// proto3 JSON does) covers the whole reply. `responseLogprobs: true` adds logprobsResult:
// per returned word a chosen candidate (token = the word, with its leading space except the
// first; logProbability = -0.1 * (position % 5) - 0.01), and `logprobs` (0-20, default 0)
// top candidates, the first the token itself, then `<token>_alt<k>` with logProbability - k.
//
// Token counting (a token is a whitespace-separated word, see util.words):
//   promptTokenCount     = 2 + words(systemInstruction text) + sum over contents of (words(content) + 4)
//   candidatesTokenCount = words of the reply returned, times candidateCount
// where words(content) sums over its parts: text → words(text); functionCall → 1 +
// words(JSON.stringify(args)); functionResponse → 1 + words(<content> as in rule 2). A
// function call reply therefore counts 2 tokens (name + `{"location":"Paris"}`).
//
// Streaming (alt=sse only; Gemini's JSON-array streaming is answered 400): one SSE event
// per returned word (text part " word"), all candidates in each event, the last one also
// carrying finishReason (and groundingMetadata); every event carries usageMetadata with the
// candidates' tokens so far. A function call is a single event.
//
// Model-name controls (../controls.ts): `@no-usage` omits usageMetadata everywhere;
// `@fail-after=<n>` counts every event as content.
import type { RequestContext } from '../context';
import { inlineDocumentFault } from '../documents';
import { CITATION, jsonAnswerText, REPLY_PREFIX, TOOL_REPLY_PREFIX, type JsonAnswerFormat } from '../openai/chat';
import { answerSeed, toolArguments } from '../schema-values';
import type { ScriptedTurn } from '../scripts';
import { countWords, isRecord, optionalPositiveInt, randomId, words } from '../util';

const MAX_CANDIDATES = 8;
const MAX_TOP_LOGPROBS = 20;
const FILTERED_WORDS = 3;
const WEATHER = /\bweather\b/i;
const FILTER = /trigger filter/i;
export const EMULATED_SOURCE = { uri: CITATION.url, title: CITATION.title } as const;

type Part = Record<string, unknown>;
type FinishReason = 'STOP' | 'MAX_TOKENS' | 'SAFETY';
type Mode = 'AUTO' | 'ANY' | 'NONE';

interface GenerateRequest {
  model: string;
  contents: { role: string | undefined; parts: Part[] }[];
  systemText: string;
  maxOutputTokens: number | undefined;
  stopSequences: string[];
  candidateCount: number;
  /** Top candidates per logprobs entry; undefined when logprobs are not requested. */
  topLogprobs: number | undefined;
  functions: string[];
  /** Each declared function's parameters schema. */
  parameters: Map<string, unknown>;
  mode: Mode;
  /** `responseMimeType: application/json`, with its schema when one is given. */
  format: JsonAnswerFormat | undefined;
  allowedFunctionNames: string[];
  search: boolean;
}

interface UsageMetadata {
  promptTokenCount: number;
  candidatesTokenCount: number;
  totalTokenCount: number;
}

type TextReply = { kind: 'text'; returned: string[]; finishReason: FinishReason; lastUserText: string };
type Reply = TextReply | { kind: 'call'; name: string; args: Record<string, unknown> };

export function generateContent(ctx: RequestContext): Promise<void> {
  return answer(ctx, false);
}

export function streamGenerateContent(ctx: RequestContext): Promise<void> {
  if (queryParam(ctx, 'alt') !== 'sse') {
    ctx.error(400, 'The emulator streams only as server-sent events: add ?alt=sse to streamGenerateContent.');
    return Promise.resolve();
  }
  return answer(ctx, true);
}

async function answer(ctx: RequestContext, stream: boolean): Promise<void> {
  const parsed = parseRequest(ctx.body, decodeModel(ctx.params[0] ?? ''));
  if (typeof parsed === 'string') {
    ctx.error(400, parsed);
    return;
  }
  const noUsage = ctx.controls.noUsage === true;
  const scripted = ctx.nextScriptedTurn(parsed.model);
  if (scripted !== undefined && 'toolCall' in scripted && !parsed.functions.includes(scripted.toolCall.name)) {
    ctx.error(400, `The scripted call of '${scripted.toolCall.name}' names no function declaration of this request.`);
    return;
  }
  const reply = scripted === undefined ? decideReply(parsed) : scriptedReply(parsed, scripted);
  const prompt = promptTokens(parsed);
  const responseId = randomId(22);
  /** usageMetadata (unless @no-usage), modelVersion and responseId, as every answer ends. */
  const tail = (candidatesTokens: number): Record<string, unknown> => ({
    ...(noUsage ? {} : { usageMetadata: usage(prompt, candidatesTokens * parsed.candidateCount) }),
    modelVersion: parsed.model,
    responseId,
  });

  if (reply.kind === 'call') {
    const parts = [{ functionCall: { name: reply.name, args: reply.args } }];
    const response = { candidates: candidates(parsed, () => ({ parts }), 'STOP'), ...tail(1 + countWords(JSON.stringify(reply.args))) };
    if (!stream) ctx.json(200, response);
    else if (ctx.startStream() && (await ctx.event(JSON.stringify(response)))) ctx.endStream();
    return;
  }

  const metadata = (candidate: Record<string, unknown>): void => {
    if (parsed.search) candidate.groundingMetadata = grounding(reply);
  };
  if (!stream) {
    const text = reply.returned.join(' ');
    const logprobs = logprobsResult(parsed, reply.returned, 0);
    const make = (): Record<string, unknown> => ({ parts: [{ text }], ...(logprobs ? { logprobsResult: logprobs } : {}) });
    ctx.json(200, { candidates: candidates(parsed, make, reply.finishReason, metadata), ...tail(reply.returned.length) });
    return;
  }

  if (!ctx.startStream()) return;
  for (let w = 0; w < reply.returned.length; w++) {
    const last = w === reply.returned.length - 1;
    const parts = [{ text: w === 0 ? reply.returned[w] : ` ${reply.returned[w]}` }];
    const logprobs = logprobsResult(parsed, [reply.returned[w]], w);
    const make = (): Record<string, unknown> => ({ parts, ...(logprobs ? { logprobsResult: logprobs } : {}) });
    const event = { candidates: candidates(parsed, make, last ? reply.finishReason : undefined, last ? metadata : undefined), ...tail(w + 1) };
    if (!(await ctx.event(JSON.stringify(event)))) return;
  }
  if (reply.returned.length === 0) {
    // Nothing to say (e.g. a stop sequence at the very start): one event with the finish reason.
    const event = { candidates: candidates(parsed, () => ({ parts: [{ text: '' }] }), reply.finishReason, metadata), ...tail(0) };
    if (!(await ctx.event(JSON.stringify(event)))) return;
  }
  ctx.endStream();
}

/**
 * `candidateCount` identical candidates. `make` gives the parts (and logprobsResult);
 * a finish reason, when given, is set with `final` adding the last-event extras.
 */
function candidates(
  request: GenerateRequest,
  make: () => Record<string, unknown>,
  finishReason: FinishReason | undefined,
  final?: (candidate: Record<string, unknown>) => void,
): unknown[] {
  const list: unknown[] = [];
  for (let index = 0; index < request.candidateCount; index++) {
    const { parts, logprobsResult: logprobs } = make();
    const candidate: Record<string, unknown> = { content: { parts, role: 'model' } };
    if (finishReason !== undefined) candidate.finishReason = finishReason;
    candidate.index = index;
    if (logprobs !== undefined) candidate.logprobsResult = logprobs;
    final?.(candidate);
    list.push(candidate);
  }
  return list;
}

/** One emulated web source supporting the whole reply (startIndex 0 is omitted, as in proto3 JSON). */
function grounding(reply: TextReply): unknown {
  const text = reply.returned.join(' ');
  return {
    webSearchQueries: [reply.lastUserText],
    groundingChunks: [{ web: { ...EMULATED_SOURCE } }],
    groundingSupports: text === '' ? [] : [{ segment: { endIndex: Buffer.byteLength(text, 'utf8'), text }, groundingChunkIndices: [0] }],
  };
}

/** logprobsResult for `returned` words, the first at `position` in the reply (see the header). */
function logprobsResult(request: GenerateRequest, returned: string[], position: number): unknown {
  const top = request.topLogprobs;
  if (top === undefined) return undefined;
  const chosenCandidates: unknown[] = [];
  const topCandidates: unknown[] = [];
  returned.forEach((word, i) => {
    const at = position + i;
    const token = at === 0 ? word : ` ${word}`;
    const logProbability = round(-0.1 * (at % 5) - 0.01);
    chosenCandidates.push({ token, logProbability });
    const alternatives = [];
    for (let k = 0; k < top; k++) alternatives.push({ token: k === 0 ? token : `${token}_alt${k}`, logProbability: round(logProbability - k) });
    topCandidates.push({ candidates: alternatives });
  });
  return { topCandidates, chosenCandidates };
}

const round = (value: number): number => Math.round(value * 10_000) / 10_000;

function usage(prompt: number, candidatesTokens: number): UsageMetadata {
  return { promptTokenCount: prompt, candidatesTokenCount: candidatesTokens, totalTokenCount: prompt + candidatesTokens };
}

function decideReply(request: GenerateRequest): Reply {
  const lastUserText = lastUserTextOf(request);
  const call = (name: string): Reply => {
    const parameters = request.parameters.get(name);
    return { kind: 'call', name, args: toolArguments(parameters, answerSeed(name, parameters, lastUserText)) };
  };
  if (request.functions.length > 0 && request.mode === 'ANY') return call(request.allowedFunctionNames[0] ?? request.functions[0]);

  const lastContent = request.contents[request.contents.length - 1];
  const results = lastContent.parts.filter((part) => isRecord(part.functionResponse));
  const json = request.format !== undefined ? jsonAnswerText(request.format, lastUserText) : undefined;
  if (results.length > 0) {
    return textReply(request, json ?? TOOL_REPLY_PREFIX + results.map((part) => functionResponseText(part.functionResponse)).join(' '), lastUserText);
  }
  if (request.functions.length > 0 && request.mode !== 'NONE' && WEATHER.test(lastUserText)) return call(request.functions[0]);
  return textReply(request, json ?? REPLY_PREFIX + lastUserText, lastUserText);
}

/** A turn a test scripted (../scripts.ts), in place of the rules above. */
function scriptedReply(request: GenerateRequest, turn: ScriptedTurn): Reply {
  if ('toolCall' in turn) return { kind: 'call', name: turn.toolCall.name, args: turn.toolCall.arguments };
  return textReply(request, turn.text, lastUserTextOf(request));
}

/** Applies the stop sequences, the content filter trigger and the token limit to a text reply. */
function textReply(request: GenerateRequest, text: string, lastUserText: string): TextReply {
  let returned = words(text);
  let finishReason: FinishReason = 'STOP';
  if (request.stopSequences.length > 0) {
    const normalised = returned.join(' ');
    let cut = -1;
    for (const sequence of request.stopSequences) {
      const at = normalised.indexOf(sequence);
      if (at !== -1 && (cut === -1 || at < cut)) cut = at;
    }
    if (cut !== -1) returned = words(normalised.slice(0, cut));
  }
  if (FILTER.test(lastUserText)) {
    returned = returned.slice(0, FILTERED_WORDS);
    finishReason = 'SAFETY';
  }
  if (request.maxOutputTokens !== undefined && request.maxOutputTokens < returned.length) {
    returned = returned.slice(0, request.maxOutputTokens);
    finishReason = 'MAX_TOKENS';
  }
  return { kind: 'text', returned, finishReason, lastUserText };
}

function lastUserTextOf(request: GenerateRequest): string {
  for (let i = request.contents.length - 1; i >= 0; i--) {
    const content = request.contents[i];
    if (content.role !== undefined && content.role !== 'user') continue;
    const texts = content.parts.filter((part) => typeof part.text === 'string').map((part) => part.text as string);
    if (texts.length > 0) return texts.join(' ');
  }
  return '';
}

function functionResponseText(value: unknown): string {
  const response = isRecord(value) ? value.response : undefined;
  if (isRecord(response) && typeof response.content === 'string') return response.content;
  return JSON.stringify(response ?? {});
}

function partWords(part: Part): number {
  if (typeof part.text === 'string') return countWords(part.text);
  if (isRecord(part.functionCall)) return 1 + countWords(JSON.stringify(part.functionCall.args ?? {}));
  if (isRecord(part.functionResponse)) return 1 + countWords(functionResponseText(part.functionResponse));
  return 0;
}

function promptTokens(request: GenerateRequest): number {
  let total = 2 + countWords(request.systemText);
  for (const content of request.contents) {
    let contentWords = 0;
    for (const part of content.parts) contentWords += partWords(part);
    total += contentWords + 4;
  }
  return total;
}

function decodeModel(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

function queryParam(ctx: RequestContext, name: string): string | null {
  const url = ctx.req.url ?? '';
  const query = url.indexOf('?');
  return query === -1 ? null : new URLSearchParams(url.slice(query + 1)).get(name);
}

/** Media types Gemini reads inline: images, audio, video, PDF and text. */
const INLINE_MEDIA = /^(image|audio|video|text)\/[\w.+-]+$|^application\/pdf$/;

/** A part's inline data (`inlineData` or `inline_data`, as proto3 JSON takes either) as Google checks it. */
function inlineDataIssue(part: Part, at: string): string | undefined {
  const inline = part.inlineData ?? part.inline_data;
  if (inline === undefined) return undefined;
  if (!isRecord(inline)) return `Invalid value at '${at}.inline_data': expected a Blob.`;
  const mimeType = inline.mimeType ?? inline.mime_type;
  if (typeof mimeType !== 'string' || !INLINE_MEDIA.test(mimeType)) return `Unsupported MIME type: ${String(mimeType)}`;
  const fault = inlineDocumentFault(mimeType, inline.data);
  if (fault === 'base64') return `Invalid value at '${at}.inline_data.data' (TYPE_BYTES), Base64 decoding failed`;
  return fault === 'pdf' ? 'The document has no pages.' : undefined;
}

/** The parsed request, or Google's validation message. */
function parseRequest(body: unknown, model: string): GenerateRequest | string {
  if (!isRecord(body)) return 'Invalid JSON payload received. The request body must be a JSON object.';
  const { contents } = body;
  if (contents === undefined || (Array.isArray(contents) && contents.length === 0)) {
    return '* GenerateContentRequest.contents: contents is not specified';
  }
  if (!Array.isArray(contents)) return "Invalid JSON payload received. Invalid value at 'contents': expected a list of Content.";
  const parsedContents: GenerateRequest['contents'] = [];
  for (let i = 0; i < contents.length; i++) {
    const content: unknown = contents[i];
    if (!isRecord(content) || !Array.isArray(content.parts) || content.parts.length === 0) {
      return `* GenerateContentRequest.contents[${i}].parts: contents.parts must not be empty.`;
    }
    if (content.role !== undefined && content.role !== 'user' && content.role !== 'model') {
      return `* GenerateContentRequest.contents[${i}].role: Please use a valid role: user, model.`;
    }
    const parts = (content.parts as unknown[]).filter(isRecord);
    for (let j = 0; j < parts.length; j++) {
      const issue = inlineDataIssue(parts[j], `contents[${i}].parts[${j}]`);
      if (issue !== undefined) return issue;
    }
    parsedContents.push({ role: content.role, parts });
  }

  let systemText = '';
  if (isRecord(body.systemInstruction) && Array.isArray(body.systemInstruction.parts)) {
    systemText = (body.systemInstruction.parts as unknown[])
      .filter(isRecord)
      .map((part) => (typeof part.text === 'string' ? part.text : ''))
      .join(' ');
  }

  const config = isRecord(body.generationConfig) ? body.generationConfig : {};
  const maxOutputTokens = optionalPositiveInt(config.maxOutputTokens);
  if (Number.isNaN(maxOutputTokens)) return "Invalid value at 'generation_config.max_output_tokens': expected a positive integer.";
  const candidateCount = optionalPositiveInt(config.candidateCount) ?? 1;
  if (Number.isNaN(candidateCount) || candidateCount > MAX_CANDIDATES) {
    return `* GenerateContentRequest.generation_config.candidate_count: must be between 1 and ${MAX_CANDIDATES}.`;
  }
  const stop = config.stopSequences;
  if (stop !== undefined && !(Array.isArray(stop) && stop.every((sequence) => typeof sequence === 'string'))) {
    return "Invalid value at 'generation_config.stop_sequences': expected a list of strings.";
  }
  const stopSequences = ((stop ?? []) as string[]).filter((sequence) => sequence !== '');
  const top = config.logprobs;
  if (top !== undefined && !(typeof top === 'number' && Number.isInteger(top) && top >= 0 && top <= MAX_TOP_LOGPROBS)) {
    return `* GenerateContentRequest.generation_config.logprobs: must be an integer from 0 to ${MAX_TOP_LOGPROBS}.`;
  }
  const topLogprobs = config.responseLogprobs === true ? ((top as number | undefined) ?? 0) : undefined;

  const functions: string[] = [];
  const parameters = new Map<string, unknown>();
  let search = false;
  for (const tool of Array.isArray(body.tools) ? (body.tools as unknown[]) : []) {
    if (!isRecord(tool)) continue;
    if (isRecord(tool.googleSearch) || isRecord(tool.google_search)) search = true;
    const declarations = tool.functionDeclarations ?? tool.function_declarations;
    for (const declaration of Array.isArray(declarations) ? (declarations as unknown[]) : []) {
      if (isRecord(declaration) && typeof declaration.name === 'string' && declaration.name !== '') {
        functions.push(declaration.name);
        parameters.set(declaration.name, declaration.parametersJsonSchema ?? declaration.parameters_json_schema ?? declaration.parameters);
      }
    }
  }
  let mode: Mode = 'AUTO';
  let allowedFunctionNames: string[] = [];
  const callingConfig = isRecord(body.toolConfig) && isRecord(body.toolConfig.functionCallingConfig) ? body.toolConfig.functionCallingConfig : undefined;
  if (callingConfig !== undefined) {
    if (callingConfig.mode === 'ANY' || callingConfig.mode === 'NONE') mode = callingConfig.mode;
    if (Array.isArray(callingConfig.allowedFunctionNames)) {
      allowedFunctionNames = (callingConfig.allowedFunctionNames as unknown[]).filter((name): name is string => typeof name === 'string');
    }
  }

  const mimeType = config.responseMimeType ?? config.response_mime_type;
  const schema = config.responseJsonSchema ?? config.response_json_schema ?? config.responseSchema ?? config.response_schema;
  const format: JsonAnswerFormat | undefined = mimeType !== 'application/json' ? undefined : isRecord(schema) ? { kind: 'schema', schema } : { kind: 'object' };

  return {
    format,
    parameters,
    model,
    contents: parsedContents,
    systemText,
    maxOutputTokens,
    stopSequences,
    candidateCount,
    topLogprobs,
    functions,
    mode,
    allowedFunctionNames,
    search,
  };
}
