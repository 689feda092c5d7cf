import { chatPromptTexts, countAllOffLoop, StreamedTokenCounter, whenCounted, type EstimableChatPrompt } from '@igw/tokenizer';
import type { UpstreamChatChunk, UpstreamChunkBatch, UpstreamUsage } from '@igw/providers';

export interface StreamSettlement {
  usage: UpstreamUsage;
  /** True when the upstream reported the usage; false when it was counted with the tokenizer. */
  reported: boolean;
}

type ChargedUsage = { credits_used: number; usd_spent: number };

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
export async function* chatStreamEvents(batches: AsyncIterable<UpstreamChunkBatch>, options: ChatStreamOptions): AsyncGenerator<string> {
  const iterator = batches[Symbol.asyncIterator]();
  const tally = new StreamTally(options);
  const forwarded = new ForwardedText(options);
  let upstreamOver = false;
  try {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      let events = '';
      const batch = next.value;
      const json = batch.json;
      for (let index = 0; index < batch.length; index++) {
        const chunk = batch[index];
        tally.read(chunk);
        if (chunk.hiddenText !== undefined) continue;
        const usageOnly = chunk.choices.length === 0;
        if (usageOnly && !options.includeUsage) continue;
        // Most chunks need only their model renamed: their upstream text, edited, when it can be.
        const text = json?.[index] === undefined || chunk.usage ? undefined : forwarded.of(json[index]!, chunk);
        if (text !== undefined) {
          events += `data: ${text}\n\n`;
          continue;
        }
        // The chunk is this stream's own (parsed or translated for it alone): it is renamed in
        // place, which keeps its fields in their order without copying it.
        const out = chunk as UpstreamChatChunk & { meta?: unknown };
        out.model = options.modelId;
        // `undefined` leaves the field out of the JSON just as `delete` would, without turning
        // the object into a slow dictionary before it is serialised.
        if (!options.includeUsage) out.usage = undefined;
        else if (chunk.usage) {
          // The search count is the gateway's own field: it shows in meta.usage, not in OpenAI's usage.
          out.usage = { ...tally.usage!, web_search_calls: undefined };
          out.meta = { usage: tally.settleReported() };
        }
        events += `data: ${JSON.stringify(out)}\n\n`;
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
 * A chunk's text for the client made from its upstream text by editing it, when that gives what
 * serializing the chunk as chatStreamEvents changes it would (the same JSON, if not always the
 * same bytes): the model renamed and, for a client that did not ask for usage, the `usage: null`
 * left out. Undefined where the text is not plainly enough written to be sure (its `model` key
 * not the first thing of its kind at the top level, written otherwise than JSON.stringify would,
 * named twice; its `usage` not last), for the caller to serialize the chunk instead.
 */
class ForwardedText {
  private readonly renamed: string;
  private upstreamModel: string | undefined;
  private upstreamMember = '';

  constructor(private readonly options: Pick<ChatStreamOptions, 'modelId' | 'includeUsage'>) {
    this.renamed = `"model":${JSON.stringify(options.modelId)}`;
  }

  /** For a chunk without usage (its `usage` null or absent). */
  of(json: string, chunk: UpstreamChatChunk): string | undefined {
    if (typeof chunk.model !== 'string') return undefined;
    if (chunk.model !== this.upstreamModel) {
      this.upstreamModel = chunk.model;
      this.upstreamMember = `"model":${JSON.stringify(chunk.model)}`;
    }
    const at = json.indexOf('"model":');
    const valueEnd = at + this.upstreamMember.length;
    // (Two strings compared: V8's startsWith is several times slower on a long text.)
    if (at < 1 || json.slice(at, valueEnd) !== this.upstreamMember) return undefined;
    // A quote after `{` or `,` opens a string, here a key; with no object or array opened
    // between the chunk's own brace and it, the key is the chunk's own.
    const previous = json.charCodeAt(at - 1);
    if ((previous !== 44 /* , */ && previous !== 123) /* { */ || json.charCodeAt(0) !== 123) return undefined;
    const nested = json.indexOf('{', 1);
    const list = json.indexOf('[');
    if ((nested !== -1 && nested < at) || (list !== -1 && list < at)) return undefined;
    // JSON.parse takes the last of keys named twice: there must be no other.
    if (json.indexOf('"model":', valueEnd) !== -1) return undefined;
    if (this.options.includeUsage || chunk.usage === undefined) return json.slice(0, at) + this.renamed + json.slice(valueEnd);
    // `"usage":null` as the last member (just before the closing brace) is the chunk's own.
    const usageAt = json.length - USAGE_NULL_LAST.length;
    if (usageAt < valueEnd || json.slice(usageAt) !== USAGE_NULL_LAST || json.indexOf('"usage":') !== usageAt + 1) return undefined;
    return `${json.slice(0, at)}${this.renamed}${json.slice(valueEnd, usageAt)}}`;
  }
}

const USAGE_NULL_LAST = ',"usage":null}';

/**
 * What a stream generated so far, counted as it arrives (memory bounded however long the
 * stream): visible text, reasoning (hidden from the client or not), spoken transcripts,
 * refusals and tool call arguments.
 */
class StreamTally {
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
