// AWS event-stream frames as Bedrock streams them (`application/vnd.amazon.eventstream`),
// encoded with @smithy/eventstream-codec, so their prelude and CRCs are the real ones.
import { EventStreamCodec } from '@smithy/eventstream-codec';
import { fromUtf8, toUtf8 } from '@smithy/util-utf8';
import { randomId } from '../util';

const codec = new EventStreamCodec(toUtf8, fromUtf8);

const stringHeader = (value: string) => ({ type: 'string' as const, value });

/** An event frame: `:event-type` `type`, a JSON payload (padded with `p`, as Bedrock pads its events). */
export function eventFrame(type: string, payload: Record<string, unknown>): Buffer {
  const body = fromUtf8(JSON.stringify({ ...payload, p: randomId(8) }));
  return Buffer.from(codec.encode({ headers: { ':event-type': stringHeader(type), ':content-type': stringHeader('application/json'), ':message-type': stringHeader('event') }, body }));
}

/** InvokeModelWithResponseStream's frame for one of the model's own events: `chunk` with the event's JSON as base64 `bytes`. */
export function chunkFrame(eventJson: string): Buffer {
  return eventFrame('chunk', { bytes: Buffer.from(eventJson, 'utf8').toString('base64') });
}

/** An exception frame (`:message-type: exception`), e.g. `throttlingException`, with its message. */
export function exceptionFrame(type: string, message: string): Buffer {
  const body = fromUtf8(JSON.stringify({ message }));
  return Buffer.from(codec.encode({ headers: { ':exception-type': stringHeader(type), ':content-type': stringHeader('application/json'), ':message-type': stringHeader('exception') }, body }));
}

/** The messages of Bedrock's stream exceptions, by their `:exception-type`. */
export const STREAM_EXCEPTION_MESSAGES: Readonly<Record<string, string>> = {
  throttlingException: 'Too many requests, please wait before trying again.',
  modelNotReadyException: 'Model is not ready to serve inference requests.',
  serviceUnavailableException: 'Bedrock is unable to process your request.',
  internalServerException: 'The server encountered an error processing your request.',
  validationException: 'The input request is invalid.',
  modelStreamErrorException: 'The model stream ended with an error.',
};
