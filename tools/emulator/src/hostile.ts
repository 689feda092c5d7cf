// Hostile answers (controls.ts: `@huge-body=<MB>`, `@huge-line=<MB>`, `@endless-stream`,
// `@endless-error`): what a provider gone wrong may send, for proving that a client bounds
// what it reads. Each answer is written as the client takes it (backpressure respected) from
// one shared piece of padding, so the emulator itself stays small however large the answer;
// it stops as soon as the client leaves.
import type { RequestContext } from './context';
import type { RequestControls } from './controls';
import { isRecord } from './util';

const MIB = 1024 * 1024;
/** One piece of padding, written again and again. */
const PADDING = Buffer.alloc(64 * 1024, 'x');
/** The pause between endless events when no chunk delay is set: a stream, not a flood. */
const DEFAULT_ENDLESS_PACE_MS = 10;

/** Whether the request asks for a hostile answer (then `answerHostile` answers it). */
export function wantsHostileAnswer(controls: RequestControls): boolean {
  return controls.endlessError === true || controls.hugeBodyMb !== undefined || controls.hugeLineMb !== undefined || controls.endlessStream === true;
}

/** Answers with the hostile answer the controls ask for; `status` is an emulated error status, if any. */
export async function answerHostile(ctx: RequestContext, controls: RequestControls, status: number | undefined): Promise<void> {
  if (controls.endlessError) return endlessError(ctx, status ?? 500);
  if (controls.hugeBodyMb !== undefined) return hugeBody(ctx, controls.hugeBodyMb);
  if (controls.hugeLineMb !== undefined) return hugeLine(ctx, controls.hugeLineMb);
  return endlessStream(ctx);
}

/** A 200 JSON answer of `mb` MiB of padding, without a content-length (so only counting reveals its size). */
async function hugeBody(ctx: RequestContext, mb: number): Promise<void> {
  const res = ctx.res;
  if (ctx.closed || res.headersSent) return;
  res.writeHead(200, { 'content-type': 'application/json', 'x-request-id': ctx.requestId });
  if (!(await write(ctx, '{"object":"padding","padding":"'))) return;
  if (!(await pad(ctx, mb * MIB))) return;
  res.end('"}');
}

/** An error status whose body (the start of the format's usual JSON) never ends. */
async function endlessError(ctx: RequestContext, status: number): Promise<void> {
  const res = ctx.res;
  if (ctx.closed || res.headersSent) return;
  res.writeHead(status, { 'content-type': 'application/json', 'x-request-id': ctx.requestId });
  if (!(await write(ctx, '{"error":{"message":"emulated endless error '))) return;
  await pad(ctx, Infinity);
}

/** One ordinary content event, then a `data:` line of `mb` MiB, then the stream's end. */
async function hugeLine(ctx: RequestContext, mb: number): Promise<void> {
  const frames = contentFrames(ctx);
  if (!ctx.startStream()) return;
  for (const frame of [...frames.opening, frames.content(0)]) {
    if (!(await ctx.event(frame.data, frame.event))) return;
  }
  if (!(await write(ctx, 'data: "'))) return;
  if (!(await pad(ctx, mb * MIB))) return;
  if (!(await write(ctx, '"\n\n'))) return;
  ctx.endStream();
}

/** Content events in the format's shape, one per pace, until the client leaves. */
async function endlessStream(ctx: RequestContext): Promise<void> {
  const frames = contentFrames(ctx);
  if (!ctx.startStream()) return;
  for (const frame of frames.opening) {
    if (!(await ctx.event(frame.data, frame.event))) return;
  }
  for (let index = 0; ; index++) {
    const frame = frames.content(index);
    if (!(await ctx.event(frame.data, frame.event))) return;
    if (ctx.chunkDelayMs === 0 && !(await ctx.sleep(DEFAULT_ENDLESS_PACE_MS))) return;
  }
}

interface Frame {
  event?: string;
  data: string;
}

/** The events that open a stream in the request's format, and its `index`th word of content. */
function contentFrames(ctx: RequestContext): { opening: Frame[]; content(index: number): Frame } {
  const model = isRecord(ctx.body) && typeof ctx.body.model === 'string' ? ctx.body.model : 'emulated';
  const word = 'more ';
  switch (ctx.format.name) {
    case 'anthropic':
      return {
        opening: [
          {
            event: 'message_start',
            data: JSON.stringify({
              type: 'message_start',
              message: { id: `msg_${ctx.requestId}`, type: 'message', role: 'assistant', model, content: [], stop_reason: null, stop_sequence: null, usage: { input_tokens: 10, output_tokens: 1 } },
            }),
          },
          { event: 'content_block_start', data: JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }) },
        ],
        content: () => ({ event: 'content_block_delta', data: JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text: word } }) }),
      };
    case 'gemini':
      return {
        opening: [],
        content: () => ({ data: JSON.stringify({ candidates: [{ content: { role: 'model', parts: [{ text: word }] }, index: 0 }], modelVersion: model }) }),
      };
    default: {
      const created = Math.floor(Date.now() / 1000);
      const chunk = (delta: Record<string, unknown>) =>
        JSON.stringify({ id: `chatcmpl-${ctx.requestId}`, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, logprobs: null, finish_reason: null }] });
      return { opening: [], content: (index) => ({ data: chunk(index === 0 ? { role: 'assistant', content: word } : { content: word }) }) };
    }
  }
}

/** Writes `bytes` of padding as the client takes it; false once the client is gone. */
async function pad(ctx: RequestContext, bytes: number): Promise<boolean> {
  for (let left = bytes, piece = 1; left > 0; left -= PADDING.length, piece++) {
    if (!(await write(ctx, left >= PADDING.length ? PADDING : PADDING.subarray(0, left)))) return false;
    // A fast reader may take every write at once: let the loop see a close now and then.
    if (piece % 16 === 0) await new Promise<void>((resolve) => setImmediate(resolve));
  }
  return true;
}

/** One write; waits for the socket to drain when it is full. False once the client is gone. */
function write(ctx: RequestContext, chunk: Buffer | string): Promise<boolean> | boolean {
  if (ctx.closed) return false;
  // After the events of this turn, which wait to be written together.
  ctx.flushEvents();
  if (ctx.res.write(chunk)) return true;
  return new Promise<boolean>((resolve) => {
    const done = (): void => {
      ctx.res.off('drain', done);
      ctx.res.off('close', done);
      resolve(!ctx.closed);
    };
    ctx.res.on('drain', done);
    ctx.res.on('close', done);
  });
}
