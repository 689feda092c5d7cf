import type { MessagesUsage } from '@igw/contracts';
import type { ChunkStream, UpstreamChatChunk } from '@igw/providers';
import { frontStreamEvents, type ChatStreamOptions } from '../chat/chat-stream';
import { anthropicErrorType } from './messages-errors';
import { messageIdOf, messagesUsageOf, stopReasonOf } from './messages-response';

// The chat pipeline's stream (OpenAI-shaped chunks) → Anthropic's server-sent events:
// message_start and a ping at the first chunk; each run of text, reasoning or one tool call's
// arguments as a content block (content_block_start, its deltas, content_block_stop), a new
// block starting whenever the kind changes; then message_delta with the stop reason and the
// whole usage (input tokens included: they are known only at the end), and message_stop.

type BlockKind = 'text' | 'thinking' | 'tool_use';

function event(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

/** Turns chunks into Anthropic's events; pure, so the stream's order is tested on its own. */
export class MessagesEventWriter {
  private started = false;
  private blockIndex = -1;
  private open: { kind: BlockKind; toolIndex?: number } | undefined;
  private finishReason: string | null = null;

  constructor(private readonly modelId: string) {}

  /** The events of one chunk ('' for none). */
  chunk(chunk: UpstreamChatChunk): string {
    let events = this.start(chunk.id);
    for (const choice of chunk.choices) {
      if (choice.index !== 0) continue;
      const delta = choice.delta;
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string' && reasoning !== '') events += this.inBlock('thinking', { type: 'thinking', thinking: '', signature: '' }) + this.delta({ type: 'thinking_delta', thinking: reasoning });
      if (typeof delta.content === 'string' && delta.content !== '') events += this.inBlock('text', { type: 'text', text: '' }) + this.textDelta(delta.content);
      for (const call of delta.tool_calls ?? []) {
        if (call.id !== undefined || this.open?.kind !== 'tool_use' || this.open.toolIndex !== call.index) {
          events += this.closeBlock();
          this.blockIndex += 1;
          this.open = { kind: 'tool_use', toolIndex: call.index };
          events += event('content_block_start', { index: this.blockIndex, content_block: { type: 'tool_use', id: call.id ?? '', name: call.function?.name ?? '', input: {} } });
        }
        const args = call.function?.arguments;
        if (typeof args === 'string' && args !== '') events += this.delta({ type: 'input_json_delta', partial_json: args });
      }
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    return events;
  }

  /** The closing events: the open block's stop, the stop reason and usage, message_stop. */
  end(usage: MessagesUsage, meta: unknown): string {
    const delta: Record<string, unknown> = { delta: { stop_reason: stopReasonOf(this.finishReason), stop_sequence: null }, usage };
    if (meta !== undefined) delta.meta = { usage: meta };
    return this.start('') + this.closeBlock() + event('message_delta', delta) + event('message_stop', {});
  }

  /** message_start (with a ping after it) before the first event, once. */
  start(id: string): string {
    if (this.started) return '';
    this.started = true;
    const message = {
      id: messageIdOf(id || `gw${Date.now().toString(36)}`),
      type: 'message',
      role: 'assistant',
      content: [],
      model: this.modelId,
      stop_reason: null,
      stop_sequence: null,
      usage: { input_tokens: 0, output_tokens: 0, cache_creation_input_tokens: 0, cache_read_input_tokens: 0 },
    };
    return event('message_start', { message }) + event('ping', {});
  }

  private inBlock(kind: BlockKind, contentBlock: Record<string, unknown>): string {
    if (this.open?.kind === kind) return '';
    const closed = this.closeBlock();
    this.blockIndex += 1;
    this.open = { kind };
    return closed + event('content_block_start', { index: this.blockIndex, content_block: contentBlock });
  }

  private delta(delta: Record<string, unknown>): string {
    return event('content_block_delta', { index: this.blockIndex, delta });
  }

  /**
   * `delta({type: 'text_delta', text})`, the same text, written around the text's JSON alone:
   * most events of a stream are these, and building and serializing objects for each was most
   * of the stream's translation.
   */
  private textDelta(text: string): string {
    return `event: content_block_delta\ndata: {"type":"content_block_delta","index":${this.blockIndex},"delta":{"type":"text_delta","text":${JSON.stringify(text)}}}\n\n`;
  }

  private closeBlock(): string {
    if (this.open === undefined) return '';
    this.open = undefined;
    return event('content_block_stop', { index: this.blockIndex });
  }
}

/** The Messages stream of a chat stream (frontStreamEvents: settled as chat streams are). */
export function messagesStreamEvents(stream: ChunkStream, options: ChatStreamOptions): AsyncGenerator<string> {
  const writer = new MessagesEventWriter(options.modelId);
  return frontStreamEvents(stream, options, {
    chunk: (chunk) => writer.chunk(chunk),
    end: (usage, meta) => writer.end(messagesUsageOf(usage), meta),
    failure: (message) => event('error', { error: { type: anthropicErrorType(500), message } }),
  });
}
