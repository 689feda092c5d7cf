import type { ServerResponse } from 'node:http';
import type { CallOptions, NativeAnswer, NativeEvent, NativeEventStream, UpstreamChatChunk } from '@igw/providers';
import type { UpstreamTarget } from '../paid-requests/upstream-route';
import { StreamTally, type ChatStreamOptions } from './chat-stream';

// An API front's native path: sources that speak the front's own API (Anthropic's Messages,
// OpenAI's Responses) get the client's request as it came, inside the same chat pipeline
// (admission, holds, fallback, the client-leaves rule, pricing, ledger). The chat request the
// front translated still decides validation, the hold and the count of a stream cut short, and is
// what the other sources of the fallback chain get.

type ChargedUsage = { credits_used: number; usd_spent: number };

/** Names the tools a front left out of the upstream call (built-in and server tools the source does not run here). */
export const DROPPED_TOOLS_HEADER = 'x-gateway-dropped-tools';

/** What stays as it is in a dropped tool's name: visible ASCII but the list's comma and the escape's percent sign. */
const HEADER_SAFE = /^[!-$&-+\--~]$/;

/**
 * Sets (or, with none, removes) the dropped-tools header. The names are the client's own
 * strings (a tool's name or type): each character outside visible ASCII, and `,` and `%`, is
 * percent-encoded as UTF-8, so no name can end the header, add another, or make Node's
 * setHeader throw, and a name with a comma stays one name.
 */
export function setDroppedTools(response: Pick<ServerResponse, 'setHeader' | 'removeHeader'>, names: readonly string[]): void {
  if (names.length === 0) {
    response.removeHeader(DROPPED_TOOLS_HEADER);
    return;
  }
  response.setHeader(DROPPED_TOOLS_HEADER, names.map(headerSafeName).join(', '));
}

function headerSafeName(name: string): string {
  let safe = '';
  for (const character of name) {
    // A lone surrogate becomes U+FFFD's bytes, as Buffer writes it.
    safe += HEADER_SAFE.test(character) ? character : [...Buffer.from(character, 'utf8')].map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`).join('');
  }
  return safe;
}

/** What a front sends to the sources that speak its API, and how it answers from them. */
export interface NativeUpstream {
  /** Whether this source gets the native call (else the chat translation). */
  takes(target: UpstreamTarget): boolean;
  complete(target: UpstreamTarget, options: CallOptions): Promise<NativeAnswer>;
  stream(target: UpstreamTarget, options: CallOptions): Promise<NativeEventStream>;
  /** The client's answer: the upstream's own, with the catalogue's model id and `meta.usage`. */
  answer(body: Record<string, unknown>, meta: ChargedUsage, modelId: string): unknown;
  /** Writes a native stream's events for the client. */
  writer(modelId: string): NativeEventWriter;
  /**
   * Before each attempt, with the path it takes: a translated attempt throws (a 400) when the
   * chat request could not carry what the client sent; the front sets its headers.
   */
  beforeAttempt?(native: boolean): void;
  /** Units a native call may run beyond what the chat request holds for (web searches), held as well. */
  extraCeiling?: Readonly<Record<string, number>>;
  /**
   * The native API's name, where a source that `takes` it may not serve it after all (an
   * OpenAI-compatible server without `/v1/responses`): a 404 or 405 to the native call, before
   * anything streamed, sends that request the translation on the same source, and the source is
   * sent the translation for a while (native-api-absence.ts).
   */
  apiMayBeMissing?: string;
}

export interface NativeEventWriter {
  /**
   * The client's text of one event. `meta` settles the usage the event carries (on the event
   * that reports it) and returns what it cost, for the event's `meta.usage`. A promise holds the
   * stream back until it settles (the Responses API keeps a response before its last event).
   */
  event(event: NativeEvent, meta: () => ChargedUsage | undefined): string | Promise<string>;
  /** The events of a failure half-way. */
  failure(message: string): string;
  /** What closes a stream that ended well, after its last event (Google's JSON array its `]`). */
  end?(): string;
}

/** A native answer, delivered as it is (the chat answer's translation does not apply). */
export class NativeReply {
  constructor(readonly body: unknown) {}
}

/** An opened native stream, told apart from a chat chunk stream. */
export interface NativeOpened {
  native: NativeEventStream;
}

export function isNativeOpened(value: unknown): value is NativeOpened {
  return typeof value === 'object' && value !== null && 'native' in value;
}

/** The `SSE` text of an event as it came (its name, its own data). */
export function sseOf(name: string | undefined, data: string): string {
  return name === undefined ? `data: ${data}\n\n` : `event: ${name}\ndata: ${data}\n\n`;
}

/**
 * A native stream's events for the client, settled as chat streams are (StreamTally): once,
 * however it ends, with the upstream's usage when it reported it, else a tokenizer count of
 * the prompt and of what was generated; a reader that stops early (its client left) ends the
 * upstream call. A failure half-way is the writer's.
 */
export async function* nativeStreamEvents(stream: NativeEventStream, options: ChatStreamOptions, writer: NativeEventWriter): AsyncGenerator<string> {
  const tally = new StreamTally(options);
  const iterator = stream[Symbol.asyncIterator]();
  let upstreamOver = false;
  try {
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) {
      let events = '';
      for (const event of next.value) {
        for (const chunk of event.chunks) tally.read(chunk);
        const usage = event.usage;
        if (usage !== undefined) tally.read(usageChunk(usage));
        const text = writer.event(event, () => (usage !== undefined ? tally.settleReported() : undefined));
        events += typeof text === 'string' ? text : await text;
      }
      if (events !== '') yield events;
    }
    upstreamOver = true;
    await tally.settle();
    const closing = writer.end?.();
    if (closing) yield closing;
  } catch (error) {
    upstreamOver = true;
    yield writer.failure(options.describeError(error));
  } finally {
    if (!upstreamOver) void iterator.return?.(undefined)?.catch(() => undefined);
    await tally.settle();
  }
}

function usageChunk(usage: NonNullable<NativeEvent['usage']>): UpstreamChatChunk {
  return { id: '', object: 'chat.completion.chunk', created: 0, model: '', choices: [], usage };
}
