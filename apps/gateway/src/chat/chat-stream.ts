import { chatPromptTexts, countAllOffLoop, StreamedTokenCounter, whenCounted, type EstimableChatPrompt } from '@igw/tokenizer';
import { ChunkWriter, type ChunkStream, type UpstreamChatChunk, type UpstreamUsage } from '@igw/providers';

export interface StreamSettlement {
  usage: UpstreamUsage;
  /** True when the upstream reported the usage; false when it was counted with the tokenizer. */
  reported: boolean;
}

type ChargedUsage = { credits_used: number; usd_spent: number };

/** The chat usage's numbers other API fronts translate (`prompt_tokens_details` where the source reported cache reads and writes). */
export interface ChatUsageNumbers {
  prompt_tokens: number;
  completion_tokens: number;
  prompt_tokens_details?: { cached_tokens?: number | null; cache_write_tokens?: number | null } | null;
  completion_tokens_details?: { reasoning_tokens?: number | null } | null;
}

/** What another API front writes of a chat stream, in its own events. */
export interface FrontEventWriter {
  /** The events of one chunk the client may see. */
  chunk(chunk: UpstreamChatChunk): string;
  /** The closing events, once the usage is settled. */
  end(usage: ChatUsageNumbers, meta: ChargedUsage | undefined): string;
  /** The events of a failure half-way. */
  failure(message: string): string;
}

export interface ChatStreamOptions {
  modelId: string;
  includeUsage: boolean;
  /** The request as the upstream read it, for a tokenizer count when no usage comes. */
  prompt: EstimableChatPrompt;
  /** Prices the usage and records it; called exactly once, however the stream ends. Returns meta.usage. */
  settle(settlement: StreamSettlement): ChargedUsage;
  describeError(error: unknown): string;
}

/**
 * Turns upstream chunks into the client's server-sent events as they arrive, one string per
 * batch (the chunks of one upstream read): the model renamed to the catalogue id, the usage
 * chunk hidden from a client that did not ask for it (and given `meta.usage` when it did),
 * then `[DONE]`. However the stream ends its usage is settled once: the upstream's numbers
 * when it sent them, else a tokenizer count of the prompt and of what was generated. A reader
 * that stops early (its client left) ends the upstream stream, billed for what was read of it
 * by then (upstream-billing.ts).
 */
export async function* chatStreamEvents(stream: ChunkStream, options: ChatStreamOptions): AsyncGenerator<string> {
  const iterator = stream[Symbol.asyncIterator]();
  const tally = new StreamTally(options);
  const writer = new ChunkWriter(options.modelId, options.includeUsage);
  let upstreamOver = false;
  try {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      let events = '';
      for (const item of next.value) {
        const chunk = item.chunk;
        tally.read(chunk);
        if (chunk.hiddenText !== undefined) continue;
        if (!options.includeUsage) {
          if (chunk.choices.length > 0) events += `data: ${writer.json(item)}\n\n`;
          continue;
        }
        if (chunk.usage) {
          // The search count is the gateway's own field: it shows in meta.usage, not in OpenAI's
          // usage. (A chunk with usage is always serialized, so the writer writes these changes.)
          const withMeta = chunk as UpstreamChatChunk & { meta?: unknown };
          withMeta.usage = { ...tally.usage!, web_search_calls: undefined };
          withMeta.meta = { usage: tally.settleReported() };
        }
        events += `data: ${writer.json(item)}\n\n`;
      }
      if (events !== '') yield events;
    }
    upstreamOver = true;
    await tally.settle();
    yield 'data: [DONE]\n\n';
  } catch (error) {
    upstreamOver = true;
    // The status line is long gone: report in-band, the way OpenAI does, and stop.
    yield `data: ${JSON.stringify({ error: { message: options.describeError(error), type: 'upstream_error' } })}\n\n`;
  } finally {
    if (!upstreamOver) void iterator.return?.(undefined)?.catch(() => undefined);
    await tally.settle();
  }
}

/**
 * Another API front's events for a chat stream (Messages, Responses), settled as chat streams
 * are: once, however it ends, with the upstream's usage or a tokenizer count; a reader that
 * stops early (its client left) ends the upstream stream. A failure half-way is the writer's.
 */
export async function* frontStreamEvents(stream: ChunkStream, options: ChatStreamOptions, writer: FrontEventWriter): AsyncGenerator<string> {
  let settledUsage: UpstreamUsage | undefined;
  const tally = new StreamTally({
    ...options,
    settle: (settlement) => {
      settledUsage = settlement.usage;
      return options.settle(settlement);
    },
  });
  const iterator = stream[Symbol.asyncIterator]();
  let upstreamOver = false;
  try {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      let events = '';
      for (const { chunk } of next.value) {
        tally.read(chunk);
        if (chunk.hiddenText !== undefined) continue;
        events += writer.chunk(chunk);
      }
      if (events !== '') yield events;
    }
    upstreamOver = true;
    const meta = await tally.settle();
    yield writer.end(settledUsage ?? { prompt_tokens: 0, completion_tokens: 0 }, meta);
  } catch (error) {
    upstreamOver = true;
    yield writer.failure(options.describeError(error));
  } finally {
    if (!upstreamOver) void iterator.return?.(undefined)?.catch(() => undefined);
    await tally.settle();
  }
}

/**
 * What a stream generated so far, counted as it arrives (memory bounded however long the
 * stream): visible text, reasoning (hidden from the client or not), spoken transcripts,
 * refusals and tool call arguments. Other API fronts over the chat pipeline settle their streams with it.
 */
export class StreamTally {
  usage: UpstreamUsage | undefined;
  /**
   * Generated text, kept uncounted: the tokenizer is needed only when the upstream never
   * reports usage, which it does at the end. Past TEXT_KEPT_LIMIT characters it is counted
   * and dropped, so memory stays bounded however long the stream.
   */
  private text: string[] = [];
  private textChars = 0;
  private readonly generated = new StreamedTokenCounter();
  private settled = false;

  constructor(private readonly options: ChatStreamOptions) {}

  read(chunk: UpstreamChatChunk): void {
    if (chunk.hiddenText !== undefined) this.keep(chunk.hiddenText);
    for (const choice of chunk.choices) {
      const delta = choice.delta;
      if (typeof delta.content === 'string') this.keep(delta.content);
      if (typeof delta.refusal === 'string') this.keep(delta.refusal);
      // Reasoning as Anthropic's and DeepSeek's translations send it, and as OpenRouter does.
      if (typeof delta.reasoning_content === 'string') this.keep(delta.reasoning_content);
      if (typeof delta.reasoning === 'string') this.keep(delta.reasoning);
      // A spoken answer's text is its transcript (its audio tokens cannot be counted here).
      if (typeof delta.audio?.transcript === 'string') this.keep(delta.audio.transcript);
      if (delta.tool_calls) {
        for (const call of delta.tool_calls) {
          this.keep(call.function?.name ?? '');
          this.keep(call.function?.arguments ?? '');
        }
      }
    }
    if (chunk.usage) this.usage = { ...chunk.usage, total_tokens: chunk.usage.prompt_tokens + chunk.usage.completion_tokens };
  }

  /** Settles once with the usage the upstream reported (read before): at once. Later calls return undefined. */
  settleReported(): ChargedUsage | undefined {
    if (this.settled) return undefined;
    this.settled = true;
    return this.options.settle({ usage: this.usage!, reported: true });
  }

  /**
   * Settles once: with the usage the upstream reported, else with a tokenizer count, the
   * prompt's in the token counting workers when it is long (a Promise then). Later calls
   * return undefined.
   */
  settle(): ChargedUsage | undefined | Promise<ChargedUsage> {
    if (this.settled) return undefined;
    if (this.usage) return this.settleReported();
    this.settled = true;
    this.countKeptText();
    const completion = this.generated.total();
    const { texts, fixedTokens } = chatPromptTexts(this.options.prompt);
    const settleCounted = (counted: number) => {
      const prompt = fixedTokens + counted;
      return this.options.settle({ usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }, reported: false });
    };
    return whenCounted(countAllOffLoop(texts), settleCounted);
  }

  private keep(piece: string): void {
    if (piece === '') return;
    this.text.push(piece);
    this.textChars += piece.length;
    if (this.textChars > TEXT_KEPT_LIMIT) this.countKeptText();
  }

  private countKeptText(): void {
    if (this.text.length > 0) this.generated.add(this.text.join(''));
    this.text = [];
    this.textChars = 0;
  }
}

/** Generated text kept uncounted at most (characters). */
const TEXT_KEPT_LIMIT = 65_536;
