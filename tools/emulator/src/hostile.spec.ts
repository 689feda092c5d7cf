import { request, type IncomingHttpHeaders } from 'node:http';
import { parseModelControls } from './controls';
import { startEmulator, type RunningEmulator } from './emulator';

let emulator: RunningEmulator;

beforeAll(async () => {
  emulator = await startEmulator({ port: 0 });
});

afterAll(async () => {
  await emulator.close();
});

interface Read {
  status: number;
  headers: IncomingHttpHeaders;
  /** What was read (at most `maxBytes`, then the connection was closed). */
  text: string;
  bytes: number;
  /** True if the answer ended before `maxBytes`. */
  ended: boolean;
}

/** POSTs `body` and reads the answer up to `maxBytes`, then hangs up. */
function readSome(path: string, body: unknown, maxBytes: number): Promise<Read> {
  return new Promise((resolve, reject) => {
    const outgoing = request(`${emulator.url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' } }, (response) => {
      const chunks: Buffer[] = [];
      let bytes = 0;
      const finish = (ended: boolean) => resolve({ status: response.statusCode ?? 0, headers: response.headers, text: Buffer.concat(chunks).toString(), bytes, ended });
      response.on('data', (chunk: Buffer) => {
        if (bytes >= maxBytes) return;
        chunks.push(chunk);
        bytes += chunk.length;
        if (bytes >= maxBytes) {
          outgoing.destroy();
          finish(false);
        }
      });
      response.on('end', () => finish(true));
      response.on('error', () => undefined);
    });
    outgoing.on('error', (error) => ((error as NodeJS.ErrnoException).code === 'ECONNRESET' ? undefined : reject(error)));
    outgoing.end(JSON.stringify(body));
  });
}

/** The emulator's record of the newest request to `path`, once it noticed the client leave. */
async function closedEarly(path: string): Promise<boolean> {
  for (let attempt = 0; attempt < 100; attempt++) {
    const entry = [...emulator.requests].reverse().find((recorded) => recorded.path === path);
    if (entry?.closedEarly) return true;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return false;
}

const MIB = 1024 * 1024;
const chat = (model: string, stream = false) => ({ model, stream, messages: [{ role: 'user', content: 'hi' }] });

/** The `data:` payloads of the complete events in an SSE text. */
const dataOf = (text: string) =>
  text
    .split('\n\n')
    .slice(0, -1)
    .map((frame) => frame.split('\n').find((line) => line.startsWith('data: '))?.slice(6));

describe('hostile answer controls in the model name', () => {
  it('parses them with the other controls, ignoring invalid sizes', () => {
    expect(parseModelControls('m@huge-body=384')).toEqual({ model: 'm', hugeBodyMb: 384 });
    expect(parseModelControls('m@huge-line=9@chunk-delay=5')).toEqual({ model: 'm', hugeLineMb: 9, chunkDelayMs: 5 });
    expect(parseModelControls('m@endless-stream@no-usage')).toEqual({ model: 'm', endlessStream: true, noUsage: true });
    expect(parseModelControls('m@status=503@endless-error')).toEqual({ model: 'm', status: 503, endlessError: true });
    expect(parseModelControls('m@huge-body=0')).toEqual({ model: 'm' });
    expect(parseModelControls('m@huge-body=big')).toEqual({ model: 'm' });
    expect(parseModelControls('m@huge-body=999999')).toEqual({ model: 'm', hugeBodyMb: 65536 });
  });

  it('@huge-body answers 200 JSON of that many MiB, without a content-length', async () => {
    const read = await readSome('/v1/chat/completions', chat('gpt-4o-mini@huge-body=2'), 10 * MIB);
    expect(read.status).toBe(200);
    expect(read.ended).toBe(true);
    expect(read.headers['content-length']).toBeUndefined();
    const body = JSON.parse(read.text) as { object: string; padding: string };
    expect(body.object).toBe('padding');
    expect(body.padding).toHaveLength(2 * MIB);
  });

  it('@huge-body stops writing when the client hangs up, and records it', async () => {
    const read = await readSome('/v1/chat/completions', chat('gpt-4o-mini@huge-body=4096'), MIB);
    expect(read.ended).toBe(false);
    expect(await closedEarly('/v1/chat/completions')).toBe(true);
  });

  it('@huge-line sends one content event, one data line of that many MiB, then ends the stream', async () => {
    const read = await readSome('/v1/chat/completions', chat('gpt-4o-mini@huge-line=1', true), 10 * MIB);
    expect(read.ended).toBe(true);
    expect(read.headers['content-type']).toMatch(/^text\/event-stream/);
    const [first, giant, ...rest] = dataOf(read.text);
    expect(JSON.parse(first!).choices[0].delta).toEqual({ role: 'assistant', content: 'more ' });
    expect(giant).toHaveLength(MIB + 2);
    expect(rest).toEqual([]);
  });

  it.each([
    ['OpenAI', '/v1/chat/completions', chat('gpt-4o-mini@endless-stream@chunk-delay=1', true), (data: string) => JSON.parse(data).choices[0].delta.content],
    [
      'Anthropic',
      '/v1/messages',
      { model: 'claude-sonnet-4-5@endless-stream@chunk-delay=1', max_tokens: 10, stream: true, messages: [{ role: 'user', content: 'hi' }] },
      (data: string) => JSON.parse(data).delta?.text,
    ],
    [
      'Gemini',
      '/v1beta/models/gemini-2.5-flash@endless-stream@chunk-delay=1:streamGenerateContent?alt=sse',
      { contents: [{ role: 'user', parts: [{ text: 'hi' }] }] },
      (data: string) => JSON.parse(data).candidates[0].content.parts[0].text,
    ],
  ])('@endless-stream streams %s content events until the client hangs up', async (_format, path, body, textOf) => {
    const read = await readSome(path, body, 32 * 1024);
    expect(read.status).toBe(200);
    expect(read.ended).toBe(false);
    const texts = dataOf(read.text).map((data) => textOf(data!));
    expect(texts.filter((text) => text === 'more ').length).toBeGreaterThan(20);
    expect(await closedEarly(path.replace(/%40/g, '@'))).toBe(true);
  });

  it('@endless-error answers the status asked (else 500) with a body that never ends', async () => {
    const failing = await readSome('/v1/chat/completions', chat('gpt-4o-mini@endless-error'), 2 * MIB);
    expect(failing.status).toBe(500);
    expect(failing.ended).toBe(false);
    expect(failing.text.startsWith('{"error":{"message":"emulated endless error xxx')).toBe(true);
    expect(await closedEarly('/v1/chat/completions')).toBe(true);
    const overloaded = await readSome('/v1/messages', { model: 'claude-sonnet-4-5@status=529@endless-error', max_tokens: 5, messages: [] }, 64 * 1024);
    expect(overloaded.status).toBe(529);
    expect(overloaded.ended).toBe(false);
  });
});
