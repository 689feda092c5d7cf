import type { ChatCompletionRequestDto } from '@igw/contracts';
import type { ServerResponse } from 'node:http';
import { sendJson, type ServedRequest } from '@igw/platform';
import { Cancellation } from '@igw/providers';
import type { ChatCall, ChatService } from './chat.service';

/**
 * Answers a chat request as JSON or as server-sent events. Events are written as they
 * arrive (no buffering); a client that goes away aborts the upstream call.
 */
export async function respondToChat(chat: ChatService, body: ChatCompletionRequestDto, request: ServedRequest, response: ServerResponse): Promise<void> {
  const cancellation = new Cancellation();
  response.on('close', () => {
    if (!response.writableFinished) cancellation.abort();
  });
  const call: ChatCall = {
    requestId: request.context!.requestId,
    context: request.context,
    auth: request.context!.auth!,
    body,
    bodyBytes: Number(request.headers['content-length']) || Buffer.byteLength(JSON.stringify(body.messages)),
    signal: cancellation,
  };
  if (!body.stream) {
    await chat.complete(call, (completion) => sendJson(response, 200, completion));
    return;
  }
  const events = await chat.openStream(call);
  response.statusCode = 200;
  response.setHeader('content-type', 'text/event-stream; charset=utf-8');
  response.setHeader('cache-control', 'no-cache, no-transform');
  response.setHeader('connection', 'keep-alive');
  response.setHeader('x-accel-buffering', 'no');
  response.socket?.setNoDelay(true);
  response.flushHeaders();
  let first = true;
  try {
    for await (const event of events) {
      if (cancellation.aborted) break;
      const writable = response.write(event);
      if (first) {
        // Node corks the socket on a write until the next tick, so the events of one upstream
        // read leave together; the first one should not wait for the others to be translated.
        first = false;
        response.socket?.uncork();
      }
      if (!writable) await drainedOrClosed(response);
    }
  } finally {
    // Settles the stream's usage even when the client left half-way.
    await events.return(undefined);
    if (!response.writableEnded) response.end();
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
