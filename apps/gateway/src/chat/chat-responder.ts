import type { ChatCompletionDto, ChatCompletionRequestDto } from '@igw/contracts';
import type { JsonSource } from '@igw/json';
import type { ServerResponse } from 'node:http';
import { sendJson, type ServedRequest } from '@igw/http';
import { Cancellation } from '@igw/providers';
import type { ChatCall, ChatService, StreamEvents } from './chat.service';
import type { NativeUpstream } from './native-upstream';
import type { RequestHold } from '../limits/request-admission';

/**
 * Another API over the chat pipeline (the Messages API): the ledger's name of the endpoint, and
 * its own shapes of the answer and of the stream's events.
 */
export interface ChatFront {
  endpoint: string;
  answer(completion: ChatCompletionDto): unknown;
  streamEvents: StreamEvents;
  /** The sources that speak the front's own API get the client's request natively (native-upstream.ts). */
  native?: NativeUpstream;
  /**
   * The size the request counts as, when it is not its body's: a Responses request continuing a
   * stored conversation is held and checked against the context as the conversation it sends.
   */
  bodyBytes?: number;
  /** The request's slot and first hold, when the front admitted it before its full cost was known. */
  firstHold?: RequestHold;
  /** The content type of the stream, when it is not server-sent events (Google's streamed JSON array). */
  streamContentType?: string;
  /** What an unstreamed answer waits for before it leaves (the Responses API keeps stored responses); returns the answer to send. */
  beforeAnswer?(answer: unknown): Promise<unknown>;
  /** Whether the response cache may answer the front's requests (it answers chat completions always). */
  cacheable?: boolean;
}

/**
 * Answers a chat request as JSON or as server-sent events. Events are written as they
 * arrive (those of one turn of the event loop together); a client that goes away aborts the
 * upstream call. `messagesJson` is the client's own text of `body.messages`, when the route kept it;
 * `front`, the API the client speaks when it is not chat completions.
 */
export async function respondToChat(
  chat: ChatService,
  body: ChatCompletionRequestDto,
  request: ServedRequest,
  response: ServerResponse,
  messagesJson?: JsonSource,
  front?: ChatFront,
): Promise<void> {
  const cancellation = new Cancellation();
  response.on('close', () => {
    if (!response.writableFinished) cancellation.abort();
  });
  const call: ChatCall = {
    requestId: request.context!.requestId,
    context: request.context,
    auth: request.context!.auth!,
    body,
    messagesJson,
    // The body as read (never its content-length, which a chunked body has not): tool schemas and every other field count.
    bodyBytes: front?.bodyBytes ?? request.context!.bodyBytes!,
    signal: cancellation,
    cacheControl: request.headers['cache-control'],
    cacheable: front === undefined || (front.cacheable === true && !front.beforeAnswer && !front.firstHold),
  };
  if (front) call.endpoint = front.endpoint;
  if (front?.native) call.native = front.native;
  if (front?.firstHold) call.firstHold = front.firstHold;
  if (!body.stream) {
    const beforeAnswer = front?.beforeAnswer;
    if (beforeAnswer === undefined) {
      await chat.complete(
        call,
        (completion) => sendJson(response, 200, front ? front.answer(completion) : completion),
        (native) => sendJson(response, 200, native),
      );
      return;
    }
    let answer: { value: unknown } | undefined;
    await chat.complete(
      call,
      (completion) => (answer = { value: front!.answer(completion) }),
      (native) => (answer = { value: native }),
    );
    if (answer !== undefined) sendJson(response, 200, await beforeAnswer(answer.value));
    return;
  }
  const events = await chat.openStream(call, front?.streamEvents);
  await sendEventStream(events, response, cancellation, front?.streamContentType);
}

/** Answers with a stream of events (a 200 of text/event-stream unless the front streams another type, as Google's JSON array), written as writeEvents does; for every streaming route. */
export async function sendEventStream(events: AsyncGenerator<string>, response: ServerResponse, cancellation: Cancellation, contentType = 'text/event-stream; charset=utf-8'): Promise<void> {
  response.statusCode = 200;
  response.setHeader('content-type', contentType);
  response.setHeader('cache-control', 'no-cache, no-transform');
  response.setHeader('connection', 'keep-alive');
  response.setHeader('x-accel-buffering', 'no');
  response.socket?.setNoDelay(true);
  await writeEvents(events, response, cancellation);
}

/**
 * Writes the events that arrive in one turn of the event loop as one write at its end (the
 * last ones with the end of the answer), the head with the first: each write is a system
 * call, whose cost on a loopback or LAN socket dwarfs translating an event. When no event is
 * ready in the turn the stream opened, the head leaves alone, so a client sees the 200 while
 * the upstream thinks. A client that reads slowly holds the reading back.
 */
async function writeEvents(events: AsyncGenerator<string>, response: ServerResponse, cancellation: Cancellation): Promise<void> {
  const headTimer = setImmediate(() => response.flushHeaders());
  let pending = '';
  let flushScheduled = false;
  let clientFull = false;
  const flush = () => {
    flushScheduled = false;
    if (pending === '' || response.writableEnded) return;
    if (!response.write(pending)) clientFull = true;
    pending = '';
  };
  try {
    for await (const event of events) {
      if (cancellation.aborted) break;
      pending += event;
      if (!flushScheduled) {
        flushScheduled = true;
        clearImmediate(headTimer);
        // After every promise of this turn has run: the events read from the same upstream data are all in.
        process.nextTick(flush);
      }
      if (clientFull) {
        flush();
        clientFull = false;
        // The write that filled the buffer may have been a turn ago: it may have drained since.
        if (response.writableNeedDrain) await drainedOrClosed(response);
      }
    }
  } finally {
    clearImmediate(headTimer);
    // Settles the stream's usage even when the client left half-way.
    await events.return(undefined);
    if (!response.writableEnded) {
      const rest = pending;
      pending = '';
      if (rest === '') response.end();
      else response.end(rest);
    }
  }
}

/**
 * Waits for the client to take what was written, or to leave. Both listeners go when either
 * fires: a slow reader waits here many times over one stream, and listeners left behind
 * would pile up on the response (Node warns past ten).
 */
function drainedOrClosed(response: ServerResponse): Promise<void> {
  if (response.destroyed) return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      response.off('drain', done);
      response.off('close', done);
      resolve();
    };
    response.on('drain', done);
    response.on('close', done);
  });
}
