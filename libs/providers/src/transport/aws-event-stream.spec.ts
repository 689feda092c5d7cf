// The frames are the emulator's, encoded as Bedrock encodes them (its tests may not import this lib).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { chunkFrame, eventFrame, exceptionFrame } from '../../../../tools/emulator/src/bedrock/event-frames';
import { UpstreamHttpError, UpstreamLimitExceededError, UpstreamProtocolError } from '../upstream.errors';
import { AwsEventStreamParser, awsExceptionStatus } from './aws-event-stream';

describe('AwsEventStreamParser', () => {
  const start = JSON.stringify({ type: 'message_start', message: { id: 'msg_1' } });

  it('unwraps chunk frames to the model event JSON and names other events by their :event-type', () => {
    const parser = new AwsEventStreamParser('bedrock');
    const events = parser.push(Buffer.concat([chunkFrame(start), eventFrame('contentBlockDelta', { contentBlockIndex: 0, delta: { text: 'Hi' } })]));
    expect(events[0]).toEqual({ data: start });
    expect(events[1].event).toBe('contentBlockDelta');
    expect(JSON.parse(events[1].data)).toMatchObject({ contentBlockIndex: 0, delta: { text: 'Hi' } });
    expect(parser.end()).toEqual([]);
  });

  it('reads frames split across reads at every byte, and several per read', () => {
    const frames = Buffer.concat([chunkFrame(start), chunkFrame('{"type":"message_stop"}')]);
    for (let cut = 1; cut < frames.length; cut++) {
      const parser = new AwsEventStreamParser('bedrock');
      const events = [...parser.push(frames.subarray(0, cut)), ...parser.push(frames.subarray(cut))];
      expect(events.map((event) => event.data)).toEqual([start, '{"type":"message_stop"}']);
    }
  });

  it('refuses a frame with a bad CRC as a protocol error', () => {
    const frame = chunkFrame(start);
    frame[frame.length - 6] ^= 0xff;
    expect(() => new AwsEventStreamParser('bedrock').push(frame)).toThrow(UpstreamProtocolError);
  });

  it('refuses a frame past maxEventBytes from its length alone, before its bytes are in', () => {
    const frame = chunkFrame('x'.repeat(2000));
    const parser = new AwsEventStreamParser('bedrock', { maxEventBytes: 1024 });
    expect(() => parser.push(frame.subarray(0, 4))).toThrow(UpstreamLimitExceededError);
  });

  it('turns exception frames into UpstreamHttpError with their status and message', () => {
    const cases: Array<[string, number]> = [
      ['throttlingException', 429],
      ['validationException', 400],
      ['modelStreamErrorException', 502],
      ['serviceUnavailableException', 503],
      ['internalServerException', 500],
      ['modelNotReadyException', 503],
    ];
    for (const [type, status] of cases) {
      const failure = (() => {
        try {
          new AwsEventStreamParser('bedrock').push(exceptionFrame(type, 'reason given'));
        } catch (error) {
          return error;
        }
        return undefined;
      })();
      expect(failure).toBeInstanceOf(UpstreamHttpError);
      expect(failure).toMatchObject({ status, upstreamMessage: `${type}: reason given` });
    }
    expect(awsExceptionStatus('ThrottlingException:http://internal.amazon.com/coral/com.amazon.bedrock/')).toBe(429);
  });

  it('hands out the events read before an exception of the same read, then throws it', () => {
    const parser = new AwsEventStreamParser('bedrock');
    expect(parser.push(Buffer.concat([chunkFrame(start), exceptionFrame('throttlingException', 'slow down')]))).toEqual([{ data: start }]);
    expect(() => parser.push(Buffer.alloc(0))).toThrow(UpstreamHttpError);
  });

  it('refuses a body that ends inside a frame', () => {
    const parser = new AwsEventStreamParser('bedrock');
    parser.push(chunkFrame(start).subarray(0, 20));
    expect(() => parser.end()).toThrow(/ended inside a frame/);
  });
});
