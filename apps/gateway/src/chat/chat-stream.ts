import { countTokens, estimatePromptTokens } from '@igw/domain';
import type { UpstreamChatChunk, UpstreamUsage } from '@igw/providers';

export interface StreamSettlement {
  usage: UpstreamUsage;
  /** True when the upstream reported the usage; false when it was counted with the tokenizer. */
  reported: boolean;
}

export interface ChatStreamOptions {
  modelId: string;
  includeUsage: boolean;
  messages: ReadonlyArray<{ role: string; content?: unknown; name?: string }>;
  /** Prices the usage and records it; called exactly once, however the stream ends. Returns meta.usage. */
  settle(settlement: StreamSettlement): { credits_used: number; usd_spent: number };
  describeError(error: unknown): string;
}

/**
 * Turns upstream chunks into the client's server-sent events as they arrive: the model
 * renamed to the catalogue id, the usage chunk hidden from a client that did not ask for
 * it (and given `meta.usage` when it did), then `[DONE]`. However the stream ends (done,
 * upstream failure, client gone) its usage is settled once: the upstream's numbers when it
 * sent them, else a tokenizer count of what was generated.
 */
export async function* chatStreamEvents(chunks: AsyncIterable<UpstreamChatChunk>, options: ChatStreamOptions): AsyncGenerator<string> {
  let usage: UpstreamUsage | undefined;
  let generated = '';
  let settled = false;
  const settle = () => {
    if (settled) return undefined;
    settled = true;
    if (usage) return options.settle({ usage, reported: true });
    const prompt = estimatePromptTokens(options.messages);
    const completion = countTokens(generated);
    return options.settle({ usage: { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion }, reported: false });
  };
  try {
    for await (const chunk of chunks) {
      for (const choice of chunk.choices) {
        if (typeof choice.delta.content === 'string') generated += choice.delta.content;
        // A spoken answer's text is its transcript (its audio tokens cannot be counted here).
        if (typeof choice.delta.audio?.transcript === 'string') generated += choice.delta.audio.transcript;
        for (const call of choice.delta.tool_calls ?? []) generated += call.function?.arguments ?? '';
      }
      if (chunk.usage) usage = { ...chunk.usage, total_tokens: chunk.usage.prompt_tokens + chunk.usage.completion_tokens };
      const usageOnly = chunk.choices.length === 0;
      if (usageOnly && !options.includeUsage) continue;
      const out: Record<string, unknown> = { ...chunk, model: options.modelId };
      // `undefined` leaves the field out of the JSON just as `delete` would, without turning
      // the object into a slow dictionary before it is serialised.
      if (!options.includeUsage) out.usage = undefined;
      else if (chunk.usage) {
        out.usage = usage;
        out.meta = { usage: settle() };
      }
      yield `data: ${JSON.stringify(out)}\n\n`;
    }
    settle();
    yield 'data: [DONE]\n\n';
  } catch (error) {
    // The status line is long gone: report in-band, the way OpenAI does, and stop.
    yield `data: ${JSON.stringify({ error: { message: options.describeError(error), type: 'upstream_error' } })}\n\n`;
  } finally {
    settle();
  }
}
