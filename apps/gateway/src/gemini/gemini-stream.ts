import type { ChunkStream, UpstreamChatChunk } from '@igw/providers';
import { frontStreamEvents, type ChatStreamOptions } from '../chat/chat-stream';
import { finishReasonOf, functionCallPart, usageMetadataOf, type GeminiPart } from './gemini-response';

// The chat pipeline's stream (OpenAI-shaped chunks) → Google's streamGenerateContent: each
// chunk's text (and reasoning, as thought parts when asked for) an event of its own; a tool
// call's arguments arrive in pieces, so its functionCall part waits for the end of the answer
// (Google sends each call whole); the last event carries the finish reasons, the usage and the
// gateway's `meta.usage`. Framed as server-sent events (`alt=sse`) or, without `alt`, as Google's
// JSON array written element by element.

/** How Google frames a stream: `alt=sse`'s events, or one JSON array of responses. */
export type GeminiStreamFraming = 'sse' | 'json-array';

/** Writes GenerateContentResponse objects in the stream's framing: an opening `[` before the first of an array, `]` at its end. */
export class GeminiFrames {
  private opened = false;

  constructor(readonly framing: GeminiStreamFraming) {}

  /** One element (its JSON text). */
  element(json: string): string {
    if (this.framing === 'sse') return `data: ${json}\r\n\r\n`;
    const prefix = this.opened ? ',\r\n' : '[';
    this.opened = true;
    return prefix + json;
  }

  /** The end of the stream: the array's `]` (an empty one when nothing came). */
  close(): string {
    if (this.framing === 'sse') return '';
    return this.opened ? ']' : '[]';
  }

  /** A failure half-way, as Google reports one: an element `{error: {code, message, status}}`, then the end. */
  failure(message: string): string {
    return this.element(JSON.stringify({ error: { code: 500, message, status: 'INTERNAL' } })) + this.close();
  }
}

interface CandidateState {
  calls: Map<number, { id?: string; name: string; arguments: string; signature?: string }>;
  finishReason: string | null;
}

/** Turns chunks into Google's responses; pure, so the stream's order is tested on its own. */
export class GeminiEventWriter {
  private id = '';
  private readonly candidates = new Map<number, CandidateState>();

  constructor(
    private readonly modelId: string,
    private readonly includeThoughts: boolean,
    private readonly frames: GeminiFrames,
  ) {}

  /** The events of one chunk ('' for none). */
  chunk(chunk: UpstreamChatChunk): string {
    if (this.id === '' && chunk.id) this.id = chunk.id;
    const candidates: Array<Record<string, unknown>> = [];
    for (const choice of chunk.choices) {
      const state = this.state(choice.index);
      const delta = choice.delta;
      const parts: GeminiPart[] = [];
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (this.includeThoughts && typeof reasoning === 'string' && reasoning !== '') parts.push({ text: reasoning, thought: true });
      if (typeof delta.content === 'string' && delta.content !== '') parts.push({ text: delta.content });
      for (const call of delta.tool_calls ?? []) {
        const held = state.calls.get(call.index) ?? { name: '', arguments: '' };
        if (call.id !== undefined) held.id = call.id;
        if (call.function?.name) held.name += call.function.name;
        if (call.function?.arguments) held.arguments += call.function.arguments;
        const signature = (call as { extra_content?: { google?: { thought_signature?: string } } }).extra_content?.google?.thought_signature;
        if (signature !== undefined) held.signature = signature;
        state.calls.set(call.index, held);
      }
      if (choice.finish_reason) state.finishReason = choice.finish_reason;
      if (parts.length > 0) candidates.push({ content: { role: 'model', parts }, index: choice.index });
    }
    return candidates.length > 0 ? this.frames.element(this.response(candidates)) : '';
  }

  /** The closing event: every candidate's held calls and finish reason, the usage and `meta.usage`; then the framing's end. */
  end(usage: Parameters<typeof usageMetadataOf>[0], meta: unknown): string {
    if (this.candidates.size === 0) this.state(0);
    const candidates = [...this.candidates.entries()]
      .sort(([a], [b]) => a - b)
      .map(([index, state]) => {
        const parts = [...state.calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => functionCallPart({ id: call.id, function: { name: call.name, arguments: call.arguments }, extra_content: call.signature ? { google: { thought_signature: call.signature } } : undefined }));
        return { content: { role: 'model', parts: parts.length > 0 ? parts : [{ text: '' }] }, finishReason: finishReasonOf(state.finishReason), index };
      });
    const extra: Record<string, unknown> = { usageMetadata: usageMetadataOf(usage) };
    if (meta !== undefined) extra.meta = { usage: meta };
    return this.frames.element(this.response(candidates, extra)) + this.frames.close();
  }

  failure(message: string): string {
    return this.frames.failure(message);
  }

  private response(candidates: Array<Record<string, unknown>>, extra: Record<string, unknown> = {}): string {
    if (this.id === '') this.id = `gw${Date.now().toString(36)}`;
    return JSON.stringify({ candidates, ...extra, modelVersion: this.modelId, responseId: this.id });
  }

  private state(index: number): CandidateState {
    let state = this.candidates.get(index);
    if (state === undefined) this.candidates.set(index, (state = { calls: new Map(), finishReason: null }));
    return state;
  }
}

/** The streamGenerateContent events of a chat stream (frontStreamEvents: settled as chat streams are). */
export function geminiStreamEvents(framing: GeminiStreamFraming, includeThoughts: boolean) {
  return (stream: ChunkStream, options: ChatStreamOptions): AsyncGenerator<string> => {
    const writer = new GeminiEventWriter(options.modelId, includeThoughts, new GeminiFrames(framing));
    return frontStreamEvents(stream, options, {
      chunk: (chunk) => writer.chunk(chunk),
      end: (usage, meta) => writer.end(usage, meta),
      failure: (message) => writer.failure(message),
    });
  };
}
