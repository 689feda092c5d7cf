import type { ChunkStream, UpstreamChatChunk } from '@igw/providers';
import { frontStreamEvents, type ChatStreamOptions, type ChatUsageNumbers } from '../chat/chat-stream';
import type { StreamEvents } from '../chat/chat.service';
import { callNameOf, itemId, outputTextPart, responseShell, responsesUsageOf, statusOf, type ResponsesContext } from './responses-response';

// The chat pipeline's stream (OpenAI chat chunks) → the Responses API's typed server-sent events,
// each with its `sequence_number`: response.created and response.in_progress at the first chunk;
// each run of reasoning, text or one tool call's arguments as an output item (output_item.added,
// its part and deltas, their .done events, output_item.done), a new item whenever the kind
// changes; then response.completed with the whole response, usage included (known only at the
// end), which Codex waits for. A refusal streamed by the upstream is shown as text.

type ItemKind = 'message' | 'reasoning' | 'function_call';

interface OpenItem {
  kind: ItemKind;
  id: string;
  outputIndex: number;
  text: string;
  toolIndex?: number;
  callId?: string;
  chatName?: string;
  /** The fixed middle of this item's text delta events (textDelta). */
  deltaHead?: string;
}

/** Turns chunks into the Responses events; pure, so the stream's order is tested on its own. */
export class ResponsesEventWriter {
  private sequence = 0;
  private started = false;
  private open: OpenItem | undefined;
  private readonly output: Array<Record<string, unknown>> = [];
  private finishReason: string | null = null;

  constructor(
    private readonly context: ResponsesContext,
    private readonly modelId: string,
  ) {}

  /** The events of one chunk ('' for none). */
  chunk(chunk: UpstreamChatChunk): string {
    let events = this.start();
    for (const choice of chunk.choices) {
      if (choice.index !== 0) continue;
      const delta = choice.delta;
      const reasoning = delta.reasoning_content ?? delta.reasoning;
      if (typeof reasoning === 'string' && reasoning !== '') {
        events += this.inItem('reasoning');
        this.open!.text += reasoning;
        events += this.event('response.reasoning_summary_text.delta', { item_id: this.open!.id, output_index: this.open!.outputIndex, summary_index: 0, delta: reasoning });
      }
      for (const text of [delta.content, delta.refusal]) {
        if (typeof text !== 'string' || text === '') continue;
        events += this.inItem('message');
        this.open!.text += text;
        events += this.textDelta(this.open!, text);
      }
      for (const call of delta.tool_calls ?? []) {
        if (call.id !== undefined || this.open?.kind !== 'function_call' || this.open.toolIndex !== call.index) {
          events += this.closeItem();
          this.openItem({ kind: 'function_call', id: itemId('fc'), outputIndex: this.output.length, text: '', toolIndex: call.index, callId: call.id ?? itemId('call'), chatName: call.function?.name ?? '' });
          events += this.event('response.output_item.added', { output_index: this.open!.outputIndex, item: { ...this.functionCall(this.open!), status: 'in_progress' } });
        }
        const args = call.function?.arguments;
        if (typeof args === 'string' && args !== '') {
          this.open!.text += args;
          events += this.event('response.function_call_arguments.delta', { item_id: this.open!.id, output_index: this.open!.outputIndex, delta: args });
        }
      }
      if (choice.finish_reason) this.finishReason = choice.finish_reason;
    }
    return events;
  }

  /** The closing events: the open item's, then response.completed with the whole response. */
  end(usage: ChatUsageNumbers, meta: unknown): string {
    const { events, response } = this.finish(usage, meta);
    return events + this.completed(response);
  }

  /** The open item's closing events, and the whole response response.completed is to carry. */
  finish(usage: ChatUsageNumbers, meta: unknown): { events: string; response: Record<string, unknown> } {
    const events = this.start() + this.closeItem();
    const response: Record<string, unknown> = { ...responseShell(this.context, this.modelId), ...statusOf(this.finishReason), output: this.output, usage: responsesUsageOf(usage) };
    if (meta !== undefined) response.meta = { usage: meta };
    return { events, response };
  }

  completed(response: Record<string, unknown>): string {
    return this.event('response.completed', { response });
  }

  /** An `error` event for a stream that failed half-way. */
  error(message: string): string {
    return this.event('error', { code: 'upstream_error', message, param: null });
  }

  /** response.created and response.in_progress before the first event, once (the response serialized once for both). */
  start(): string {
    if (this.started) return '';
    this.started = true;
    const response = JSON.stringify(responseShell(this.context, this.modelId));
    const event = (type: string) => `event: ${type}\ndata: {"type":"${type}","sequence_number":${this.sequence++},"response":${response}}\n\n`;
    return event('response.created') + event('response.in_progress');
  }

  private event(type: string, data: Record<string, unknown>): string {
    return `event: ${type}\ndata: ${JSON.stringify({ type, sequence_number: this.sequence++, ...data })}\n\n`;
  }

  /**
   * `event('response.output_text.delta', {item_id, output_index, content_index: 0, delta, logprobs: []})`,
   * the same text, written around the delta's JSON alone: most events of a stream are these,
   * and building and serializing an object for each was most of the stream's translation.
   */
  private textDelta(item: OpenItem, text: string): string {
    item.deltaHead ??= `,"item_id":${JSON.stringify(item.id)},"output_index":${item.outputIndex},"content_index":0,"delta":`;
    return `event: response.output_text.delta\ndata: {"type":"response.output_text.delta","sequence_number":${this.sequence++}${item.deltaHead}${JSON.stringify(text)},"logprobs":[]}\n\n`;
  }

  private openItem(item: OpenItem): void {
    this.open = item;
    this.output.push({});
  }

  private inItem(kind: 'message' | 'reasoning'): string {
    if (this.open?.kind === kind) return '';
    let events = this.closeItem();
    this.openItem({ kind, id: itemId(kind === 'message' ? 'msg' : 'rs'), outputIndex: this.output.length, text: '' });
    const { id, outputIndex } = this.open!;
    if (kind === 'message') {
      events += this.event('response.output_item.added', { output_index: outputIndex, item: { id, type: 'message', status: 'in_progress', role: 'assistant', content: [] } });
      events += this.event('response.content_part.added', { item_id: id, output_index: outputIndex, content_index: 0, part: outputTextPart('') });
    } else {
      events += this.event('response.output_item.added', { output_index: outputIndex, item: { id, type: 'reasoning', summary: [] } });
      events += this.event('response.reasoning_summary_part.added', { item_id: id, output_index: outputIndex, summary_index: 0, part: { type: 'summary_text', text: '' } });
    }
    return events;
  }

  private functionCall(item: OpenItem): Record<string, unknown> {
    return { id: item.id, type: 'function_call', status: 'completed', call_id: item.callId, ...callNameOf(item.chatName ?? '', this.context), arguments: item.text };
  }

  private closeItem(): string {
    const item = this.open;
    if (item === undefined) return '';
    this.open = undefined;
    const at = { item_id: item.id, output_index: item.outputIndex };
    let events = '';
    let done: Record<string, unknown>;
    if (item.kind === 'message') {
      events += this.event('response.output_text.done', { ...at, content_index: 0, text: item.text, logprobs: [] });
      events += this.event('response.content_part.done', { ...at, content_index: 0, part: outputTextPart(item.text) });
      done = { id: item.id, type: 'message', status: 'completed', role: 'assistant', content: [outputTextPart(item.text)] };
    } else if (item.kind === 'reasoning') {
      const part = { type: 'summary_text', text: item.text };
      events += this.event('response.reasoning_summary_text.done', { ...at, summary_index: 0, text: item.text });
      events += this.event('response.reasoning_summary_part.done', { ...at, summary_index: 0, part });
      done = { id: item.id, type: 'reasoning', summary: [part] };
    } else {
      done = this.functionCall(item);
      events += this.event('response.function_call_arguments.done', { ...at, name: done.name, arguments: item.text });
    }
    this.output[item.outputIndex] = done;
    return events + this.event('response.output_item.done', { output_index: item.outputIndex, item: done });
  }
}

/**
 * The Responses stream of a chat stream for one request (frontStreamEvents: settled as chat
 * streams are). With `context.keep`, the finished response is kept before response.completed
 * is sent, so a client that continues it at once finds it; a failed or abandoned stream keeps nothing.
 */
export function responsesStreamEvents(context: ResponsesContext): StreamEvents {
  return (stream: ChunkStream, options: ChatStreamOptions) => {
    const writer = new ResponsesEventWriter(context, options.modelId);
    const keep = context.keep;
    const failure = (message: string) => writer.start() + writer.error(message);
    if (keep === undefined) return frontStreamEvents(stream, options, { chunk: (chunk) => writer.chunk(chunk), end: (usage, meta) => writer.end(usage, meta), failure });
    let finished: Record<string, unknown> | undefined;
    const events = frontStreamEvents(stream, options, {
      chunk: (chunk) => writer.chunk(chunk),
      end: (usage, meta) => {
        const closing = writer.finish(usage, meta);
        finished = closing.response;
        return closing.events;
      },
      failure,
    });
    return completedOnceKept(events, () => finished, keep, writer);
  };
}

async function* completedOnceKept(
  events: AsyncGenerator<string>,
  finished: () => Record<string, unknown> | undefined,
  keep: (response: Record<string, unknown>) => Promise<Record<string, unknown>>,
  writer: ResponsesEventWriter,
): AsyncGenerator<string> {
  // A reader that stops early returns this generator, which returns `events` (settling its usage).
  for await (const batch of events) yield batch;
  const response = finished();
  if (response !== undefined) yield writer.completed(await keep(response));
}
