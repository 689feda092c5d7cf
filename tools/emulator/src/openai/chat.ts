// POST /v1/chat/completions: deterministic echo replies, plain JSON or SSE stream.
//
// Reply: "Hello from the emulator. You said: <text of the last user message>", with
// whitespace normalised to single spaces (so the streamed words reassemble exactly).
//
// Token counting (deliberately simple, see util.words): a token is a whitespace-
// separated word.
//   prompt_tokens     = 2 + sum over messages of (words in its text content + 4)
//   completion_tokens = words in the reply actually returned (times n choices)
// A message's text content is its `content` string, or the `text` of its
// `{type: 'text'}` parts joined with a space; anything else counts as empty.
// `max_tokens` / `max_completion_tokens` (the smaller if both) truncate the reply to
// that many words, and then finish_reason is "length" instead of "stop".
import type { RequestContext } from '../context';
import { countWords, isRecord, optionalPositiveInt, randomId, words } from '../util';

export const REPLY_PREFIX = 'Hello from the emulator. You said: ';
const SYSTEM_FINGERPRINT = 'fp_emulator';
const MAX_CHOICES = 128;

type FinishReason = 'stop' | 'length';

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

interface ChatRequest {
  model: string;
  messages: Record<string, unknown>[];
  maxTokens: number | undefined;
  n: number;
  stream: boolean;
  includeUsage: boolean;
}

interface ValidationError {
  message: string;
  param: string | null;
}

export async function chatCompletions(ctx: RequestContext): Promise<void> {
  const parsed = parseRequest(ctx.body);
  if ('message' in parsed) {
    ctx.error(400, parsed.message, { param: parsed.param });
    return;
  }

  const replyWords = words(REPLY_PREFIX + lastUserText(parsed.messages));
  const truncated = parsed.maxTokens !== undefined && parsed.maxTokens < replyWords.length;
  const returned = truncated ? replyWords.slice(0, parsed.maxTokens) : replyWords;
  const finishReason: FinishReason = truncated ? 'length' : 'stop';
  const usage = chatUsage(promptTokens(parsed.messages), returned.length * parsed.n);
  const id = `chatcmpl-${randomId(29)}`;
  const created = Math.floor(Date.now() / 1000);

  if (parsed.stream) {
    await streamCompletion(ctx, parsed, { id, created, returned, finishReason, usage });
    return;
  }

  const content = returned.join(' ');
  const choices = [];
  for (let index = 0; index < parsed.n; index++) {
    choices.push({
      index,
      message: { role: 'assistant', content, refusal: null, annotations: [] },
      logprobs: null,
      finish_reason: finishReason,
    });
  }
  ctx.json(200, {
    id,
    object: 'chat.completion',
    created,
    model: parsed.model,
    choices,
    usage,
    service_tier: 'default',
    system_fingerprint: SYSTEM_FINGERPRINT,
  });
}

interface Completion {
  id: string;
  created: number;
  returned: string[];
  finishReason: FinishReason;
  usage: ChatUsage;
}

async function streamCompletion(ctx: RequestContext, request: ChatRequest, completion: Completion): Promise<void> {
  const { id, created, returned, finishReason, usage } = completion;
  const chunk = (choices: unknown[], chunkUsage: ChatUsage | null = null): string =>
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
  const choice = (index: number, delta: Record<string, unknown>, finish: FinishReason | null): unknown => ({
    index,
    delta,
    logprobs: null,
    finish_reason: finish,
  });

  if (!ctx.startStream()) return;
  for (let i = 0; i < request.n; i++) {
    if (!(await ctx.event(chunk([choice(i, { role: 'assistant', content: '', refusal: null }, null)])))) return;
  }
  for (let w = 0; w < returned.length; w++) {
    const content = w === 0 ? returned[w] : ` ${returned[w]}`;
    for (let i = 0; i < request.n; i++) {
      if (!(await ctx.event(chunk([choice(i, { content }, null)])))) return;
    }
  }
  for (let i = 0; i < request.n; i++) {
    if (!(await ctx.event(chunk([choice(i, {}, finishReason)])))) return;
  }
  if (request.includeUsage && !(await ctx.event(chunk([], usage)))) return;
  if (!(await ctx.event('[DONE]'))) return;
  ctx.endStream();
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

  const stream = body.stream === true;
  const includeUsage = stream && isRecord(body.stream_options) && body.stream_options.include_usage === true;
  return { model, messages: objects, maxTokens, n, stream, includeUsage };
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

function chatUsage(prompt: number, completion: number): ChatUsage {
  return {
    prompt_tokens: prompt,
    completion_tokens: completion,
    total_tokens: prompt + completion,
    prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
    completion_tokens_details: {
      reasoning_tokens: 0,
      audio_tokens: 0,
      accepted_prediction_tokens: 0,
      rejected_prediction_tokens: 0,
    },
  };
}
