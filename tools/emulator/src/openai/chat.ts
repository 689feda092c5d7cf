// POST /v1/chat/completions: deterministic replies, plain JSON or SSE stream.
//
// Reply, decided in this order (first match wins):
//   1. Forced tool call: `tool_choice: {type: 'function', function: {name}}` calls that
//      function (`{type: 'custom', custom: {name}}`: that custom tool), whatever the
//      text; `tool_choice: 'required'` calls the first tool of `tools`.
//   2. The last message is a `tool` message: "Tool said: <its text content>".
//   3. The last user message text contains "refuse me" (case-insensitive): a refusal,
//      `content: null`, `refusal: "I can't help with that."`, finish_reason "stop".
//   4. `tools` has a function tool, `tool_choice` is not 'none' and the last user text
//      contains the word "weather" (case-insensitive, whole word): a call to the FIRST
//      function tool, finish_reason "tool_calls".
//   5. Otherwise "Hello from the emulator. You said: <text of the last user message>".
// With `response_format` `json_schema` (or `json_object`), the text of rules 2 and 5 is
// instead compact JSON: a value satisfying `json_schema.schema` (a JSON object with
// `json_object`), made by ../schema-values.ts and seeded by the schema and the last user text.
// Text replies have their whitespace normalised to single spaces (so streamed words
// reassemble exactly). Tool calls: id `call_<24 random alphanumerics>`, function
// arguments satisfying the function's `parameters` (a `location` is "Paris"; a function
// without parameters gets `{"location":"Paris"}`), seeded by the tool and the last user
// text (custom tools: input `Paris`); `n` choices each get their own call id.
//
// Text replies are then cut, the earliest limit winning:
//   `stop` (string or array): the reply is cut before the first occurrence of a stop
//     sequence; finish_reason "stop".
//   "trigger filter" in the last user text (case-insensitive): the first 3 words,
//     finish_reason "content_filter".
//   `max_tokens` / `max_completion_tokens` (the smaller if both): that many words,
//     finish_reason "length" (a limit at or above the reply length does not cut).
//
// Other request fields:
//   `logprobs: true`: each choice gets `logprobs: {content: [...], refusal: null}`, one
//     entry per returned word: token = the word, with its leading space except the
//     first; logprob = -0.1 * (position % 5) - 0.01 (position from 0); bytes = the UTF-8
//     bytes of the token; `top_logprobs` (0-20, default 0) alternatives, the first the
//     token itself, then `<token>_alt<k>` with logprob - k. Refusals put the entries
//     under `refusal` (content null); tool calls have both null. Streams: each content
//     (or refusal) chunk carries `logprobs: {content: [its entry], refusal: null}`.
//     With the `@top-logprobs=<token>:<logprob>,...` model control (non-streamed text replies),
//     the first word is the most likely given token and its entry lists the given
//     alternatives instead (../controls.ts).
//   `web_search_options` (object) or `enable_search: true`: a text reply's message gets
//     `annotations: [{type: 'url_citation', url_citation: {start_index: 0, end_index:
//     <content length - 1>, title: 'Emulated source', url: 'https://example.com/emulated'}}]`
//     (non-stream only; streams ignore it).
//   `modalities` including 'audio' (with `audio: {voice, format}`, else a 400; formats wav,
//     mp3, flac, opus, pcm16, aac): a text reply is spoken, as OpenAI's audio models answer:
//     `content: null`, `message.audio: {id: 'audio_<32>', data: <base64 of emulatedAudio(text,
//     format)>, expires_at: created + 3600, transcript: <the reply text>}`; usage adds
//     4 audio tokens per word to completion_tokens and reports them in
//     completion_tokens_details.audio_tokens (bytes and tokens: ./audio.ts). Refusals and tool
//     calls are not spoken. Streams send, per choice, the role chunk `{role, content: null,
//     refusal: null}`, then `delta.audio` pieces: `{content: null, audio: {id, transcript:
//     <first word>}}`, `{audio: {transcript: ' <word>'}}` per further word, `{audio: {id,
//     data}}` then `{audio: {data}}` (1920 decoded bytes each, every piece whole base64),
//     then `{audio: {id, expires_at}}`, then the finish chunk. Transcript and data pieces count
//     as content for @fail-after.
//   Streamed tool calls arrive as OpenAI sends them: a first chunk with the role and
//     `delta.tool_calls: [{index: 0, id, type: 'function', function: {name, arguments: ''}}]`,
//     then argument fragments of 5 characters `{index: 0, function: {arguments: '{"loc'}}`, ...
//     (custom tools: `custom: {name, input: ''}` then `custom: {input: ...}`), then
//     finish_reason "tool_calls". Streamed refusals arrive as `delta.refusal` words.
//
// A `file` part is checked as OpenAI checks it (fileDataIssue): a `file_id`, or `file_data` as
// a base64 data URL, a PDF's bytes being a PDF; anything else is a 400 naming the field.
//
// Token counting (deliberately simple, see util.words): a token is a whitespace-
// separated word.
//   prompt_tokens     = 2 + sum over messages of (words in its text content + 4)
//   completion_tokens = words returned (text or refusal); a tool call counts
//                       1 (its name) + words in its arguments/input (1 for the fixed
//                       ones); times n choices
//   prompt_tokens_details.cached_tokens = floor(prompt_tokens / 2) when any message
//     content part has `cache_control`, else 0
// A message's text content is its `content` string, or the `text` of its
// `{type: 'text'}` parts joined with a space; anything else counts as empty.
//
// Model-name controls (../controls.ts): the model is reported without its suffixes;
// `@no-usage` omits `usage` from the response and never sends the usage chunk, even
// with `stream_options.include_usage`; `@fail-after=<n>` counts word, refusal and
// tool-argument chunks as content.
import type { RequestContext } from '../context';
import { dataUrlParts, inlineDocumentFault } from '../documents';
import type { ScriptedTurn } from '../scripts';
import { anyJsonObject, answerSeed, toolArguments, valueForSchema } from '../schema-values';
import { countWords, isRecord, optionalPositiveInt, randomId, words } from '../util';
import { AUDIO_EXPIRY_SECONDS, audioDataPieces, audioTokens, emulatedAudio, parseAudioRequest, type AudioRequest } from './audio';

export const REPLY_PREFIX = 'Hello from the emulator. You said: ';
export const TOOL_REPLY_PREFIX = 'Tool said: ';
export const REFUSAL = "I can't help with that.";
export const CUSTOM_TOOL_INPUT = 'Paris';
export const CITATION = { title: 'Emulated source', url: 'https://example.com/emulated' } as const;
const SYSTEM_FINGERPRINT = 'fp_emulator';
/** Stands for a chunk's choices while its envelope is serialized (no id or model holds it). */
const CHOICES_MARK = '\u0000choices\u0000';
const MAX_CHOICES = 128;
const MAX_TOP_LOGPROBS = 20;
const MAX_STOP_SEQUENCES = 4;
const FILTERED_WORDS = 3;
const ARGUMENT_FRAGMENT = 5;

const WEATHER = /\bweather\b/i;
const REFUSE = /refuse me/i;
const FILTER = /trigger filter/i;

type FinishReason = 'stop' | 'length' | 'tool_calls' | 'content_filter';

export interface ChatUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
  prompt_tokens_details: { cached_tokens: number; audio_tokens: number };
  completion_tokens_details: {
    reasoning_tokens: number;
    audio_tokens: number;
    accepted_prediction_tokens: number;
    rejected_prediction_tokens: number;
  };
}

interface Tool {
  type: 'function' | 'custom';
  name: string;
  /** A function's `parameters` schema, as declared. */
  parameters?: unknown;
}

/** What `response_format` asks the text of an answer to be: JSON satisfying a schema, or any JSON object. */
export type JsonAnswerFormat = { kind: 'schema'; schema: unknown } | { kind: 'object' };

type ToolChoice = { kind: 'none' } | { kind: 'auto' } | { kind: 'required' } | { kind: 'forced'; tool: Tool };

interface ChatRequest {
  model: string;
  messages: Record<string, unknown>[];
  maxTokens: number | undefined;
  n: number;
  stream: boolean;
  includeUsage: boolean;
  tools: Tool[];
  toolChoice: ToolChoice;
  /** Alternatives per logprobs entry; undefined when logprobs are not requested. */
  topLogprobs: number | undefined;
  stop: string[];
  search: boolean;
  /** Audio output (`modalities` with 'audio'), see ./audio.ts. */
  audio: AudioRequest | undefined;
  /** `response_format` json_schema / json_object. */
  format: JsonAnswerFormat | undefined;
}

interface ValidationError {
  message: string;
  param: string | null;
}

type Reply =
  | { kind: 'text'; returned: string[]; finishReason: FinishReason }
  | { kind: 'refusal'; returned: string[] }
  | { kind: 'tool_call'; tool: Tool; payload: string };

interface LogprobEntry {
  token: string;
  logprob: number;
  bytes: number[];
  top_logprobs: { token: string; logprob: number; bytes: number[] }[];
}

export async function chatCompletions(ctx: RequestContext): Promise<void> {
  const parsed = parseRequest(ctx.body);
  if ('message' in parsed) {
    ctx.error(400, parsed.message, { param: parsed.param });
    return;
  }
  const noUsage = ctx.controls.noUsage === true;
  if (noUsage) parsed.includeUsage = false;

  const scripted = ctx.nextScriptedTurn(parsed.model);
  const scriptedAnswer = scripted === undefined ? undefined : scriptedReply(parsed, scripted);
  if (typeof scriptedAnswer === 'string') {
    ctx.error(400, scriptedAnswer, { param: 'tools' });
    return;
  }
  const forcedTop = parsed.topLogprobs !== undefined && !parsed.stream ? ctx.controls.topLogprobs : undefined;
  const reply = withForcedFirstToken(scriptedAnswer ?? decideReply(parsed), forcedTop);
  const spoken = reply.kind === 'text' && parsed.audio !== undefined ? audioTokens(reply.returned.length) : 0;
  const usage = chatUsage(promptTokens(parsed.messages), (completionTokens(reply) + spoken) * parsed.n, hasCacheControl(parsed.messages), spoken * parsed.n);
  const id = `chatcmpl-${randomId(29)}`;
  const created = Math.floor(Date.now() / 1000);
  const callIds = reply.kind === 'tool_call' ? Array.from({ length: parsed.n }, () => `call_${randomId(24)}`) : [];
  const audioIds = reply.kind === 'text' && parsed.audio !== undefined ? Array.from({ length: parsed.n }, () => `audio_${randomId(32)}`) : [];

  if (parsed.stream) {
    await streamCompletion(ctx, parsed, { id, created, reply, usage, callIds, audioIds });
    return;
  }

  const choices = [];
  for (let index = 0; index < parsed.n; index++) {
    choices.push({
      index,
      message: responseMessage(parsed, reply, callIds[index] ?? '', audioIds[index] === undefined ? undefined : { id: audioIds[index], created }),
      logprobs: choiceLogprobs(parsed, reply, forcedTop),
      finish_reason: finishReasonOf(reply),
    });
  }
  ctx.json(200, {
    id,
    object: 'chat.completion',
    created,
    model: parsed.model,
    choices,
    ...(noUsage ? {} : { usage }),
    service_tier: 'default',
    system_fingerprint: SYSTEM_FINGERPRINT,
  });
}

function decideReply(request: ChatRequest): Reply {
  const { toolChoice, tools, messages } = request;
  const userText = lastUserText(messages);
  if (toolChoice.kind === 'forced') return toolCall(toolChoice.tool, userText);
  if (toolChoice.kind === 'required' && tools.length > 0) return toolCall(tools[0], userText);

  const last = messages[messages.length - 1];
  if (last.role === 'tool') return textReply(request, request.format !== undefined ? jsonAnswerText(request.format, userText) : TOOL_REPLY_PREFIX + messageText(last.content));

  if (REFUSE.test(userText)) return { kind: 'refusal', returned: words(REFUSAL) };
  if (toolChoice.kind !== 'none' && WEATHER.test(userText)) {
    const firstFunction = tools.find((tool) => tool.type === 'function');
    if (firstFunction !== undefined) return toolCall(firstFunction, userText);
  }
  return textReply(request, request.format !== undefined ? jsonAnswerText(request.format, userText) : REPLY_PREFIX + userText);
}

/** The JSON text answering a response format (compact: its words are the stream's pieces). */
export function jsonAnswerText(format: JsonAnswerFormat, prompt: string): string {
  const value = format.kind === 'schema' ? valueForSchema(format.schema, answerSeed(format.schema, prompt)) : anyJsonObject(answerSeed('json_object', prompt));
  return JSON.stringify(value);
}

/** `response_format` of a chat request (Azure's and OpenAI's alike); undefined for text or none. */
export function parseResponseFormat(value: unknown): JsonAnswerFormat | undefined | ValidationError {
  if (value === undefined || value === null) return undefined;
  if (!isRecord(value)) return { message: "Invalid type for 'response_format': expected an object.", param: 'response_format' };
  if (value.type === 'text') return undefined;
  if (value.type === 'json_object') return { kind: 'object' };
  if (value.type === 'json_schema') {
    const spec = value.json_schema;
    if (!isRecord(spec) || typeof spec.name !== 'string' || spec.name === '') return { message: "Missing required parameter: 'response_format.json_schema.name'.", param: 'response_format.json_schema.name' };
    return { kind: 'schema', schema: isRecord(spec.schema) ? spec.schema : {} };
  }
  return { message: "Invalid value for 'response_format.type': supported values are 'text', 'json_object' and 'json_schema'.", param: 'response_format.type' };
}

/** A turn a test scripted (../scripts.ts); a call of a tool the request does not declare is the message of a 400. */
function scriptedReply(request: ChatRequest, turn: ScriptedTurn): Reply | string {
  if ('text' in turn) return textReply(request, turn.text);
  const { name, arguments: args } = turn.toolCall;
  const tool = request.tools.find((candidate) => candidate.type === 'function' && candidate.name === name);
  if (tool === undefined) return `The scripted call of '${name}' names no function tool of this request.`;
  return { kind: 'tool_call', tool, payload: JSON.stringify(args) };
}

function toolCall(tool: Tool, prompt: string): Reply {
  const payload = tool.type === 'function' ? JSON.stringify(toolArguments(tool.parameters, answerSeed(tool.name, tool.parameters, prompt))) : CUSTOM_TOOL_INPUT;
  return { kind: 'tool_call', tool, payload };
}

/** Applies `stop`, the content filter trigger and the token limit to a text reply. */
function textReply(request: ChatRequest, text: string): Reply {
  let returned = words(text);
  let finishReason: FinishReason = 'stop';
  if (request.stop.length > 0) {
    const normalised = returned.join(' ');
    let cut = -1;
    for (const sequence of request.stop) {
      const at = normalised.indexOf(sequence);
      if (at !== -1 && (cut === -1 || at < cut)) cut = at;
    }
    if (cut !== -1) returned = words(normalised.slice(0, cut));
  }
  if (FILTER.test(lastUserText(request.messages))) {
    returned = returned.slice(0, FILTERED_WORDS);
    finishReason = 'content_filter';
  }
  if (request.maxTokens !== undefined && request.maxTokens < returned.length) {
    returned = returned.slice(0, request.maxTokens);
    finishReason = 'length';
  }
  return { kind: 'text', returned, finishReason };
}

function finishReasonOf(reply: Reply): FinishReason {
  if (reply.kind === 'text') return reply.finishReason;
  return reply.kind === 'tool_call' ? 'tool_calls' : 'stop';
}

function completionTokens(reply: Reply): number {
  return reply.kind === 'tool_call' ? 1 + countWords(reply.payload) : reply.returned.length;
}

function responseMessage(request: ChatRequest, reply: Reply, callId: string, audio?: { id: string; created: number }): Record<string, unknown> {
  if (reply.kind === 'tool_call') {
    return { role: 'assistant', content: null, tool_calls: [wholeToolCall(reply, callId)], refusal: null, annotations: [] };
  }
  if (reply.kind === 'refusal') return { role: 'assistant', content: null, refusal: reply.returned.join(' '), annotations: [] };
  const content = reply.returned.join(' ');
  if (audio !== undefined && request.audio !== undefined) {
    // Spoken answers carry their text as the audio's transcript, not as content.
    const data = emulatedAudio(content, request.audio.format).toString('base64');
    return {
      role: 'assistant',
      content: null,
      refusal: null,
      annotations: [],
      audio: { id: audio.id, data, expires_at: audio.created + AUDIO_EXPIRY_SECONDS, transcript: content },
    };
  }
  const annotations =
    request.search && content !== ''
      ? [{ type: 'url_citation', url_citation: { start_index: 0, end_index: content.length - 1, ...CITATION } }]
      : [];
  return { role: 'assistant', content, refusal: null, annotations };
}

function wholeToolCall(reply: Reply & { kind: 'tool_call' }, id: string): Record<string, unknown> {
  const { tool, payload } = reply;
  return tool.type === 'function'
    ? { id, type: 'function', function: { name: tool.name, arguments: payload } }
    : { id, type: 'custom', custom: { name: tool.name, input: payload } };
}

/** `@top-logprobs`: a text reply starts with the most likely of the given tokens. */
function withForcedFirstToken(reply: Reply, forced: ReadonlyArray<{ token: string }> | undefined): Reply {
  if (forced === undefined || reply.kind !== 'text' || reply.returned.length === 0) return reply;
  return { ...reply, returned: [forced[0].token.trim(), ...reply.returned.slice(1)] };
}

function choiceLogprobs(request: ChatRequest, reply: Reply, forced?: ReadonlyArray<{ token: string; logprob: number }>): unknown {
  const top = request.topLogprobs;
  if (top === undefined) return null;
  if (reply.kind === 'tool_call') return { content: null, refusal: null };
  const entries = reply.returned.map((word, position) => (position === 0 && forced !== undefined && reply.kind === 'text' ? forcedEntry(forced, top) : logprobEntry(word, position, top)));
  return reply.kind === 'refusal' ? { content: null, refusal: entries } : { content: entries, refusal: null };
}

function logprobEntry(word: string, position: number, top: number): LogprobEntry {
  const token = position === 0 ? word : ` ${word}`;
  const logprob = round(-0.1 * (position % 5) - 0.01);
  const alternatives = [];
  for (let k = 0; k < top; k++) {
    const alternative = k === 0 ? token : `${token}_alt${k}`;
    alternatives.push({ token: alternative, logprob: round(logprob - k), bytes: utf8Bytes(alternative) });
  }
  return { token, logprob, bytes: utf8Bytes(token), top_logprobs: alternatives };
}

function forcedEntry(forced: ReadonlyArray<{ token: string; logprob: number }>, top: number): LogprobEntry {
  const [first] = forced;
  return {
    token: first.token,
    logprob: first.logprob,
    bytes: utf8Bytes(first.token),
    top_logprobs: forced.slice(0, top).map(({ token, logprob }) => ({ token, logprob, bytes: utf8Bytes(token) })),
  };
}

const round = (value: number): number => Math.round(value * 10_000) / 10_000;
const utf8Bytes = (text: string): number[] => Array.from(Buffer.from(text, 'utf8'));

interface Completion {
  id: string;
  created: number;
  reply: Reply;
  usage: ChatUsage;
  callIds: string[];
  /** One audio id per choice when the reply is spoken, else empty. */
  audioIds: string[];
}

async function streamCompletion(ctx: RequestContext, request: ChatRequest, completion: Completion): Promise<void> {
  const { id, created, reply, usage, callIds, audioIds } = completion;
  const chunkOf = (choices: unknown, chunkUsage: ChatUsage | null = null): string =>
    JSON.stringify({
      id,
      object: 'chat.completion.chunk',
      created,
      model: request.model,
      service_tier: 'default',
      system_fingerprint: SYSTEM_FINGERPRINT,
      choices,
      // With include_usage, OpenAI puts `usage: null` on every chunk but the last.
      ...(request.includeUsage ? { usage: chunkUsage } : {}),
    });
  // Every chunk but the usage chunk is the same text around its choices: made once, the
  // choices' JSON put in per chunk (the same bytes as serializing each chunk whole).
  const [before, after, ...more] = chunkOf(CHOICES_MARK).split(JSON.stringify(CHOICES_MARK));
  const envelope = more.length === 0 && after !== undefined ? { before, after } : undefined;
  const chunk = (choices: unknown[], chunkUsage: ChatUsage | null = null): string =>
    envelope === undefined || chunkUsage !== null ? chunkOf(choices, chunkUsage) : envelope.before + JSON.stringify(choices) + envelope.after;
  const choice = (index: number, delta: Record<string, unknown>, finish: FinishReason | null, logprobs: unknown = null): unknown => ({
    index,
    delta,
    logprobs,
    finish_reason: finish,
  });
  /** One event per choice; `content` marks generated content (for @fail-after). */
  const send = async (content: boolean, make: (index: number) => unknown): Promise<boolean> => {
    for (let i = 0; i < request.n; i++) {
      if (!(await ctx.event(chunk([make(i)]), undefined, content))) return false;
    }
    return true;
  };
  /** As `send`, for a word of text without logprobs: the choice's JSON written out, as JSON.stringify would write it. */
  const sendWord = async (field: string, text: string): Promise<boolean> => {
    if (envelope === undefined) return send(true, (i) => choice(i, { [field]: text }, null));
    const delta = `{${JSON.stringify(field)}:${JSON.stringify(text)}}`;
    for (let i = 0; i < request.n; i++) {
      const data = `${envelope.before}[{"index":${i},"delta":${delta},"logprobs":null,"finish_reason":null}]${envelope.after}`;
      if (!(await ctx.event(data, undefined, true))) return false;
    }
    return true;
  };

  if (!ctx.startStream()) return;
  if (reply.kind === 'text' && request.audio !== undefined && audioIds.length > 0) {
    // As OpenAI streams audio: the role, then `delta.audio` pieces: the id with the first
    // transcript word, the other transcript words, the base64 data (the id again on the
    // first piece), and last the id with `expires_at`.
    const format = request.audio.format;
    const transcript = reply.returned.join(' ');
    const pieces = audioDataPieces(emulatedAudio(transcript, format));
    if (!(await send(false, (i) => choice(i, { role: 'assistant', content: null, refusal: null }, null)))) return;
    for (let w = 0; w < reply.returned.length; w++) {
      const text = w === 0 ? reply.returned[w] : ` ${reply.returned[w]}`;
      const delta = (i: number) => (w === 0 ? { content: null, audio: { id: audioIds[i], transcript: text } } : { audio: { transcript: text } });
      if (!(await send(true, (i) => choice(i, delta(i), null)))) return;
    }
    for (let p = 0; p < pieces.length; p++) {
      const delta = (i: number) => (p === 0 ? { audio: { id: audioIds[i], data: pieces[p] } } : { audio: { data: pieces[p] } });
      if (!(await send(true, (i) => choice(i, delta(i), null)))) return;
    }
    if (!(await send(false, (i) => choice(i, { audio: { id: audioIds[i], expires_at: created + AUDIO_EXPIRY_SECONDS } }, null)))) return;
  } else if (reply.kind === 'tool_call') {
    const { tool, payload } = reply;
    const head = (i: number): Record<string, unknown> =>
      tool.type === 'function'
        ? { index: 0, id: callIds[i], type: 'function', function: { name: tool.name, arguments: '' } }
        : { index: 0, id: callIds[i], type: 'custom', custom: { name: tool.name, input: '' } };
    if (!(await send(false, (i) => choice(i, { role: 'assistant', content: null, tool_calls: [head(i)], refusal: null }, null)))) return;
    for (let at = 0; at < payload.length; at += ARGUMENT_FRAGMENT) {
      const fragment = payload.slice(at, at + ARGUMENT_FRAGMENT);
      const call = tool.type === 'function' ? { index: 0, function: { arguments: fragment } } : { index: 0, custom: { input: fragment } };
      if (!(await send(true, (i) => choice(i, { tool_calls: [call] }, null)))) return;
    }
  } else {
    const field = reply.kind === 'refusal' ? 'refusal' : 'content';
    const first =
      reply.kind === 'refusal' ? { role: 'assistant', content: null, refusal: '' } : { role: 'assistant', content: '', refusal: null };
    if (!(await send(false, (i) => choice(i, first, null)))) return;
    const top = request.topLogprobs;
    for (let w = 0; w < reply.returned.length; w++) {
      const text = w === 0 ? reply.returned[w] : ` ${reply.returned[w]}`;
      if (top === undefined) {
        if (!(await sendWord(field, text))) return;
        continue;
      }
      const entry = [logprobEntry(reply.returned[w], w, top)];
      const logprobs = reply.kind === 'refusal' ? { content: null, refusal: entry } : { content: entry, refusal: null };
      if (!(await send(true, (i) => choice(i, { [field]: text }, null, logprobs)))) return;
    }
  }
  if (!(await send(false, (i) => choice(i, {}, finishReasonOf(reply))))) return;
  if (request.includeUsage && !(await ctx.event(chunk([], usage), undefined, false))) return;
  if (!(await ctx.event('[DONE]', undefined, false))) return;
  ctx.endStream();
}

/** A file given inline (`file_data`, a base64 data URL) or by `file_id`, as OpenAI checks it (chat `file` parts, Responses `input_file` parts). */
export function fileDataIssue(file: unknown, at: string): ValidationError | undefined {
  if (!isRecord(file)) return { message: `Invalid type for '${at}': expected an object.`, param: at };
  if (typeof file.file_id === 'string' && file.file_id !== '') return undefined;
  if (file.file_url !== undefined && typeof file.file_url === 'string') return undefined;
  const param = `${at}.file_data`;
  const parts = dataUrlParts(file.file_data);
  if (parts === undefined) return { message: `Invalid file data: '${param}'. Expected a base64-encoded data URL (e.g. 'data:application/pdf;base64,SGVsbG8sIFdvcmxkIQ==').`, param };
  const fault = inlineDocumentFault(parts.mediaType, parts.data);
  if (fault === 'base64') return { message: `Invalid file data: '${param}'. The data is not valid base64.`, param };
  return fault === 'pdf' ? { message: `Invalid file data: '${param}'. The file is not a valid PDF.`, param } : undefined;
}

function parseRequest(body: unknown): ChatRequest | ValidationError {
  if (!isRecord(body)) return { message: 'The request body must be a JSON object.', param: null };
  const { model, messages } = body;
  if (typeof model !== 'string' || model === '') return { message: 'you must provide a model parameter', param: 'model' };
  if (messages === undefined) return { message: "Missing required parameter: 'messages'.", param: 'messages' };
  if (!Array.isArray(messages)) return { message: "Invalid type for 'messages': expected an array of objects.", param: 'messages' };
  if (messages.length === 0) {
    return { message: "Invalid 'messages': empty array. Expected an array with minimum length 1.", param: 'messages' };
  }
  const objects: Record<string, unknown>[] = [];
  for (let i = 0; i < messages.length; i++) {
    const message: unknown = messages[i];
    if (!isRecord(message)) return { message: `Invalid type for 'messages[${i}]': expected an object.`, param: `messages[${i}]` };
    const fileIssue = Array.isArray(message.content) ? message.content.map((part: unknown, j) => (isRecord(part) && part.type === 'file' ? fileDataIssue(part.file, `messages[${i}].content[${j}].file`) : undefined)).find((issue) => issue !== undefined) : undefined;
    if (fileIssue !== undefined) return fileIssue;
    objects.push(message);
  }

  let maxTokens: number | undefined;
  for (const param of ['max_tokens', 'max_completion_tokens'] as const) {
    const limit = optionalPositiveInt(body[param]);
    if (Number.isNaN(limit)) return { message: `Invalid '${param}': expected an integer of at least 1.`, param };
    if (limit !== undefined) maxTokens = maxTokens === undefined ? limit : Math.min(maxTokens, limit);
  }
  const n = optionalPositiveInt(body.n) ?? 1;
  if (Number.isNaN(n) || n > MAX_CHOICES) return { message: `Invalid 'n': expected an integer from 1 to ${MAX_CHOICES}.`, param: 'n' };

  const tools = parseTools(body.tools);
  if (!Array.isArray(tools)) return tools;
  const toolChoice = parseToolChoice(body.tool_choice);
  if ('message' in toolChoice) return toolChoice;

  let topLogprobs: number | undefined;
  const top = body.top_logprobs;
  if (top !== undefined && top !== null && !(typeof top === 'number' && Number.isInteger(top) && top >= 0 && top <= MAX_TOP_LOGPROBS)) {
    return { message: `Invalid 'top_logprobs': expected an integer from 0 to ${MAX_TOP_LOGPROBS}.`, param: 'top_logprobs' };
  }
  if (body.logprobs === true) topLogprobs = typeof top === 'number' ? top : 0;

  const stop = parseStop(body.stop);
  if (!Array.isArray(stop)) return stop;

  const stream = body.stream === true;
  const includeUsage = stream && isRecord(body.stream_options) && body.stream_options.include_usage === true;
  const search = isRecord(body.web_search_options) || body.enable_search === true;
  const audio = parseAudioRequest(body);
  if (audio !== undefined && 'message' in audio) return audio;
  const format = parseResponseFormat(body.response_format);
  if (format !== undefined && 'message' in format) return format;
  return { model, messages: objects, maxTokens, n, stream, includeUsage, tools, toolChoice, topLogprobs, stop, search, audio, format };
}

function parseTools(value: unknown): Tool[] | ValidationError {
  if (value === undefined || value === null) return [];
  if (!Array.isArray(value)) return { message: "Invalid type for 'tools': expected an array of objects.", param: 'tools' };
  const tools: Tool[] = [];
  for (let i = 0; i < value.length; i++) {
    const tool: unknown = value[i];
    if (!isRecord(tool) || (tool.type !== 'function' && tool.type !== 'custom')) {
      return { message: `Invalid value for 'tools[${i}].type': supported values are 'function' and 'custom'.`, param: `tools[${i}].type` };
    }
    const spec = tool.type === 'function' ? tool.function : tool.custom;
    if (!isRecord(spec) || typeof spec.name !== 'string' || spec.name === '') {
      return { message: `Missing required parameter: 'tools[${i}].${tool.type}.name'.`, param: `tools[${i}].${tool.type}.name` };
    }
    tools.push(tool.type === 'function' && spec.parameters !== undefined ? { type: tool.type, name: spec.name, parameters: spec.parameters } : { type: tool.type, name: spec.name });
  }
  return tools;
}

function parseToolChoice(value: unknown): ToolChoice | ValidationError {
  if (value === undefined || value === null || value === 'auto') return { kind: 'auto' };
  if (value === 'none') return { kind: 'none' };
  if (value === 'required') return { kind: 'required' };
  if (isRecord(value) && (value.type === 'function' || value.type === 'custom')) {
    const spec = value.type === 'function' ? value.function : value.custom;
    if (isRecord(spec) && typeof spec.name === 'string' && spec.name !== '') {
      return { kind: 'forced', tool: { type: value.type, name: spec.name } };
    }
  }
  // Other object forms (e.g. `allowed_tools`) behave like 'auto'.
  if (isRecord(value)) return { kind: 'auto' };
  return { message: "Invalid value for 'tool_choice': expected 'none', 'auto', 'required' or a named tool.", param: 'tool_choice' };
}

function parseStop(value: unknown): string[] | ValidationError {
  if (value === undefined || value === null) return [];
  if (typeof value === 'string') return value === '' ? [] : [value];
  if (!Array.isArray(value) || value.length > MAX_STOP_SEQUENCES || !value.every((item) => typeof item === 'string')) {
    return { message: `Invalid 'stop': expected a string or an array of at most ${MAX_STOP_SEQUENCES} strings.`, param: 'stop' };
  }
  return (value as string[]).filter((sequence) => sequence !== '');
}

/** Text content of a message: a string, or its text parts joined with a space. */
export function messageText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  const texts: string[] = [];
  for (const part of content as unknown[]) {
    if (isRecord(part) && part.type === 'text' && typeof part.text === 'string') texts.push(part.text);
  }
  return texts.join(' ');
}

function lastUserText(messages: Record<string, unknown>[]): string {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i].role === 'user') return messageText(messages[i].content);
  }
  return '';
}

function promptTokens(messages: Record<string, unknown>[]): number {
  let total = 2;
  for (const message of messages) total += countWords(messageText(message.content)) + 4;
  return total;
}

/** Whether any message content part carries `cache_control` (cached-token pricing tests). */
function hasCacheControl(messages: Record<string, unknown>[]): boolean {
  return messages.some(
    (message) =>
      Array.isArray(message.content) && (message.content as unknown[]).some((part) => isRecord(part) && part.cache_control !== undefined),
  );
}

function chatUsage(prompt: number, completion: number, cached: boolean, audio = 0): ChatUsage {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: cached ? Math.floor(prompt / 2) : 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: audio,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}
