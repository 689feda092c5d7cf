import { randomBytes } from 'node:crypto';
import type { ChunkStream, StreamedChunk, UpstreamChatChunk, UpstreamChatCompletion, UpstreamUsage } from '@igw/providers';

type ChunkChoice = UpstreamChatChunk['choices'][number];
type CompletionChoice = UpstreamChatCompletion['choices'][number];

/**
 * A chat answer as the response cache keeps it: the whole completion, the usage it was billed
 * with, and, when it was stored from a stream, the stream's choices batch by batch (as the
 * upstream's reads delivered them), so a streamed hit is chunked as the original stream was.
 * Ids and `created` are not kept: every answer gets its own.
 */
export interface CachedChatAnswer {
  version: 1;
  choices: CompletionChoice[];
  usage: UpstreamUsage;
  service_tier?: string | null;
  system_fingerprint?: string | null;
  batches?: ChunkChoice[][][];
  /** Whether the stream's chunks said `usage: null` until the last, as OpenAI's do (a stored whole answer streams so). */
  nullUsage?: boolean;
}

/** The entry of a whole answer. */
export function cachedCompletion(completion: UpstreamChatCompletion, usage: UpstreamUsage): CachedChatAnswer {
  const answer: CachedChatAnswer = { version: 1, choices: completion.choices, usage };
  if (completion.service_tier !== undefined) answer.service_tier = completion.service_tier;
  if (completion.system_fingerprint !== undefined) answer.system_fingerprint = completion.system_fingerprint;
  return answer;
}

/** Whether a stored value is an answer this gateway can serve (an older or foreign value is a miss). */
export function isCachedChatAnswer(value: unknown): value is CachedChatAnswer {
  const answer = value as CachedChatAnswer | null;
  return typeof answer === 'object' && answer !== null && answer.version === 1 && Array.isArray(answer.choices) && typeof answer.usage?.prompt_tokens === 'number';
}

/**
 * Keeps what a stream shows its client, batch by batch, to store it once it ends well; gives up
 * (and keeps nothing more) past `limitChars` characters of deltas, so a long stream costs no
 * more memory than the largest entry the store would take.
 */
export class StreamRecorder {
  private batches: ChunkChoice[][][] | undefined = [];
  private chars = 0;
  private nullUsage = false;
  private serviceTier: string | null | undefined;
  private systemFingerprint: string | null | undefined;

  constructor(private readonly limitChars: number) {}

  read(batch: readonly StreamedChunk[]): void {
    if (!this.batches) return;
    const kept: ChunkChoice[][] = [];
    for (const { chunk } of batch) {
      if (chunk.hiddenText !== undefined || chunk.choices.length === 0) continue;
      if (chunk.usage === null) this.nullUsage = true;
      if (chunk.service_tier !== undefined) this.serviceTier = chunk.service_tier;
      if (chunk.system_fingerprint !== undefined) this.systemFingerprint = chunk.system_fingerprint;
      for (const choice of chunk.choices) this.chars += deltaChars(choice);
      kept.push(chunk.choices);
    }
    if (this.chars > this.limitChars) this.batches = undefined;
    else if (kept.length > 0) this.batches.push(kept);
  }

  /** The entry of the stream read, with the usage it was billed with; undefined when it grew past the limit. */
  answer(usage: UpstreamUsage): CachedChatAnswer | undefined {
    if (!this.batches) return undefined;
    const answer: CachedChatAnswer = { version: 1, choices: assembledChoices(this.batches), usage, batches: this.batches, nullUsage: this.nullUsage };
    if (this.serviceTier !== undefined) answer.service_tier = this.serviceTier;
    if (this.systemFingerprint !== undefined) answer.system_fingerprint = this.systemFingerprint;
    return answer;
  }
}

function deltaChars({ delta }: ChunkChoice): number {
  let chars = 16;
  for (const value of Object.values(delta)) chars += typeof value === 'string' ? value.length : value === undefined || value === null ? 0 : JSON.stringify(value).length;
  return chars;
}

/** The whole message each choice of a stream makes: its deltas' texts joined, its tool calls' pieces joined by index. */
function assembledChoices(batches: ChunkChoice[][][]): CompletionChoice[] {
  const choices = new Map<number, { message: Record<string, unknown> & { role: 'assistant'; content: string | null }; finish_reason: string; logprobs?: { content: unknown[] } }>();
  for (const batch of batches) {
    for (const chunkChoices of batch) {
      for (const { index, delta, finish_reason, logprobs } of chunkChoices) {
        let choice = choices.get(index);
        if (!choice) {
          choice = { message: { role: 'assistant', content: null }, finish_reason: 'stop' };
          choices.set(index, choice);
        }
        const message = choice.message;
        for (const [field, value] of Object.entries(delta)) {
          if (field === 'role' || value === undefined || value === null) continue;
          if (field === 'tool_calls') joinToolCalls(message, value as NonNullable<ChunkChoice['delta']['tool_calls']>);
          else if (typeof value === 'string') message[field] = typeof message[field] === 'string' ? (message[field] as string) + value : value;
          else if (Array.isArray(value)) message[field] = [...((message[field] as unknown[] | undefined) ?? []), ...(value as unknown[])];
          else message[field] = value;
        }
        if (finish_reason) choice.finish_reason = finish_reason;
        const pieces = (logprobs as { content?: unknown[] } | null | undefined)?.content;
        if (Array.isArray(pieces)) choice.logprobs = { content: [...(choice.logprobs?.content ?? []), ...pieces] };
      }
    }
  }
  return [...choices.entries()]
    .sort(([a], [b]) => a - b)
    .map(([index, choice]) => ({ index, message: choice.message, finish_reason: choice.finish_reason, ...(choice.logprobs ? { logprobs: choice.logprobs } : {}) }));
}

type ToolCall = { id?: string; type: 'function'; function: { name: string; arguments: string } };

function joinToolCalls(message: Record<string, unknown>, pieces: NonNullable<ChunkChoice['delta']['tool_calls']>): void {
  const calls = ((message.tool_calls as ToolCall[] | undefined) ??= []);
  for (const piece of pieces) {
    const call = (calls[piece.index] ??= { type: 'function', function: { name: '', arguments: '' } });
    if (piece.id) call.id = piece.id;
    if (piece.function?.name) call.function.name += piece.function.name;
    if (piece.function?.arguments) call.function.arguments += piece.function.arguments;
  }
}

/** An id in OpenAI's form for an answer served from the cache: each hit is an answer of its own. */
export function cachedAnswerId(): string {
  return `chatcmpl-${randomBytes(12).toString('base64url')}`;
}

/** The stored answer as an upstream completion, with its own id and time. */
export function completionOfCached(answer: CachedChatAnswer, model: string): UpstreamChatCompletion {
  const completion: UpstreamChatCompletion = { id: cachedAnswerId(), object: 'chat.completion', created: Math.floor(Date.now() / 1000), model, choices: answer.choices, usage: answer.usage };
  if (answer.service_tier !== undefined) completion.service_tier = answer.service_tier;
  if (answer.system_fingerprint !== undefined) completion.system_fingerprint = answer.system_fingerprint;
  return completion;
}

/**
 * The stored answer as an upstream stream: the original stream's batches when it was one, else
 * one batch of a chunk per choice holding its whole message and a chunk with its finish reason,
 * as OpenAI streams a short answer; then the usage chunk. Every chunk shares one fresh id.
 */
export function streamOfCached(answer: CachedChatAnswer, model: string): ChunkStream {
  const id = cachedAnswerId();
  const created = Math.floor(Date.now() / 1000);
  const chunkOf = (choices: ChunkChoice[], usage?: UpstreamUsage): StreamedChunk => {
    const chunk: UpstreamChatChunk = { id, object: 'chat.completion.chunk', created, model, choices };
    if (answer.service_tier !== undefined) chunk.service_tier = answer.service_tier;
    if (answer.system_fingerprint !== undefined) chunk.system_fingerprint = answer.system_fingerprint;
    if (usage) chunk.usage = usage;
    else if (answer.nullUsage !== false) chunk.usage = null;
    return { chunk };
  };
  const batches: StreamedChunk[][] = (answer.batches ?? [wholeMessageChunks(answer.choices)]).map((batch) => batch.map((choices) => chunkOf(structuredClone(choices))));
  batches.push([chunkOf([], { ...answer.usage })]);
  return {
    async *[Symbol.asyncIterator]() {
      for (const batch of batches) yield batch;
    },
  };
}

function wholeMessageChunks(choices: CompletionChoice[]): ChunkChoice[][] {
  const messages: ChunkChoice[] = choices.map(({ index, message, logprobs }) => {
    const delta: ChunkChoice['delta'] = { role: 'assistant' };
    for (const [field, value] of Object.entries(message)) {
      if (field === 'role' || value === undefined || value === null) continue;
      delta[field] = field === 'tool_calls' ? (value as ToolCall[]).map((call, position) => ({ index: position, ...call })) : value;
    }
    if (delta.content === undefined) delta.content = message.content;
    return { index, delta, finish_reason: null, ...(logprobs !== undefined ? { logprobs } : {}) };
  });
  const finishes: ChunkChoice[] = choices.map(({ index, finish_reason }) => ({ index, delta: {}, finish_reason }));
  return [messages, finishes];
}
