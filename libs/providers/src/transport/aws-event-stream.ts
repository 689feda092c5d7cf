import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { UpstreamHttpError, UpstreamLimitExceededError, UpstreamProtocolError } from '../upstream.errors';
import type { SseEvent } from './sse';
import { describeBytes } from './upstream-limits';

// AWS's binary event stream (`application/vnd.amazon.eventstream`), what Bedrock streams in:
// frames of a 4-byte total length, a 4-byte headers length, a CRC of those 8 bytes, headers,
// payload and a CRC of the whole frame. Each frame is read into the SseEvent the chat and native
// readers already take, so a Bedrock stream is read by the same code as an SSE one.

/** The least a frame holds: its prelude (12 bytes) and its closing CRC (4). */
const MINIMUM_FRAME_BYTES = 16;

/** Bedrock's exception types (`:exception-type`, lower camel case in streams) and the status each stands for. */
const EXCEPTION_STATUS: Readonly<Record<string, number>> = {
  throttlingexception: 429,
  servicequotaexceededexception: 429,
  validationexception: 400,
  accessdeniedexception: 403,
  resourcenotfoundexception: 404,
  modeltimeoutexception: 504,
  modelstreamerrorexception: 502,
  modelerrorexception: 502,
  internalserverexception: 500,
  serviceunavailableexception: 503,
  modelnotreadyexception: 503,
};

/**
 * The HTTP status an AWS exception type stands for (`ThrottlingException` → 429); 500 for one not
 * known. Also read as `x-amzn-ErrorType` writes it: `ThrottlingException:http://…` or `aws#ThrottlingException`.
 */
export function awsExceptionStatus(type: string): number {
  return EXCEPTION_STATUS[type.split(':')[0].replace(/^.*#/, '').toLowerCase()] ?? 500;
}

export interface AwsEventStreamOptions {
  /** The most bytes one frame may hold; a longer one is refused from its length alone, before it is buffered. */
  maxEventBytes?: number;
}

/**
 * Parses an AWS event stream incrementally, with SseParser's shape: `push` takes the next piece
 * of the body and returns the events of the frames it completed (a frame may be split across
 * pieces, a piece may hold several). Each frame is CRC-checked by @smithy/eventstream-codec.
 * An event frame becomes `{event: its :event-type, data: its payload}`, except InvokeModel's
 * `chunk` frames, whose `{"bytes": base64}` payload is unwrapped to the model's own event JSON.
 * An exception frame throws UpstreamHttpError with its status and message; events of the same
 * piece read before a failure are returned first, and the failure thrown by the next call.
 */
export class AwsEventStreamParser {
  private readonly codec = new EventStreamCodec(toUtf8, fromUtf8);
  private readonly maxEventBytes: number;
  private pieces: Uint8Array[] = [];
  private buffered = 0;
  private failure: Error | undefined;

  constructor(
    private readonly provider: string,
    options: AwsEventStreamOptions = {},
  ) {
    this.maxEventBytes = options.maxEventBytes ?? Infinity;
  }

  /** The events of the frames this piece completed. Throws UpstreamLimitExceededError, UpstreamProtocolError or UpstreamHttpError. */
  push(piece: Uint8Array | string): SseEvent[] {
    if (this.failure) throw this.failure;
    const bytes = typeof piece === 'string' ? Buffer.from(piece, 'utf8') : piece;
    if (bytes.length > 0) {
      this.pieces.push(bytes);
      this.buffered += bytes.length;
    }
    const events: SseEvent[] = [];
    try {
      for (let frame = this.nextFrame(); frame !== undefined; frame = this.nextFrame()) {
        const event = this.eventOf(frame);
        if (event !== undefined) events.push(event);
      }
    } catch (error) {
      this.failure = error as Error;
      this.pieces = [];
      this.buffered = 0;
      if (events.length === 0) throw error;
    }
    return events;
  }

  /** At the end of the body: nothing may be left of an unfinished frame. */
  end(): SseEvent[] {
    if (this.failure) throw this.failure;
    if (this.buffered > 0) throw new UpstreamProtocolError(this.provider, `the event stream ended inside a frame (${this.buffered} bytes left over)`);
    return [];
  }

  /** The next whole frame, taken from the buffer; undefined until all its bytes are in. */
  private nextFrame(): Uint8Array | undefined {
    if (this.buffered < 4) return undefined;
    const head = this.joined();
    const total = new DataView(head.buffer, head.byteOffset, head.byteLength).getUint32(0, false);
    if (total > this.maxEventBytes) {
      throw new UpstreamLimitExceededError(this.provider, `stream from ${this.provider} sent an event past the gateway's limit of ${describeBytes(this.maxEventBytes)}`, true);
    }
    if (total < MINIMUM_FRAME_BYTES) throw new UpstreamProtocolError(this.provider, `an event stream frame declares ${total} bytes, fewer than a frame holds`);
    if (this.buffered < total) return undefined;
    const frame = head.subarray(0, total);
    const rest = head.subarray(total);
    this.pieces = rest.length > 0 ? [rest] : [];
    this.buffered = rest.length;
    return frame;
  }

  /** The buffered pieces as one array (joined once a frame needs more than one piece). */
  private joined(): Uint8Array {
    if (this.pieces.length > 1) this.pieces = [Buffer.concat(this.pieces, this.buffered)];
    return this.pieces[0];
  }

  private eventOf(frame: Uint8Array): SseEvent | undefined {
    let message: ReturnType<EventStreamCodec['decode']>;
    try {
      message = this.codec.decode(frame);
    } catch (error) {
      throw new UpstreamProtocolError(this.provider, `an event stream frame is corrupt (${(error as Error).message})`);
    }
    const header = (name: string): string | undefined => {
      const value = message.headers[name]?.value;
      return typeof value === 'string' ? value : undefined;
    };
    const payload = toUtf8(message.body);
    const messageType = header(':message-type') ?? 'event';
    if (messageType === 'exception') {
      const type = header(':exception-type') ?? 'unknownException';
      throw new UpstreamHttpError(this.provider, awsExceptionStatus(type), `${type}: ${messageOf(payload)}`);
    }
    if (messageType === 'error') {
      const code = header(':error-code') ?? 'UnknownError';
      throw new UpstreamHttpError(this.provider, awsExceptionStatus(code), `${code}: ${header(':error-message') ?? messageOf(payload)}`);
    }
    const eventType = header(':event-type');
    if (eventType === 'chunk') return { data: chunkBytes(this.provider, payload) };
    return eventType === undefined ? { data: payload } : { event: eventType, data: payload };
  }
}

/** InvokeModelWithResponseStream's `chunk` payload `{"bytes": base64}`, decoded to the model's event text. */
function chunkBytes(provider: string, payload: string): string {
  let bytes: unknown;
  try {
    bytes = (JSON.parse(payload) as { bytes?: unknown }).bytes;
  } catch {
    bytes = undefined;
  }
  if (typeof bytes !== 'string') throw new UpstreamProtocolError(provider, 'a chunk event carries no base64 `bytes`');
  return Buffer.from(bytes, 'base64').toString('utf8');
}

/** The `message` (or `Message`) of an exception payload, else its text. */
function messageOf(payload: string): string {
  try {
    const body = JSON.parse(payload) as { message?: unknown; Message?: unknown };
    const message = body.message ?? body.Message;
    if (typeof message === 'string' && message !== '') return message;
  } catch {
    // not JSON: the text itself
  }
  return payload.slice(0, 500) || 'no error message';
}
