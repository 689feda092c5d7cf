// POST /v1/completions: OpenAI's legacy text completions, deterministic, whole or streamed.
//
// Each prompt (a string, strings, or token arrays: one prompt each) is completed with the words
// "Hello from the emulator. You wrote: <the prompt's words>" (a token array: "You sent <n>
// tokens"), and with a `suffix` (fill-in-the-middle) " Then: <the suffix's words>". Every word
// comes with its leading space, so streamed pieces reassemble exactly. The words are cut, the
// earliest limit winning, by `stop` (before the first stop sequence, finish_reason "stop") and
// by `max_tokens` words (default 16, OpenAI's; finish_reason "length"). `echo: true` puts the
// prompt ahead of the text. `n` choices per prompt (indexes prompt × n + choice); `best_of`
// completions are generated per prompt and billed (usage), `n` of them answered. `logprobs: k`
// gives each choice `{tokens, token_logprobs, top_logprobs, text_offset}` over its words.
// usage: prompt_tokens = words of the prompts and suffix (token arrays: their length),
// completion_tokens = words generated (best_of of them per prompt).
// Streams: a `text_completion` chunk per word of each choice, the choices' finish chunks, the
// usage chunk (choices []) with `stream_options.include_usage`, then `[DONE]`. `best_of` above
// 1 cannot stream (400, as OpenAI says). `@no-usage` omits the usage and the usage chunk.
import type { RequestContext } from '../context';
import { isRecord, randomId, words } from '../util';

const DEFAULT_MAX_TOKENS = 16;
const MAX_PROMPTS = 2048;

type Prompt = string | number[];

interface CompletionRequest {
  model: string;
  prompts: Prompt[];
  suffix?: string;
  maxTokens: number;
  stop: string[];
  n: number;
  bestOf: number;
  echo: boolean;
  logprobs?: number;
  stream: boolean;
  includeUsage: boolean;
}

interface Choice {
  index: number;
  /** The generated words, each with its leading space. */
  pieces: string[];
  echo: string;
  finish: 'stop' | 'length';
}

export async function completions(ctx: RequestContext): Promise<void> {
  const request = parseRequest(ctx.body);
  if (typeof request === 'string') {
    ctx.error(400, request);
    return;
  }
  const noUsage = ctx.controls.noUsage === true;
  const id = `cmpl-${randomId()}`;
  const created = Math.floor(Date.now() / 1000);
  const choices: Choice[] = [];
  let promptTokens = typeof request.suffix === 'string' ? words(request.suffix).length : 0;
  let completionTokens = 0;
  request.prompts.forEach((prompt, promptIndex) => {
    promptTokens += typeof prompt === 'string' ? words(prompt).length : prompt.length;
    const { pieces, finish } = completionOf(request, prompt);
    completionTokens += pieces.length * request.bestOf;
    for (let choice = 0; choice < request.n; choice++) {
      choices.push({ index: promptIndex * request.n + choice, pieces, echo: request.echo && typeof prompt === 'string' ? prompt : '', finish });
    }
  });
  const usage = { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens };
  const base = { id, object: 'text_completion', created, model: request.model };
  if (!request.stream) {
    const answered = choices.map((choice) => ({
      text: choice.echo + choice.pieces.join(''),
      index: choice.index,
      logprobs: request.logprobs === undefined ? null : logprobsOf(choice.echo, choice.pieces, request.logprobs),
      finish_reason: choice.finish,
    }));
    ctx.json(200, { ...base, choices: answered, ...(noUsage ? {} : { usage }) });
    return;
  }
  if (!ctx.startStream()) return;
  const send = (choice: Choice, text: string, finish: string | null, content: boolean) =>
    ctx.event(JSON.stringify({ ...base, choices: [{ text, index: choice.index, logprobs: null, finish_reason: finish }] }), undefined, content);
  for (const choice of choices) {
    if (choice.echo !== '' && !(await send(choice, choice.echo, null, false))) return;
    for (const piece of choice.pieces) if (!(await send(choice, piece, null, true))) return;
    if (!(await send(choice, '', choice.finish, false))) return;
  }
  if (request.includeUsage && !noUsage && !(await ctx.event(JSON.stringify({ ...base, choices: [], usage }), undefined, false))) return;
  if (!(await ctx.event('[DONE]', undefined, false))) return;
  ctx.endStream();
}

function completionOf(request: CompletionRequest, prompt: Prompt): { pieces: string[]; finish: 'stop' | 'length' } {
  const said = typeof prompt === 'string' ? `You wrote: ${words(prompt).join(' ')}` : `You sent ${prompt.length} tokens`;
  let text = ` Hello from the emulator. ${said}${request.suffix !== undefined ? ` Then: ${words(request.suffix).join(' ')}` : ''}`;
  let finish: 'stop' | 'length' = 'stop';
  const stopAt = Math.min(...request.stop.map((stop) => text.indexOf(stop)).filter((at) => at >= 0));
  if (Number.isFinite(stopAt)) text = text.slice(0, stopAt);
  let pieces = text.split(/(?= )/).filter((piece) => piece !== '');
  if (pieces.length > request.maxTokens) {
    pieces = pieces.slice(0, request.maxTokens);
    finish = 'length';
  }
  return { pieces, finish };
}

function logprobsOf(echo: string, pieces: string[], top: number) {
  const tokens = [...(echo === '' ? [] : echo.split(/(?= )/)), ...pieces];
  let offset = 0;
  const offsets = tokens.map((token) => {
    const at = offset;
    offset += token.length;
    return at;
  });
  const logprob = (position: number) => -0.1 * (position % 5) - 0.01;
  return {
    tokens,
    token_logprobs: tokens.map((_, position) => logprob(position)),
    top_logprobs: tokens.map((token, position) => Object.fromEntries(Array.from({ length: top }, (_, k) => [k === 0 ? token : `${token}_alt${k}`, logprob(position) - k]))),
    text_offset: offsets,
  };
}

function parseRequest(body: unknown): CompletionRequest | string {
  if (!isRecord(body)) return 'The request body must be a JSON object.';
  const { model, prompt } = body;
  if (typeof model !== 'string' || model === '') return 'you must provide a model parameter';
  const prompts = promptsOf(prompt);
  if (prompts === undefined) return "Invalid 'prompt': expected a string, an array of strings, or token arrays.";
  const count = (value: unknown, fallback: number, min: number, max: number) => {
    if (value === undefined || value === null) return fallback;
    return typeof value === 'number' && Number.isInteger(value) && value >= min && value <= max ? value : Number.NaN;
  };
  const maxTokens = count(body.max_tokens, DEFAULT_MAX_TOKENS, 0, 1_000_000);
  const n = count(body.n, 1, 1, 128);
  const bestOf = count(body.best_of, n, 1, 20);
  const logprobs = body.logprobs === undefined || body.logprobs === null ? undefined : count(body.logprobs, 0, 0, 5);
  if ([maxTokens, n, bestOf, logprobs ?? 0].some(Number.isNaN)) return "Invalid 'max_tokens', 'n', 'best_of' or 'logprobs'.";
  if (bestOf < n) return 'best_of must be greater than or equal to n.';
  const stream = body.stream === true;
  if (stream && bestOf > 1) return 'Cannot stream results with best_of greater than 1.';
  const stop = body.stop === undefined || body.stop === null ? [] : typeof body.stop === 'string' ? [body.stop] : Array.isArray(body.stop) ? body.stop.filter((item): item is string => typeof item === 'string') : [];
  const suffix = typeof body.suffix === 'string' ? body.suffix : undefined;
  const includeUsage = isRecord(body.stream_options) && body.stream_options.include_usage === true;
  return { model, prompts, suffix, maxTokens, stop, n, bestOf, echo: body.echo === true, logprobs, stream, includeUsage };
}

function promptsOf(prompt: unknown): Prompt[] | undefined {
  if (typeof prompt === 'string') return [prompt];
  if (!Array.isArray(prompt) || prompt.length === 0) return undefined;
  if (prompt.every((item) => typeof item === 'number')) return [prompt as number[]];
  if (prompt.length > MAX_PROMPTS) return undefined;
  if (prompt.every((item) => typeof item === 'string')) return prompt as string[];
  if (prompt.every((item) => Array.isArray(item) && item.every((token) => typeof token === 'number'))) return prompt as number[][];
  return undefined;
}
